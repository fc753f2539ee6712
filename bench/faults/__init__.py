"""The fault harness (issue 11): what a curator's work survives, and what a project or file from someone
else can do. `curalink bench faults` runs it; docs/faults.md holds its last figures.

Sections, each on copies of one demo-size base project (bench/faults/workload.py):
  crash       kill -9 during corpus import, KB import, decision bursts, linking, training, retraining
  disk-full   the project on a full tmpfs during import, link, training and a desk decision (root)
  contention  two writer processes and a desk during a long import
  hostile     hostile project variants opened by `link` and by the desk: code executed
  bad-inputs  crafted files imported by the CLI: clear errors, store unchanged

Every operation runs in its own process through the code the `curalink` command and the desk run.
"""

from __future__ import annotations

import platform
import time
from pathlib import Path

from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

SECTIONS = ("crash", "disk-full", "contention", "hostile", "bad-inputs")


def run_faults(
    work: Path,
    *,
    sections: tuple[str, ...] = SECTIONS,
    trials: int = 9,
    train_seconds: float = 2.0,
    contention_seconds: float = 25.0,
    limit: int | None = None,
    seed: int = 11,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    """Run the chosen sections; `work` keeps the base project between runs (built on first use)."""
    from bench.faults.workload import build_workload

    started = time.perf_counter()
    workload = build_workload(work, train_seconds=train_seconds, progress=progress, cancel=cancel)
    result: dict = {
        "machine": f"{platform.system()} {platform.machine()}, Python {platform.python_version()}",
        "settings": {"trials_per_operation": trials, "train_seconds": train_seconds, "seed": seed},
    }
    if "crash" in sections:
        from bench.faults.crash import crash_trials

        result["crash"] = crash_trials(
            workload, trials=trials, train_seconds=train_seconds, seed=seed, progress=progress, cancel=cancel
        )
    if "disk-full" in sections:
        from bench.faults.disk_full import disk_full_trials

        result["disk_full"] = disk_full_trials(
            workload, train_seconds=train_seconds, progress=progress, cancel=cancel
        )
    if "contention" in sections:
        from bench.faults.contention import contention_trial

        result["contention"] = contention_trial(workload, seconds=contention_seconds, progress=progress)
    if "hostile" in sections:
        from bench.faults.hostile import hostile_trials

        result["hostile"] = hostile_trials(workload, limit=limit, progress=progress, cancel=cancel)
    if "bad-inputs" in sections:
        from bench.faults.bad_files import bad_input_trials

        result["bad_inputs"] = bad_input_trials(workload, limit=limit, progress=progress, cancel=cancel)
    result["seconds"] = round(time.perf_counter() - started, 1)
    return result
