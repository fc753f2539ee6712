"""Starting the desk (issue 12, part 5): with no writable home the launcher stops with one line naming
the folder, not a traceback; `--smoke` starts the real desk on a project and reports when it is usable
(CI runs the same on the packaged app, packaging/smoke.sh)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _start(args: list[str], env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    """`curalink ARGS` from this checkout in its own process, as the packaged launcher runs it."""
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        cwd=REPO,
        env={**env, "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _clean_env(**changes: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env.pop("HOME", None)
    env.update(changes)
    return env


def _one_error_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    assert "Traceback" not in result.stderr + result.stdout
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_home_that_is_a_file_stops_with_one_line_naming_the_settings_folder(tmp_path):
    # A regular file as HOME: no folder can be made under it, even by root (who ignores permissions).
    home = tmp_path / "home-file"
    home.write_text("not a folder")
    line = _one_error_line(_start([], _clean_env(HOME=str(home))))
    assert line.startswith(f"error: cannot write the settings folder {home}/.config/Curalink: ")
    assert f"HOME={home}" in line and "writable folder" in line


def test_unwritable_data_folder_stops_a_first_start_before_the_demo_build(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    blocked = tmp_path / "data-file"
    blocked.write_text("not a folder")
    env = _clean_env(HOME=str(home), XDG_DATA_HOME=str(blocked))
    line = _one_error_line(_start([], env))
    assert line.startswith(f"error: cannot write the demo project folder {blocked}/curalink: ")
    assert (home / ".config" / "Curalink").is_dir()  # the settings folder itself was fine
    assert not any(tmp_path.glob("**/curalink.db"))  # nothing was built


def test_no_home_at_all_is_one_line_or_a_start(tmp_path):
    """HOME unset: Qt then uses '/', Python the password database; whichever, never a traceback."""
    blocked = tmp_path / "config-file"
    blocked.write_text("not a folder")
    line = _one_error_line(_start([], _clean_env(XDG_CONFIG_HOME=str(blocked))))
    assert line.startswith(f"error: cannot write the settings folder {blocked}/Curalink: ")
    assert "HOME=(unset)" in line


def test_smoke_opens_the_desk_on_a_project_and_reports_when_it_is_usable(demo_template, tmp_path):
    project = tmp_path / "demo"
    shutil.copytree(demo_template, project, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
    home = tmp_path / "home"
    # A project given on the command line needs no data folder: an unwritable one does not stop it.
    blocked = tmp_path / "data-file"
    blocked.write_text("not a folder")
    env = _clean_env(HOME=str(home), XDG_DATA_HOME=str(blocked), OMP_NUM_THREADS="1")
    result = _start(["-p", str(project), "--smoke", "90"], env, timeout=150)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["ok"] is True and report["frozen"] is False
    assert report["title"] == "Curalink — demo"
    assert 0 < report["window_s"] <= report["suggestions_s"] < 90
    assert 0 < report["models_s"] < 90 and report["device"].startswith("retriever: CPU")
    assert (home / ".config" / "Curalink" / "Curalink.conf").is_file()  # the desk kept its settings


def test_smoke_gives_up_after_its_time_with_a_reason(demo_template, tmp_path):
    project = tmp_path / "demo"
    shutil.copytree(demo_template, project, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
    env = _clean_env(HOME=str(tmp_path / "home"), OMP_NUM_THREADS="1")
    result = _start(["-p", str(project), "--smoke", "0.5"], env)
    assert result.returncode == 1
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["ok"] is False and report["problem"].startswith("timed out after 0 s waiting for ")
