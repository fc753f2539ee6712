"""Batch linking for the front ends: `run_batch` links many files with a project's models in force in
worker processes (core.batch), `import_linked` brings the linked shards back into a project as
suggestions. The batch engine is loaded when first used, so the CLI starts without it."""

from __future__ import annotations

import importlib

from core.pipeline import DEFAULT_CANDIDATES

_FROM = {
    "run_batch": "core.batch",
    "BatchSummary": "core.batch",
    "import_linked": "core.batch.import_linked",
}

__all__ = ["DEFAULT_CANDIDATES", *_FROM]


def __getattr__(name: str):
    if name in _FROM:
        return getattr(importlib.import_module(_FROM[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
