"""What the link-batch fault sections (issue 24) share: the demo project they link with, a desk project
to import into, input shards, and the `curalink` command run in its own process.

The sections judge outcomes from what they observe (files outside the folder, processes alive, rows in
the database), never from the product's own return values alone.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
CLI_TIMEOUT_S = 300


@dataclass
class BatchSetup:
    """The project link-batch links with and a desk (demo KB, no documents) import-linked writes into."""

    work: Path
    project: Path
    desk: Path

    def fresh_desk(self, to: Path) -> Path:
        shutil.copytree(self.desk, to, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
        return to


def child_env() -> dict[str, str]:
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env["COLUMNS"] = "1000"  # one message, one line (rich wraps at the terminal's width)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return env


def cli(*args: str | Path, timeout: float = CLI_TIMEOUT_S) -> subprocess.CompletedProcess:
    """`curalink ARGS` in its own process (stdout and stderr captured)."""
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *map(str, args)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=child_env(),
    )


def first_error_line(done: subprocess.CompletedProcess) -> str:
    """The error line a user reads: the `error:` line, else the first problem naming a file, else the
    last non-empty line of stderr, else of stdout."""
    lines = [line.strip() for line in (done.stderr + "\n" + done.stdout).splitlines()]
    for wanted in ("error:", "/"):
        found = [line for line in lines if line.startswith(wanted)]
        if found:
            return found[0]
    for stream in (done.stderr, done.stdout):
        lines = [line.strip() for line in stream.splitlines() if line.strip()]
        if lines:
            return lines[-1]
    return ""


def has_traceback(done: subprocess.CompletedProcess) -> bool:
    return "Traceback (most recent call last)" in done.stderr + done.stdout


def demo_documents():
    from app.resources import demo_dir
    from core.formats import read_corpus

    return list(read_corpus(demo_dir() / "abstracts.pubtator", "pubtator"))


def build_setup(work: Path, *, train_seconds: float = 2.0, template: Path | None = None) -> BatchSetup:
    """The demo project (`template` or CURALINK_DEMO_TEMPLATE names a built one to copy) and the desk,
    built once."""
    from app.demo import build_demo_project
    from app.resources import demo_dir

    work.mkdir(parents=True, exist_ok=True)
    project, desk = work / "project", work / "desk"
    if not (project / "curalink.db").is_file() or not (work / "setup.done").is_file():
        shutil.rmtree(project, ignore_errors=True)
        shutil.rmtree(desk, ignore_errors=True)
        template = template or Path(os.environ.get("CURALINK_DEMO_TEMPLATE") or work / "none")
        if (template / "curalink.db").is_file():
            shutil.copytree(template, project, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
        else:
            build_demo_project(project, train_seconds=train_seconds).close()
        for args in (("init", desk), ("-p", desk, "kb", "import", demo_dir() / "kb.tsv", "--format", "tsv")):
            done = cli(*args)
            if done.returncode != 0:
                raise RuntimeError(f"curalink {' '.join(map(str, args))}: {first_error_line(done)}")
        (work / "setup.done").write_text("ok\n", encoding="utf-8")
    return BatchSetup(work, project, desk)


def snapshot(folder: Path) -> dict[str, tuple]:
    """Every entry under `folder` (not following links): kind, size, mtime and content hash."""
    state: dict[str, tuple] = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        digest = (
            hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() and not path.is_symlink() else ""
        )
        kind = "link" if path.is_symlink() else ("dir" if path.is_dir() else "file")
        state[str(path.relative_to(folder))] = (kind, info.st_size, info.st_mtime_ns, digest)
    return state


def touched(before: dict[str, tuple], after: dict[str, tuple]) -> list[str]:
    """Entries created, removed or changed between two snapshots."""
    return sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))


def stored_documents(project: Path) -> dict[str, tuple]:
    """doc id -> (text, mentions) as the project holds them."""
    from core.store import Project

    with Project.open(project) as opened:
        return {
            d.doc_id: (d.text, tuple((m.start, m.end, m.text, m.type) for m in d.mentions))
            for d in opened.documents.documents()
        }
