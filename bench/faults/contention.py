"""Two writer processes and a desk during a long import (which holds the write lock for all its work).

The writers record decisions through the store's API and, when the lock refuses them, say so and try
again (`--patient`); the desk (the real window, offscreen) decides on one mention after another and
presses Retry when its writer stalls. Afterwards: the import is complete, every committed decision is
stored, every process exited cleanly, each lock message is clear, the desk's undo stack holds exactly
the decisions the store has from it, and the desk's event loop never stalled on the lock.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from bench.faults.checks import lost_decisions, model_health, read_store, usable
from bench.faults.crash import CHECK_DOCUMENT
from bench.faults.processes import Child, ChildRun, child_command
from bench.faults.workload import Workload, copy_project
from core.progress import ProgressCallback, no_progress

DESK_CURATOR = "fault-desk"


def _writer_summary(run: ChildRun) -> dict:
    return {
        "returncode": run.returncode,
        "committed": sum(len(entry["ids"]) for entry in run.committed),
        "lock_messages": len(run.locked),
        "clear_lock_messages": sum("locked by another program" in m for m in run.locked),
        "example": run.locked[0] if run.locked else "",
        "traceback": "Traceback (most recent call last)" in run.stderr,
        "stderr_tail": _tail(run) if run.returncode else "",
    }


def _tail(run: ChildRun, lines: int = 24) -> str:
    """What a failed process said last, from its fatal error or traceback when there is one."""
    kept = [line for line in run.stderr.splitlines() if line.strip() and "propagateSizeHints" not in line]
    starts = [
        i for i, line in enumerate(kept) if line.startswith(("Fatal Python error", "Traceback", "QFATAL"))
    ]
    first = starts[0] if starts else max(0, len(kept) - lines)
    return "\n".join(line for line in kept[first : first + lines] if not line.startswith("Extension modules"))


def contention_trial(
    workload: Workload, *, seconds: float = 25.0, progress: ProgressCallback = no_progress
) -> dict:
    with tempfile.TemporaryDirectory(prefix="curalink-contention-") as scratch:
        project = copy_project(workload.base, Path(scratch) / "project")
        before = read_store(project)
        progress(0, 4, "contention: two writers and a desk start, then a long import")
        writers = [
            Child(
                child_command(
                    "decisions",
                    project,
                    *("--seed", str(number), "--seconds", str(seconds), "--patient", "--pause", "0.05"),
                    *("--curator", f"fault-writer-{number}", "--wait-go"),
                ),
                stdin=True,
            )
            for number in (1, 2)
        ]
        desk = Child(
            [sys.executable, "-m", "bench.faults.desk", "decide", str(project), "--seconds", str(seconds)]
            + ["--curator", DESK_CURATOR, "--wait-go"],
            stdin=True,
        )
        for child in (*writers, desk):
            child.wait_ready()
        importer = Child(child_command("corpus-import", project, "--file", str(workload.long_corpus)))
        importer.wait_ready()
        for child in (*writers, desk):
            child.send("go")
        imported = importer.finish()
        progress(1, 4, "contention: import finished")
        writer_runs = [writer.finish() for writer in writers]
        desk_run = desk.finish()
        progress(2, 4, "contention: checking the store")
        after = read_store(project)
        health = model_health(project, CHECK_DOCUMENT)
        ok, reason = usable(after, health)
        committed = [entry for run in writer_runs for entry in run.committed]
        desk_result = desk_run.reports.get("result", {})
        desk_rows = sum(1 for row in after.decisions.values() if row[3] == DESK_CURATOR)
        shutil.rmtree(project, ignore_errors=True)
    progress(4, 4, "contention: done")
    runs = [imported, *writer_runs, desk_run]
    return {
        "import": {
            "returncode": imported.returncode,
            "seconds": round(imported.seconds, 1),
            "documents_added": after.documents - before.documents,
            "complete": after.documents - before.documents == workload.long_corpus_documents,
        },
        "writers": [_writer_summary(run) for run in writer_runs],
        "desk": {
            **desk_result,
            "returncode": desk_run.returncode,
            "rows_in_store": desk_rows,
            "undo_matches_store": desk_result.get("undo") == desk_rows,
            "traceback": "Traceback (most recent call last)" in desk_run.stderr,
            "stderr_tail": _tail(desk_run) if desk_run.returncode else "",
        },
        "decisions_committed": sum(len(entry["ids"]) for entry in committed) + desk_rows,
        "decisions_lost": len(lost_decisions(before.decisions, after.decisions, committed)),
        "crashes": sum(run.returncode != 0 for run in runs),
        "usable": ok,
        "reason": reason,
    }
