"""The one thing every store service shares: the project's folder and its sessions on the database.

Each service (documents, knowledge base, curation log, ...) is given this object at construction rather
than reaching the others through a shared `self`; `Project.reopen_at` moves it, so every service follows
the folder when it moves.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Engine
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from core.errors import ProjectError
from core.store.queue_summary import fold_stale
from core.store.write_faults import StoreWriteError, WriteFault, write_fault

DB_NAME = "curalink.db"


def _storage_problem(exc: OperationalError) -> str | None:
    """What a write met outside the store (a full disk, a failing disk), in words, or None."""
    text = str(exc.orig).lower()
    if "database or disk is full" in text:
        return "the disk is full (or the database reached its size limit): free some space and run it again"
    if "disk i/o error" in text:
        return "the disk reported an error while writing (full, removed or failing?)"
    if "readonly database" in text or "read-only" in text:
        return "the database file is read-only: check the folder's permissions"
    return None


class StoreAccess:
    """The project folder, its engine and its sessions; one per open project, shared by its services."""

    def __init__(self, path: Path, engine: Engine):
        self.path = path
        self.engine = engine
        self._sessions = sessionmaker(engine, expire_on_commit=False)
        self._shared = threading.local()  # the session of a `transaction()` open in this thread

    def move_to(self, path: Path, engine: Engine) -> None:
        """Read and write the database at `path` through `engine` from now on (the folder moved)."""
        self.path, self.engine = path, engine
        self._sessions = sessionmaker(engine, expire_on_commit=False)

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """One transaction around several store calls: every `session()` this thread opens inside it joins
        it, so a curation operation and its undo step are stored together or not at all."""
        if getattr(self._shared, "session", None) is not None:
            yield self._shared.session
            return
        with self.session() as session:
            self._shared.session = session
            try:
                yield session
            finally:
                self._shared.session = None

    @contextmanager
    def session(self) -> Iterator[Session]:
        """One transaction: committed on success, rolled back on any error (a cancel included); inside a
        `transaction()` of this thread, that one (committed or rolled back by it)."""
        shared = getattr(self._shared, "session", None)
        if shared is not None:
            yield shared
            return
        session = self._sessions()
        try:
            yield session
            session.flush()
            fold_stale(session)  # the queue's figures of the documents this transaction changed
            session.commit()
        except OperationalError as exc:
            session.rollback()
            fault = write_fault(exc)
            if fault is WriteFault.BUSY:
                raise ProjectError(
                    f"{self.path / DB_NAME}: the database is locked by another program"
                ) from exc
            if fault is not None:  # a full or failing disk: a clear error, not the SQL of the statement
                raise StoreWriteError(fault, self.path / DB_NAME) from exc
            storage = _storage_problem(exc)
            if storage:  # one line naming the file, never the SQL statement and its parameters
                raise ProjectError(
                    f"{self.path / DB_NAME}: {storage}; nothing of this change was stored"
                ) from exc
            raise
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()
