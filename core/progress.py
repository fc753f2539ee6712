"""Progress reporting and cooperative cancellation for long work.

The engine never prints: long operations call `progress(done, total, message)` and check a
`CancelToken` between batches, so the CLI can draw a bar and the GUI can emit Qt signals.
"""

from __future__ import annotations

import threading
import time
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


class PhasedProgress:
    """One overall bar across the phases of a long job (retraining: train, evaluate, ... per model).

    Each phase has a weight (its expected share of the time, in any unit). `enter(name)` closes the
    phases before it; calls within a phase map its own (done, total) onto the phase's slice, and a phase
    with a time budget also advances with the clock, so a slow step still moves the bar. The reported
    value never goes backwards: a sub-task restarting at 0 no longer restarts the bar. It reports
    (done, SCALE, "phase: message") to the wrapped callback, so any front end can show it (and
    estimate the time left from the fraction and the elapsed time).
    """

    SCALE = 1000

    def __init__(
        self, report: ProgressFn, phases: list[tuple[str, float]], *, clock: Callable[[], float] | None = None
    ):
        self._report = report
        self._clock = clock or time.monotonic
        weights = [max(0.0, float(w)) for _, w in phases]
        whole = sum(weights) or 1.0
        self._names = [name for name, _ in phases]
        self._starts, at = [], 0.0
        for weight in weights:
            self._starts.append(at / whole)
            at += weight
        self._shares = [w / whole for w in weights]
        self._index = -1
        self._budget: float | None = None
        self._entered = 0.0
        self._best = 0
        self.phase = ""

    def enter(self, name: str, *, budget_seconds: float | None = None, message: str = "") -> None:
        """Start phase `name` (one of those given); earlier phases count as done."""
        self._index = self._names.index(name)
        self.phase = name
        self._budget = budget_seconds
        self._entered = self._clock()
        self(0, None, message or "starting")

    def __call__(self, done: int, total: int | None, message: str = "") -> None:
        if self._index < 0:
            self._report(self._best, self.SCALE, message)
            return
        within = min(1.0, done / total) if total else 0.0
        if self._budget:
            within = max(within, min(1.0, (self._clock() - self._entered) / self._budget))
        fraction = self._starts[self._index] + self._shares[self._index] * within
        self._best = max(self._best, min(self.SCALE, int(fraction * self.SCALE)))
        self._report(self._best, self.SCALE, f"{self.phase}: {message}" if message else self.phase)

    def finish(self, message: str = "done") -> None:
        self._best = self.SCALE
        self._report(self.SCALE, self.SCALE, message)
