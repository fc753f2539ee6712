"""Batch linking for the front ends: `run_batch` links many files with a project's models in force in
worker processes (core.batch), `import_linked` brings the linked shards back into a project as
suggestions. The batch engine is loaded when first used, so the CLI starts without it."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from core.pipeline import DEFAULT_CANDIDATES

if TYPE_CHECKING:  # what __getattr__ hands out (and the room map's edge from jobs to batch)
    from core.batch import BatchSummary, run_batch
    from core.batch.import_linked import import_linked
    from core.batch.plan import recorded_run

_FROM = {
    "run_batch": "core.batch",
    "BatchSummary": "core.batch",
    "import_linked": "core.batch.import_linked",
    "recorded_run": "core.batch.plan",
}

__all__ = ["DEFAULT_CANDIDATES", "BatchSummary", "import_linked", "recorded_run", "run_batch"]


def __getattr__(name: str):
    if name in _FROM:
        return getattr(importlib.import_module(_FROM[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
