"""`curalink -p P bench link-memory`: the peak memory of `link --detect` on a copy of the project, name
index rebuilt (issue 30: with the MeSH 2024 recipe, about 300,000 names, at most 1.5 GB).

The project is copied (SQLite backup, models) to a temporary folder without its name index, so the run
builds the index as a first `link --detect` after a KB import does, and the user's project is never
changed. `link --detect` runs as a child process (`python -m app.cli`), its resident memory sampled
every 0.1 s: the linking process's own peak, and the peak of it and its encoding workers together.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import psutil

from core.errors import CuralinkError

TARGET_MB = 1536
DATABASE = "curalink.db"


def copy_without_index(project: Path, into: Path) -> Path:
    """A copy of the project's database (consistent, through SQLite's backup) and models, no index."""
    copy = into / project.name
    copy.mkdir()
    source = sqlite3.connect(f"file:{project / DATABASE}?mode=ro", uri=True)
    target = sqlite3.connect(copy / DATABASE)
    try:
        source.backup(target)
    finally:
        source.close()
        target.close()
    for entry in project.iterdir():
        if entry.is_dir() and entry.name not in ("index", "logs"):
            shutil.copytree(entry, copy / entry.name)
    return copy


def _sample(process: psutil.Popen) -> tuple[int, int]:
    """(peak RSS of the process, peak RSS of it and its children) until it exits, in bytes."""
    own = total = 0
    while process.poll() is None:
        try:
            rss = process.memory_info().rss
            children = sum(c.memory_info().rss for c in process.children(recursive=True))
        except psutil.Error:
            break
        own, total = max(own, rss), max(total, rss + children)
        time.sleep(0.1)
    return own, total


def link_memory(project: Path, link_args: Sequence[str] = ("--detect",)) -> dict:
    """Peak memory of `link ARGS` on a copy of `project` whose name index is rebuilt."""
    if not (project / DATABASE).is_file():
        raise CuralinkError(f"{project}: not a Curalink project (no {DATABASE})")
    with tempfile.TemporaryDirectory(prefix="curalink-link-memory-") as scratch:
        copy = copy_without_index(project, Path(scratch))
        command = [sys.executable, "-m", "app.cli", "-p", str(copy), "link", *link_args]
        started = time.perf_counter()
        process = psutil.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ}
        )
        own, total = _sample(process)
        output = process.stdout.read() if process.stdout else ""
        seconds = time.perf_counter() - started
    if process.returncode != 0:
        raise CuralinkError(f"link {' '.join(link_args)} failed on the copy: {output.strip()[-500:]}")
    last = [line for line in output.splitlines() if line.startswith(("linked", "detected"))]
    return {
        "command": "link " + " ".join(link_args),
        "peak_mb": round(own / 2**20),
        "peak_with_workers_mb": round(total / 2**20),
        "target_mb": TARGET_MB,
        "met": own <= TARGET_MB * 2**20,
        "seconds": round(seconds, 1),
        "said": last,
    }
