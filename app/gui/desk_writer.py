"""The desk's one writer: every curator change reaches the store through it, in the order it was made.

A change is tried at once with a short lock wait (50 ms: no visible freeze). When another program holds the
database's write lock, the change waits in `pending` and a background thread retries it with short waits
(bounded: about 20 s by default) while the window stays usable; changes made meanwhile queue behind it.
When the retries run out, or the disk is full or failing, the writer stalls: nothing more is written until
the curator presses Retry (or Discard). The caller learns of each change's fate through its callbacks, on
the UI thread: `saved` once the store has it (the undo stack is pushed only then), `refused` when a rule
of the store said no (never retried).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from core.errors import CuralinkError
from core.store.write_faults import StoreWriteError, WriteFault, lock_wait, write_fault

if TYPE_CHECKING:
    from core.store.project import Project

log = logging.getLogger(__name__)


@dataclass(eq=False)
class Write:
    """One change: `run` is the store call (any thread); the callbacks run on the UI thread."""

    label: str
    run: Callable[[], object]
    saved: Callable[[object], None]
    refused: Callable[[Exception], None]
    late: bool = False  # it waited in the queue (the window has moved on since it was made)
    attempts: int = 0


def _attempts(writer: DeskWriter, write: Write) -> None:
    """Retry one write with short lock waits until it is saved, refused, a non-lock fault, or out of tries.

    Runs in a plain thread; its outcome reaches the UI thread through the writer's own signals (queued),
    so nothing the thread touches is ever deleted under it."""
    while True:
        write.attempts += 1
        try:
            with lock_wait(writer.retry_wait_ms):
                result = write.run()
        except Exception as exc:  # noqa: BLE001 - every outcome goes back to the UI thread
            fault = write_fault(exc)
            if fault is None:
                writer.done.emit(write, "refused", exc)
                return
            spent = write.attempts >= writer.attempts or writer.stopping.is_set()
            if fault is not WriteFault.BUSY or spent:
                writer.done.emit(write, "fault", writer.error_for(fault, write))
                return
            writer.attempted.emit(write, write.attempts)
            if writer.stopping.wait(writer.pause_s):
                writer.done.emit(write, "fault", writer.error_for(fault, write))
                return
            continue
        writer.done.emit(write, "saved", result)
        return


class DeskWriter(QObject):
    """Writes the desk's changes in order; `pending` holds those the store does not have yet."""

    changed = Signal()  # the pending list or the stall changed: the window redraws its save bar
    stalled = Signal(object)  # StoreWriteError: the writer waits for Retry or Discard
    attempted = Signal(object, int)  # from the attempts thread: write, attempts so far
    done = Signal(object, str, object)  # from the attempts thread: write, "saved"/"refused"/"fault", value

    def __init__(
        self,
        project: Project,
        *,
        first_wait_ms: int = 50,
        retry_wait_ms: int = 250,
        pause_s: float = 0.25,
        attempts: int = 40,
        parent: QObject | None = None,
    ):
        super().__init__(parent)
        self.project = project
        self.first_wait_ms = first_wait_ms
        self.retry_wait_ms = retry_wait_ms
        self.pause_s = pause_s
        self.attempts = attempts
        self.pending: list[Write] = []
        self.error: StoreWriteError | None = None  # set while stalled
        self.stopping = threading.Event()
        self._running: threading.Thread | None = None
        self.attempted.connect(self._attempted)
        self.done.connect(self._done)

    # --- what the window asks ---------------------------------------------------------------------

    def submit(self, write: Write) -> str:
        """Write now when nothing waits: returns "saved", "refused" or "pending" (queued or retrying)."""
        if self.pending:
            write.late = True
            self.pending.append(write)
            self.changed.emit()
            return "pending"
        write.attempts = 1
        try:
            with lock_wait(self.first_wait_ms):
                result = write.run()
        except Exception as exc:
            fault = write_fault(exc)
            if fault is None:
                if not isinstance(exc, CuralinkError):
                    raise
                write.refused(exc)
                return "refused"
            write.late = True
            self.pending.append(write)
            if fault is WriteFault.BUSY:
                log.info("%s: waiting for the database lock", write.label)
                self._start()
            else:
                self._stall(self.error_for(fault, write))
            self.changed.emit()
            return "pending"
        write.saved(result)
        return "saved"

    def retry(self) -> None:
        """Try the waiting changes again (after the curator freed space or closed the other program)."""
        if self.pending and self._running is None:
            self.error = None
            for write in self.pending:
                write.attempts = 0
            self._start()
            self.changed.emit()

    def discard(self) -> list[Write]:
        """Drop every change the store does not have (only while stalled: a running attempt may land)."""
        if self._running is not None:
            return []
        dropped, self.pending, self.error = self.pending, [], None
        for write in dropped:
            log.warning("discarded, never saved: %s", write.label)
        self.changed.emit()
        return dropped

    def busy(self) -> bool:
        return bool(self.pending)

    def shutdown(self, timeout_ms: int = 5000) -> None:
        self.stopping.set()
        if self._running is not None:
            self._running.join(timeout_ms / 1000)

    def error_for(self, fault: WriteFault, write: Write) -> StoreWriteError:
        return StoreWriteError(fault, self.project.path / "curalink.db", write.label)

    # --- the background attempts ------------------------------------------------------------------

    def _start(self) -> None:
        if self._running is None and self.pending and not self.stopping.is_set():
            self._running = threading.Thread(
                target=_attempts, args=(self, self.pending[0]), name="desk-writer", daemon=True
            )
            self._running.start()

    def _attempted(self, write: Write, attempts: int) -> None:
        if attempts == 1 or attempts % 10 == 0:
            log.info("%s: database still locked after %d attempt(s)", write.label, attempts)
        self.changed.emit()

    def _done(self, write: Write, outcome: str, value: object) -> None:
        self._running = None
        if outcome == "fault":
            self._stall(value)
            self.changed.emit()
            return
        if self.pending and self.pending[0] is write:
            self.pending.pop(0)
        try:
            if outcome == "saved":
                write.saved(value)
            else:
                log.warning("%s: refused by the store: %s", write.label, value)
                write.refused(value)
        finally:  # whatever showing it did, the next change goes on
            self._start()
            self.changed.emit()

    def _stall(self, error: StoreWriteError) -> None:
        self.error = error
        log.error("%s; %d change(s) wait for Retry or Discard", error, len(self.pending))
        self.stalled.emit(error)
