"""Write faults the desk acts on (issue 11 item 2): a lock held by another process, a full database, a
failing disk; and `lock_wait`, which bounds how long one thread's writes wait for the lock."""

from __future__ import annotations

import errno
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from sqlalchemy import event, text

from core.errors import ProjectError
from core.store import Project
from core.store.write_faults import (
    DEFAULT_LOCK_WAIT_MS,
    StoreWriteError,
    WriteFault,
    lock_wait,
    write_fault,
)

HOLDER = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("BEGIN IMMEDIATE")
print("held", flush=True)
sys.stdin.readline()
connection.execute("ROLLBACK")
"""


@pytest.fixture
def project(tmp_path: Path):
    with Project.create(tmp_path / "p") as project:
        yield project


def _mention(project) -> int:
    from core.documents import Document, Mention, Passage

    text_ = "Huntington disease runs in families."
    document = Document(
        "1", [Passage(0, text_)], [Mention(0, 18, "Huntington disease", "Disease", "D006816")]
    )
    project.documents.import_documents([document])
    return next(iter(project.documents.documents_with_mention_ids()))[1][0]


def _busy_timeout(project) -> int:
    with project.session() as session:
        return session.execute(text("PRAGMA busy_timeout")).scalar()


def test_lock_wait_bounds_this_threads_transactions_only(project):
    assert _busy_timeout(project) == DEFAULT_LOCK_WAIT_MS
    seen: list[int] = []
    with lock_wait(40):
        assert _busy_timeout(project) == 40
        other = threading.Thread(target=lambda: seen.append(_busy_timeout(project)))
        other.start()
        other.join()
    assert seen == [DEFAULT_LOCK_WAIT_MS]  # another thread (the linker, say) keeps the default
    assert _busy_timeout(project) == DEFAULT_LOCK_WAIT_MS


def test_a_write_refused_by_another_process_lock_is_a_busy_fault_and_stores_nothing(project):
    mention_id = _mention(project)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(project.path / "curalink.db")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with lock_wait(0), pytest.raises(ProjectError) as refused:
            project.curation.record_decision(mention_id, "nil", curator="c")
        assert write_fault(refused.value) is WriteFault.BUSY
        assert "locked by another program" in str(refused.value)
    finally:
        holder.stdin.write("\n")
        holder.stdin.flush()
        holder.wait(timeout=30)
    assert mention_id not in project.curation.current_decisions()
    project.curation.record_decision(mention_id, "nil", curator="c")
    assert project.curation.current_decisions()[mention_id].action == "nil"


def test_a_full_database_is_a_full_fault(tmp_path: Path):
    connection = sqlite3.connect(tmp_path / "small.db")
    connection.execute("CREATE TABLE t (b BLOB)")
    connection.commit()
    pages = connection.execute("PRAGMA page_count").fetchone()[0]
    connection.execute(f"PRAGMA max_page_count={pages}")
    with pytest.raises(sqlite3.OperationalError) as full:
        connection.execute("INSERT INTO t VALUES (?)", (b"\0" * 100_000,))
    connection.close()
    assert write_fault(full.value) is WriteFault.FULL
    wrapped = ProjectError("wrapped")
    wrapped.__cause__ = full.value
    assert write_fault(wrapped) is WriteFault.FULL


def test_other_faults_and_non_faults():
    assert write_fault(OSError(errno.ENOSPC, "No space left on device")) is WriteFault.FULL
    assert write_fault(sqlite3.OperationalError("disk I/O error")) is WriteFault.IO
    assert write_fault(ProjectError("mention 3: this accept acted on suggestions for [0, 4)")) is None
    assert write_fault(ValueError("no")) is None
    error = StoreWriteError(WriteFault.FULL, "p/curalink.db", "accept “x” → D1")
    assert write_fault(error) is WriteFault.FULL and "disk is full" in str(error) and "accept" in str(error)


def test_a_full_database_during_import_is_a_clear_error_and_stores_nothing(project):
    """SQLite's own SQLITE_FULL (the database may not grow past its pages): before, the raw SQLAlchemy
    error came out, with the SQL statement and its parameters."""
    from core.documents import Document, Mention, Passage

    _mention(project)
    with project.session() as session:
        pages = session.execute(text("PRAGMA page_count")).scalar()
    text_ = "Huntington disease runs in families. " * 20

    def cap(dbapi_connection, _record, _proxy):
        dbapi_connection.execute(f"PRAGMA max_page_count={pages + 2}")

    documents = [
        Document(str(100 + n), [Passage(0, text_)], [Mention(0, 18, "Huntington disease", "Disease", "D1")])
        for n in range(300)
    ]
    event.listen(project.engine, "checkout", cap)
    try:
        with pytest.raises(ProjectError) as full:
            project.documents.import_documents(documents, source="many.pubtator")
    finally:
        event.remove(project.engine, "checkout", cap)
    assert isinstance(full.value, StoreWriteError) and full.value.fault is WriteFault.FULL
    assert "the disk is full; nothing of this change was saved" in str(full.value)
    assert "INSERT" not in str(full.value)
    assert project.documents.document_ids() == ["1"]
