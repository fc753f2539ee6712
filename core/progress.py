"""Progress reporting and cooperative cancellation for long work.

The engine never prints: long operations call `progress(done, total, message)` and check a
`CancelToken` between batches, so the CLI can draw a bar and the GUI can emit Qt signals.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol

from core.errors import Cancelled


class ProgressCallback(Protocol):
    def __call__(self, done: int, total: int | None, message: str = "") -> None: ...


def no_progress(done: int, total: int | None, message: str = "") -> None:
    """The default callback: report nothing."""


class CancelToken:
    """A flag the caller sets from any thread; the worker checks it between batches."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def raise_if_cancelled(self) -> None:
        if self._event.is_set():
            raise Cancelled("cancelled by the user")


NEVER_CANCELLED = CancelToken()

ProgressFn = Callable[[int, int | None, str], None]
