"""A whole-project job (a retrain) run in a child process on its own connection to the project
(core/child_process.py says why a child: the desk stays responsive while torch trains)."""

from __future__ import annotations

import importlib
from pathlib import Path

from core.child_process import Child, EventToken, answer, child_logging, progress_to
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress


def _run_job(conn, cancel_event, function: str, project_path: str, kwargs: dict) -> None:
    child_logging(conn)
    from core.store import Project

    module, name = function.split(":")
    work = getattr(importlib.import_module(module), name)
    project = Project.open(Path(project_path))
    try:
        answer(
            conn, lambda: work(project, progress=progress_to(conn), cancel=EventToken(cancel_event), **kwargs)
        )
    finally:
        project.close()


def run_job_in_child(
    function: str,
    project_path: Path,
    kwargs: dict | None = None,
    *,
    what: str = "job",
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> object:
    """`module:function(project, progress=, cancel=, **kwargs)` run in a child process on its own
    connection to the project at `project_path`; returns its (picklable) result."""
    child = Child(_run_job, (function, str(project_path), dict(kwargs or {})), what=what)
    try:
        return child.call(None, progress=progress, cancel=cancel)
    finally:
        child.close()
