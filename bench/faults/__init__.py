"""The fault harness (issue 11): what a curator's work survives, and what a project or file from someone
else can do. `curalink bench faults` runs it; docs/faults.md holds its last figures.

Sections, each on copies of one demo-size base project (bench/faults/workload.py):
  crash       kill -9 during corpus import, KB import, decision bursts, linking, training, retraining
  disk-full   the project on a full tmpfs during import, link, training and a desk decision (root)
  contention  two writer processes and a desk during a long import
  hostile     hostile project variants opened by `link` and by the desk: code executed
  bad-inputs  crafted files imported by the CLI: clear errors, store unchanged
  batch-manifests, batch-tampered, batch-deletions, batch-kills, bombs, hostile-db (issue 24): hostile
              link-batch folders, DeleteCitation sequences killed mid-rewrite, driver kills, input bombs
              and hostile databases, on the demo project alone (bench/faults/batch_setup.py)
  bounds      issue 33's probes: bombs past every reader's limit, special files, bad arguments, hostile
              manifest fields, a poison shard (bench/faults/bounds_probes.py)

Every operation runs in its own process through the code the `curalink` command and the desk run.
"""

from __future__ import annotations

import platform
import time
from pathlib import Path

from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

WORKLOAD_SECTIONS = ("crash", "disk-full", "contention", "hostile", "bad-inputs")
BATCH_SECTIONS = {  # section -> (module, function): each runs `trials` rounds on the demo project
    "batch-manifests": ("bench.faults.batch_folders", "manifest_trials"),
    "batch-tampered": ("bench.faults.batch_folders", "tampered_trials"),
    "batch-deletions": ("bench.faults.batch_runs", "deletion_trials"),
    "batch-kills": ("bench.faults.batch_runs", "kill_trials"),
    "bombs": ("bench.faults.bombs_db", "bomb_trials"),
    "hostile-db": ("bench.faults.bombs_db", "hostile_db_trials"),
    "bounds": ("bench.faults.bounds_probes", "bounds_trials"),
}
SECTIONS = WORKLOAD_SECTIONS + tuple(BATCH_SECTIONS)


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
    import importlib

    from bench.faults.workload import build_workload

    started = time.perf_counter()
    result: dict = {
        "machine": f"{platform.system()} {platform.machine()}, Python {platform.python_version()}",
        "settings": {"trials_per_operation": trials, "train_seconds": train_seconds, "seed": seed},
    }
    if set(sections) & set(WORKLOAD_SECTIONS):
        workload = build_workload(work, train_seconds=train_seconds, progress=progress, cancel=cancel)
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
    if set(sections) & set(BATCH_SECTIONS):
        from bench.faults.batch_setup import build_setup

        setup = build_setup(work / "batch", train_seconds=train_seconds)
        for section, (module, function) in BATCH_SECTIONS.items():
            if section in sections and not cancel.cancelled:
                run = getattr(importlib.import_module(module), function)
                section_started = time.perf_counter()
                figures = run(setup, trials=trials, seed=seed, progress=progress, cancel=cancel)
                figures["seconds"] = round(time.perf_counter() - section_started, 1)
                result[section.replace("-", "_")] = figures
    result["seconds"] = round(time.perf_counter() - started, 1)
    return result
