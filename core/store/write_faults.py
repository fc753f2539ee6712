"""Why a write to the store failed, in terms a curator can act on, and how long a write waits for the lock.

Four faults leave the store exactly as it was (SQLite rolls the transaction back) and are worth a retry
once their cause is gone: another program holds the database's write lock (an import, a training run,
another desk), the disk is full, the disk reported an error, or the database file cannot be opened any
more (its folder was moved, renamed or unmounted). Everything else a write can meet is either
a rule of the store (a `CuralinkError`, never retried) or a bug.

`lock_wait(ms)` bounds how long the calling thread's transactions wait for the write lock (SQLite's busy
timeout, set on each pooled connection as it is checked out): the desk tries a change at once with a
short wait and leaves longer waits to a background writer, so its window never freezes behind another
program's long transaction.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from enum import StrEnum
from pathlib import Path

from core.errors import ProjectError

DEFAULT_LOCK_WAIT_MS = 5000
_LOCK_WAIT_MS: ContextVar[int] = ContextVar("curalink_lock_wait_ms", default=DEFAULT_LOCK_WAIT_MS)

# SQLite primary result codes (the low byte of an extended code).
_SQLITE_CODES = {5: "busy", 6: "busy", 13: "full", 10: "io", 14: "gone"}
_MESSAGES = (
    ("database is locked", "busy"),
    ("database table is locked", "busy"),
    ("database or disk is full", "full"),
    ("disk i/o error", "io"),
    ("unable to open database file", "gone"),
)


class WriteFault(StrEnum):
    BUSY = "busy"
    FULL = "full"
    IO = "io"
    GONE = "gone"  # the database file cannot be opened: its folder was moved, renamed or unmounted


class StoreWriteError(ProjectError):
    """A write the store could not make for a reason outside it; nothing of the write was saved."""

    def __init__(self, fault: WriteFault, db_path: Path | str, what: str = ""):
        self.fault = fault
        self.db_path = str(db_path)
        self.what = what
        super().__init__(describe_fault(fault, db_path, what))


def describe_fault(fault: WriteFault, db_path: Path | str, what: str = "") -> str:
    change = f"the change ({what})" if what else "this change"
    if fault is WriteFault.BUSY:
        return (
            f"{db_path}: the database is locked by another program (an import, a training run or another "
            f"desk); {change} is not saved yet"
        )
    if fault is WriteFault.FULL:
        return f"{db_path}: the disk is full; nothing of {change} was saved (free some space, then try again)"
    if fault is WriteFault.GONE:
        return (
            f"{db_path}: cannot be opened (was the project folder moved, renamed or unmounted?); nothing of "
            f"{change} was saved (reopen the project where it is now, then try again)"
        )
    return f"{db_path}: the disk reported an error while writing; nothing of {change} was saved"


def write_fault(exc: BaseException) -> WriteFault | None:
    """The fault behind an exception (looking through its causes and SQLAlchemy's `orig`), if any."""
    stack: list[BaseException] = [exc]
    seen: set[int] = set()
    while stack:
        current = stack.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, StoreWriteError):
            return current.fault
        code = getattr(current, "sqlite_errorcode", None)
        if isinstance(code, int) and code & 0xFF in _SQLITE_CODES:
            return WriteFault(_SQLITE_CODES[code & 0xFF])
        if isinstance(current, OSError) and current.errno in (errno.ENOSPC, errno.EDQUOT):
            return WriteFault.FULL
        text = str(current).lower()
        for needle, fault in _MESSAGES:
            if needle in text:
                return WriteFault(fault)
        stack.extend(c for c in (current.__cause__, current.__context__, getattr(current, "orig", None)) if c)
    return None


@contextmanager
def lock_wait(milliseconds: int) -> Iterator[None]:
    """Transactions begun in this block (in this thread) wait at most this long for the write lock."""
    token = _LOCK_WAIT_MS.set(max(0, int(milliseconds)))
    try:
        yield
    finally:
        _LOCK_WAIT_MS.reset(token)


def apply_lock_wait(dbapi_connection, _record, _proxy) -> None:
    """Pool `checkout` listener: the connection waits as long as the checking-out thread asked."""
    dbapi_connection.execute(f"PRAGMA busy_timeout={_LOCK_WAIT_MS.get()}")
