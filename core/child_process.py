"""Core work in a child process: the desk's linker and its retraining run there.

Why: work in a thread of the desk shares the desk's interpreter lock. Importing torch, reading a
knowledge base into Python objects or building the name index hold that lock in long stretches, so the
window froze for 0.4-9 s while a background link started (`curalink bench desk`, NCBI-disease and a
20,000-document project). In a child process the window only competes for a CPU core, and the desk
process need not import torch at all (it starts faster).

The protocol is one pipe: the parent sends a request (or none, for a one-off job that starts at once),
the child answers with any number of notices (log records, progress, "stored" document ids) and then
one outcome: done (with a value), cancelled, or an error (the engine's own message, or a traceback
that went to the log). The parent's CancelToken reaches the child through an event the child's own
token checks. The child opens the project itself; SQLite in WAL mode takes the second connection and
the desk's single writer waits on its lock as on any other process's.

Children start with the `spawn` method (a fork of a process running Qt threads is unsafe), so a frozen
app must call `multiprocessing.freeze_support()` first (app/cli/__main__.py does).
"""

from __future__ import annotations

import logging
import multiprocessing
import traceback
from collections.abc import Callable

from core import errors
from core.errors import Cancelled, CuralinkError
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

POLL_SECONDS = 0.05  # how often a waiting parent looks at its cancel token and the child's health
STOP_SECONDS = 10.0  # a child not gone this long after "stop" is terminated


class EventToken(CancelToken):
    """The child's cancel token: set by the parent through a shared event."""

    def __init__(self, event) -> None:
        self._event = event


class _PipeLogHandler(logging.Handler):
    """Sends the child's log records to the parent, which logs them where it logs (the project's
    logs/curalink.log), under the same logger names."""

    def __init__(self, conn) -> None:
        super().__init__(logging.INFO)
        self.conn = conn

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.conn.send({"log": (record.levelno, record.name, record.getMessage())})
        except (OSError, ValueError):  # the parent is gone: nothing to tell
            pass


def child_logging(conn) -> None:
    """In the child: every log record goes to the parent."""
    root = logging.getLogger()
    root.handlers[:] = [_PipeLogHandler(conn)]
    root.setLevel(logging.INFO)


def progress_to(conn) -> ProgressCallback:
    def progress(done: int, total: int | None, message: str = "") -> None:
        conn.send({"progress": (done, total, message)})

    return progress


def answer(conn, work: Callable[[], object]) -> None:
    """In the child: run one request's work and send its outcome."""
    try:
        outcome = work()
    except Cancelled:
        conn.send({"cancelled": True})
    except CuralinkError as exc:
        conn.send({"error": (type(exc).__name__, str(exc))})
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which raises it
        logging.getLogger(__name__).error("child process: %s", traceback.format_exc())
        conn.send({"error": ("", f"{type(exc).__name__}: {exc}")})
    else:
        conn.send({"done": outcome})


def _raise(name: str, message: str, what: str) -> None:
    kind = getattr(errors, name, None) if name else None
    if isinstance(kind, type) and issubclass(kind, CuralinkError) and kind is not errors.InputError:
        raise kind(message)
    if name:
        raise CuralinkError(message)
    raise CuralinkError(f"the {what} failed: {message} (the traceback is in the project's log)")


class Child:
    """The parent's side of one child process running `target(conn, cancel_event, *args)`. Call it from
    one thread at a time; `close()` ends the child."""

    def __init__(self, target: Callable, args: tuple, *, what: str):
        context = multiprocessing.get_context("spawn")
        self.what = what
        self._conn, child = context.Pipe()
        self._cancel = context.Event()
        self._process = context.Process(
            target=target, args=(child, self._cancel, *args), name=f"curalink {what}", daemon=True
        )
        self._process.start()
        child.close()

    @property
    def pid(self) -> int | None:
        return self._process.pid

    def alive(self) -> bool:
        return self._process.is_alive()

    def call(
        self,
        request: dict | None,
        *,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken = NEVER_CANCELLED,
        on_notice: Callable[[str, object], None] | None = None,
    ) -> object:
        """Send `request` (None: the child is already at work) and wait for its outcome, relaying log
        records and progress, passing other notices to `on_notice(kind, value)`, forwarding cancel."""
        if request is not None:
            if not self._process.is_alive():
                raise CuralinkError(self._gone())
            self._cancel.clear()
            self._conn.send(request)
        while True:
            if cancel.cancelled:
                self._cancel.set()
            if not self._conn.poll(POLL_SECONDS):
                if not self._process.is_alive() and not self._conn.poll():
                    raise CuralinkError(self._gone())
                continue
            try:
                message = self._conn.recv()
            except EOFError:
                raise CuralinkError(self._gone()) from None
            if "log" in message:
                level, name, text = message["log"]
                logging.getLogger(name).log(level, "%s", text)
            elif "progress" in message:
                progress(*message["progress"])
            elif "done" in message:
                return message["done"]
            elif "cancelled" in message:
                raise Cancelled("cancelled by the user")
            elif "error" in message:
                _raise(*message["error"], self.what)
            elif on_notice is not None:
                kind, value = next(iter(message.items()))
                on_notice(kind, value)

    def _gone(self) -> str:
        return (
            f"the {self.what} process stopped unexpectedly (exit code {self._process.exitcode}); "
            "what it stored is kept"
        )

    def close(self) -> None:
        """Ask the child to stop after its current request (cancelled), then make sure it is gone."""
        self._cancel.set()
        try:
            self._conn.send({"op": "stop"})
        except (OSError, ValueError):
            pass
        self._process.join(STOP_SECONDS)
        if self._process.is_alive():
            self._process.terminate()
            self._process.join(STOP_SECONDS)
        self._conn.close()
