"""Start-up bench of the desk, packaged and from the venv: prints one JSON object.

    .venv/bin/python packaging/bench_startup.py [--project DIR] [--runs 3] [--app dist/curalink/curalink]

For each way of starting (the one-folder build `dist/curalink/curalink`, and `python -m app.cli` from this
checkout) it starts the desk `--runs` times on the same project under X (DISPLAY, else a private Xvfb),
each with a fresh HOME, and reports the median and every run of:
- `window_xdotool_s`: from launch until `xdotool search --name ^Curalink` sees the window (polled every
  20 ms, measured from outside the app);
- `window_s`, `suggestions_s`, `models_s`: the app's own `--smoke` times since its process was created
  (window exposed, first ranked concepts shown, models loaded for new suggestions).
Also the size of dist/curalink. Without --project the packaged CLI builds the demo project first.
Runs are back to back, so all but the first see a warm file cache: "cold" here means a new process.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
POLL_S = 0.02


def folder_size(folder: Path) -> dict:
    """Bytes of every file under `folder` (links not followed), and `du -sh` as a person reads it."""
    total = sum(p.lstat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
    human = subprocess.run(["du", "-sh", str(folder)], capture_output=True, text=True).stdout.split()
    return {"bytes": total, "du_sh": human[0] if human else None}


def window_seen(env: dict) -> bool:
    found = subprocess.run(
        ["xdotool", "search", "--name", "^Curalink"], env=env, capture_output=True, text=True
    )
    return bool(found.stdout.strip())


def start_once(command: list[str], project: Path, env: dict, limit_s: float) -> dict:
    """One start on a fresh HOME: the outside time to the window, and the app's own --smoke report."""
    with tempfile.TemporaryDirectory(prefix="curalink-bench-home-") as home:
        run_env = {**env, "HOME": home}
        started = time.monotonic()
        app = subprocess.Popen(
            [*command, "-p", str(project), "--smoke", str(limit_s)],
            cwd=ROOT,
            env=run_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        outside = None
        while app.poll() is None and time.monotonic() - started < limit_s:
            if window_seen(run_env):
                outside = time.monotonic() - started
                break
            time.sleep(POLL_S)
        out, err = app.communicate(timeout=limit_s + 60)
    lines = out.strip().splitlines()
    report = json.loads(lines[-1]) if lines and lines[-1].startswith("{") else {"ok": False}
    if app.returncode != 0 or not report.get("ok"):
        raise SystemExit(f"{' '.join(command)}: exit {app.returncode}, {report}\n{err[-2000:]}")
    return {"window_xdotool_s": None if outside is None else round(outside, 3), **report}


def summary(runs: list[dict]) -> dict:
    keys = ("window_xdotool_s", "window_s", "suggestions_s", "models_s")
    medians = {
        key: round(statistics.median(r[key] for r in runs), 3)
        for key in keys
        if all(r.get(key) for r in runs)
    }
    return {"median": medians, "runs": [{key: r.get(key) for key in keys} for r in runs]}


def private_display(env: dict) -> subprocess.Popen | None:
    """Start Xvfb when there is no display; the caller stops it."""
    if env.get("DISPLAY"):
        return None
    number = next(n for n in range(91, 200) if not Path(f"/tmp/.X11-unix/X{n}").exists())
    server = subprocess.Popen(
        ["Xvfb", f":{number}", "-screen", "0", "1600x1000x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while not Path(f"/tmp/.X11-unix/X{number}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    env["DISPLAY"] = f":{number}"
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--app", type=Path, default=ROOT / "dist" / "curalink" / "curalink")
    parser.add_argument("--project", type=Path, help="a built project (default: build the demo)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--limit", type=float, default=120.0, help="seconds one start may take")
    args = parser.parse_args(argv)
    if not args.app.is_file():
        raise SystemExit(f"{args.app}: no packaged app (run make package)")
    for tool in ("xdotool", "du"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not installed")
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env.update(OMP_WAIT_POLICY="PASSIVE", QT_QPA_PLATFORM="xcb")
    server = private_display(env)
    try:
        with tempfile.TemporaryDirectory(prefix="curalink-bench-") as scratch:
            project = args.project
            if project is None:
                project = Path(scratch) / "demo"
                subprocess.run(
                    [str(args.app), "demo", "--out", str(project), "--train-seconds", "10"],
                    env={**env, "HOME": scratch},
                    check=True,
                    capture_output=True,
                )
            ways = {"packaged": [str(args.app.resolve())], "venv": [sys.executable, "-m", "app.cli"]}
            result = {
                "dist_size": folder_size(args.app.resolve().parent),
                "project": str(project),
                "cpu_count": os.cpu_count(),
            }
            for name, command in ways.items():
                runs = [start_once(command, project.resolve(), env, args.limit) for _ in range(args.runs)]
                result[name] = summary(runs)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)
    sys.stdout.write(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
