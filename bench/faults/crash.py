"""kill -9 trials: run an operation on a copy of the base project, SIGKILL it at a random moment of its
work, then check that no committed decision is lost and that the project is still usable.

Each operation is first run once to the end (its calibration: how long its work takes from `ready`);
the kills then land uniformly in that span. A decision counts as committed when the store call returned
(the burst prints it right after); decisions stored before the run must all be there too. Imports must be
all or nothing: the documents (or concepts) counted afterwards are those of before or those of a full run.
"""

from __future__ import annotations

import random
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench.faults.checks import leftovers, lost_decisions, model_health, read_store, usable
from bench.faults.processes import ChildRun, child_command, run_child
from bench.faults.workload import DEMO_PMID_BASE, Workload, copy_project
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

OPERATIONS = ("corpus-import", "kb-import", "decisions", "link", "train", "retrain")
CHECK_DOCUMENT = str(DEMO_PMID_BASE + 1)


@dataclass
class CrashTrial:
    operation: str
    kill_after_s: float
    killed: bool
    committed: int = 0  # decisions the child reported committed before the kill
    lost: list[str] = field(default_factory=list)
    usable: bool = True
    reason: str = ""
    partial_import: str = ""
    leftovers: list[str] = field(default_factory=list)


def operation_args(operation: str, workload: Workload, seed: int, train_seconds: float) -> list[str]:
    if operation == "corpus-import":
        return ["--file", str(workload.corpus)]
    if operation == "kb-import":
        return ["--file", str(workload.kb)]
    if operation == "decisions":
        return ["--seed", str(seed), "--count", "100000", "--seconds", "8"]
    if operation in ("train", "retrain"):
        return ["--seconds", str(train_seconds)]
    return []


def _partial(operation: str, before, after, workload: Workload) -> str:
    if operation == "corpus-import" and after.documents not in (
        before.documents,
        before.documents + workload.corpus_documents,
    ):
        return f"{after.documents - before.documents} of {workload.corpus_documents} documents stored"
    if operation == "kb-import" and after.concepts not in (
        before.concepts,
        before.concepts + workload.kb_concepts,
    ):
        return f"{after.concepts - before.concepts} of {workload.kb_concepts} concepts stored"
    return ""


def judge(
    operation: str, project: Path, before, run: ChildRun, workload: Workload, kill_after: float
) -> CrashTrial:
    after = read_store(project)
    health = model_health(project, CHECK_DOCUMENT)
    ok, reason = usable(after, health)
    return CrashTrial(
        operation,
        round(kill_after, 2),
        run.killed,
        committed=sum(len(entry["ids"]) for entry in run.committed),
        lost=lost_decisions(before.decisions, after.decisions, run.committed),
        usable=ok,
        reason=reason,
        partial_import=_partial(operation, before, after, workload),
        leftovers=leftovers(project),
    )


def calibrate(operation: str, workload: Workload, scratch: Path, train_seconds: float) -> float:
    """Seconds the operation works for (from `ready` to its exit), measured on a copy of its own."""
    project = copy_project(workload.base, scratch / f"calibrate-{operation}")
    run = run_child(child_command(operation, project, *operation_args(operation, workload, 0, train_seconds)))
    shutil.rmtree(project, ignore_errors=True)
    if run.returncode != 0:
        tail = (run.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"{operation} failed without a fault ({run.returncode}): {tail}")
    return run.seconds


def crash_trials(
    workload: Workload,
    *,
    trials: int = 9,
    operations: tuple[str, ...] = OPERATIONS,
    train_seconds: float = 2.0,
    seed: int = 11,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    rng = random.Random(seed)
    results: dict[str, dict] = {}
    total = trials * len(operations)
    done = 0
    with tempfile.TemporaryDirectory(prefix="curalink-crash-") as scratch_name:
        scratch = Path(scratch_name)
        for operation in operations:
            cancel.raise_if_cancelled()
            progress(done, total, f"kill -9: calibrating {operation}")
            span = calibrate(operation, workload, scratch, train_seconds)
            rows: list[CrashTrial] = []
            for number in range(trials):
                cancel.raise_if_cancelled()
                project = copy_project(workload.base, scratch / f"{operation}-{number}")
                before = read_store(project)
                kill_after = rng.uniform(0.0, span * 0.95)
                args = operation_args(operation, workload, rng.randrange(1 << 30), train_seconds)
                run = run_child(child_command(operation, project, *args), kill_after=kill_after)
                rows.append(judge(operation, project, before, run, workload, kill_after))
                shutil.rmtree(project, ignore_errors=True)
                done += 1
                progress(done, total, f"kill -9: {operation}")
            results[operation] = summarise(operation, span, rows)
    return results


def summarise(operation: str, span: float, rows: list[CrashTrial]) -> dict:
    return {
        "operation": operation,
        "work_seconds": round(span, 1),
        "trials": len(rows),
        "killed": sum(r.killed for r in rows),
        "committed_decisions": sum(r.committed for r in rows),
        "decisions_lost": sum(len(r.lost) for r in rows),
        "unusable": sum(not r.usable for r in rows),
        "partial_imports": sum(bool(r.partial_import) for r in rows),
        "with_leftovers": sum(bool(r.leftovers) for r in rows),
        "rows": [asdict(r) for r in rows],
    }
