"""Full-disk trials: the project on a small tmpfs, filled up (all of it, or all but a little so the disk
fills during the work), then an import, a link, a training run or a desk decision.

Each must fail with a clear error (no traceback, no SQL; it says the disk is full), leave nothing
committed lost and the project usable once space is freed, and keep imports all or nothing. Mounting a
tmpfs needs root; elsewhere the section is skipped (and says so).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench.faults.checks import leftovers, lost_decisions, model_health, one_line_error, read_store, usable
from bench.faults.crash import CHECK_DOCUMENT, _partial, operation_args
from bench.faults.processes import Child, child_command, run_child
from bench.faults.workload import Workload, copy_project
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

# (operation, KiB left free when it starts): 0 = full from the start (the project cannot even be opened:
# SQLite needs 32 KiB for the WAL index); more = it opens, then the disk fills during the work.
TRIALS = (
    ("corpus-import", 0),
    ("corpus-import", 256),
    ("kb-import", 0),
    ("kb-import", 256),
    ("link", 0),
    ("link", 160),
    ("train", 0),
    ("train", 2048),
    ("desk-decision", 0),
)
HEADROOM_KB = 8192  # the tmpfs is the project's size plus this, before the filler takes the rest
DISK_WORDS = ("full", "space")  # "disk I/O error" alone does not tell the curator what to do


class Unavailable(Exception):
    """No small file system can be made here."""


@contextmanager
def small_disk(size_kb: int) -> Iterator[Path]:
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("mount"):
        raise Unavailable("mounting a tmpfs needs root")
    mount = Path(tempfile.mkdtemp(prefix="curalink-small-disk-"))
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        mount.rmdir()
        raise Unavailable(f"mount -t tmpfs failed: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
        mount.rmdir()


def fill(filler: Path, leave_kb: int) -> None:
    """Take every free byte of the file system, then give back `leave_kb` KiB."""
    with filler.open("wb", buffering=0) as out:
        for block in (1 << 20, 1 << 12, 1):
            try:
                while True:
                    out.write(b"\0" * block)
            except OSError:
                pass
    if leave_kb:
        size = filler.stat().st_size
        os.truncate(filler, max(0, size - leave_kb * 1024))


@dataclass
class DiskFullTrial:
    operation: str
    free_kb: int
    returncode: int | None = None
    completed: bool = False  # the work fitted in the space left: no fault met
    message: str = ""
    clear_error: bool = False
    traceback: bool = False
    sql: bool = False
    lost: list[str] = field(default_factory=list)
    usable: bool = False
    reason: str = ""
    partial_import: str = ""
    leftovers: list[str] = field(default_factory=list)
    desk: dict = field(default_factory=dict)


def _project_kb(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) // 1024


def run_cli_trial(operation: str, free_kb: int, workload: Workload, train_seconds: float) -> DiskFullTrial:
    trial = DiskFullTrial(operation, free_kb)
    with small_disk(_project_kb(workload.base) + HEADROOM_KB) as mount:
        project = copy_project(workload.base, mount / "project")
        before = read_store(project)
        fill(mount / "filler", free_kb)
        run = run_child(
            child_command(operation, project, *operation_args(operation, workload, 0, train_seconds))
        )
        error = one_line_error(run.stderr, project)
        trial.returncode = run.returncode
        trial.completed = run.returncode == 0
        trial.message, trial.traceback, trial.sql = error["message"], error["traceback"], error["sql"]
        trial.clear_error = (
            run.returncode not in (0, None)
            and not trial.traceback
            and not trial.sql
            and trial.message.startswith("error:")
            and any(word in trial.message.lower() for word in DISK_WORDS)
        )
        (mount / "filler").unlink()
        _judge_after(trial, operation, project, before, run.committed, workload)
    return trial


def run_desk_trial(free_kb: int, workload: Workload) -> DiskFullTrial:
    trial = DiskFullTrial("desk-decision", free_kb)
    with small_disk(_project_kb(workload.base) + HEADROOM_KB) as mount:
        project = copy_project(workload.base, mount / "project")
        before = read_store(project)
        desk = Child([*_desk_command(), "full-disk", str(project)], stdin=True)
        if desk.wait_ready():
            fill(mount / "filler", free_kb)
            desk.send("go")
            stalled = desk.wait_report("stalled", 60) or {}
            (mount / "filler").unlink(missing_ok=True)
            desk.send("retry")
            result = desk.wait_report("result", 60) or {}
            trial.desk = {"stalled": stalled, "after_retry": result}
            trial.message = stalled.get("dialog", "") + ": " + stalled.get("dialog_text", "")
            trial.clear_error = (
                stalled.get("dialog") == "The disk is full"
                and stalled.get("undo") == 0
                and not stalled.get("stored")
                and bool(result.get("stored"))
                and result.get("undo") == 1
            )
        run = desk.finish(120)
        trial.returncode = run.returncode
        trial.traceback = "Traceback (most recent call last)" in run.stderr
        (mount / "filler").unlink(missing_ok=True)
        _judge_after(trial, "desk-decision", project, before, [], workload)
    return trial


def _desk_command() -> list[str]:
    import sys

    return [sys.executable, "-m", "bench.faults.desk"]


def _judge_after(trial: DiskFullTrial, operation: str, project: Path, before, committed, workload) -> None:
    after = read_store(project)
    health = model_health(project, CHECK_DOCUMENT)
    trial.usable, trial.reason = usable(after, health)
    trial.lost = lost_decisions(before.decisions, after.decisions, committed)
    trial.partial_import = _partial(operation, before, after, workload)
    trial.leftovers = leftovers(project)


def disk_full_trials(
    workload: Workload,
    *,
    train_seconds: float = 2.0,
    trials: tuple[tuple[str, int], ...] = TRIALS,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    rows: list[DiskFullTrial] = []
    for number, (operation, free_kb) in enumerate(trials):
        cancel.raise_if_cancelled()
        progress(number, len(trials), f"full disk: {operation}, {free_kb} KiB free")
        try:
            if operation == "desk-decision":
                rows.append(run_desk_trial(free_kb, workload))
            else:
                rows.append(run_cli_trial(operation, free_kb, workload, train_seconds))
        except Unavailable as exc:
            return {"skipped": str(exc), "rows": []}
    progress(len(trials), len(trials), "full disk: done")
    return {
        "trials": len(rows),
        "completed": sum(r.completed for r in rows),
        "clear_errors": sum(r.clear_error for r in rows),
        "tracebacks": sum(r.traceback for r in rows),
        "decisions_lost": sum(len(r.lost) for r in rows),
        "unusable": sum(not r.usable for r in rows),
        "partial_imports": sum(bool(r.partial_import) for r in rows),
        "rows": [asdict(r) for r in rows],
    }
