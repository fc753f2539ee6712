"""The queue's figures per document kept in a table (`queue_summary`), so the desk's queue is one read.

The queue's figures (live mentions, decided ones, mentions without suggestions, the smallest top-two
margin among undecided ones, the "done" mark) were one aggregate over every mention, its current state
and its first two suggestions: 343-362 ms at 20,000 documents (issue 31). Now SQLite triggers on the
tables they come from (mentions, mention_state, ranks 1-2 of suggestions, "done" marks, new documents)
note the document in `queue_stale`, whoever writes (this process, a linking process, a migration); every
store transaction that wrote recomputes the stale documents' rows with the same aggregate before it
commits (`fold_stale`), so a decision costs one document's aggregate. A read never writes: documents
still stale, or without a row, are aggregated live by the read itself (`summary_rows`), so the figures
are right even when a writer did not fold. The triggers' SQL is written out here once; migration 0005
holds its own frozen copy, and `tests/test_queue_summary.py` checks the two match.
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.orm import Session

DONE = "done"  # core.store.curation_marks.DONE (that module's import of the store access would loop)

_STALE = "INSERT OR IGNORE INTO queue_stale (document_id)"
_OF_MENTION = "SELECT document_id FROM mentions WHERE id = {}"
# (name, SQL): what makes a document's figures stale. Ranks 1 and 2 only: the rest never count.
TRIGGERS: tuple[tuple[str, str], ...] = (
    ("queue_stale_document_insert",
     f"CREATE TRIGGER queue_stale_document_insert AFTER INSERT ON documents "
     f"BEGIN {_STALE} VALUES (NEW.id); END"),
    ("queue_stale_mention_insert",
     f"CREATE TRIGGER queue_stale_mention_insert AFTER INSERT ON mentions "
     f"BEGIN {_STALE} VALUES (NEW.document_id); END"),
    ("queue_stale_mention_delete",
     f"CREATE TRIGGER queue_stale_mention_delete AFTER DELETE ON mentions "
     f"BEGIN {_STALE} VALUES (OLD.document_id); END"),
    ("queue_stale_mention_update",
     f"CREATE TRIGGER queue_stale_mention_update AFTER UPDATE OF document_id, removed ON mentions "
     f"BEGIN {_STALE} VALUES (OLD.document_id), (NEW.document_id); END"),
    ("queue_stale_state_insert",
     f"CREATE TRIGGER queue_stale_state_insert AFTER INSERT ON mention_state "
     f"BEGIN {_STALE} {_OF_MENTION.format('NEW.mention_id')}; END"),
    ("queue_stale_state_delete",
     f"CREATE TRIGGER queue_stale_state_delete AFTER DELETE ON mention_state "
     f"BEGIN {_STALE} {_OF_MENTION.format('OLD.mention_id')}; END"),
    ("queue_stale_state_update",
     f"CREATE TRIGGER queue_stale_state_update AFTER UPDATE OF mention_id ON mention_state "
     f"BEGIN {_STALE} {_OF_MENTION.format('OLD.mention_id')}; "
     f"{_STALE} {_OF_MENTION.format('NEW.mention_id')}; END"),
    ("queue_stale_suggestion_insert",
     f"CREATE TRIGGER queue_stale_suggestion_insert AFTER INSERT ON suggestions WHEN NEW.rank <= 2 "
     f"BEGIN {_STALE} {_OF_MENTION.format('NEW.mention_id')}; END"),
    ("queue_stale_suggestion_delete",
     f"CREATE TRIGGER queue_stale_suggestion_delete AFTER DELETE ON suggestions WHEN OLD.rank <= 2 "
     f"BEGIN {_STALE} {_OF_MENTION.format('OLD.mention_id')}; END"),
    ("queue_stale_suggestion_update",
     f"CREATE TRIGGER queue_stale_suggestion_update AFTER UPDATE OF mention_id, rank, retriever_score, "
     f"reranker_score ON suggestions WHEN OLD.rank <= 2 OR NEW.rank <= 2 "
     f"BEGIN {_STALE} {_OF_MENTION.format('OLD.mention_id')}; "
     f"{_STALE} {_OF_MENTION.format('NEW.mention_id')}; END"),
    ("queue_stale_mark_insert",
     f"CREATE TRIGGER queue_stale_mark_insert AFTER INSERT ON curation_marks "
     f"WHEN NEW.kind = '{DONE}' AND NEW.mention_id IS NULL BEGIN {_STALE} VALUES (NEW.document_id); END"),
    ("queue_stale_mark_delete",
     f"CREATE TRIGGER queue_stale_mark_delete AFTER DELETE ON curation_marks "
     f"WHEN OLD.kind = '{DONE}' AND OLD.mention_id IS NULL BEGIN {_STALE} VALUES (OLD.document_id); END"),
    ("queue_stale_mark_update",
     f"CREATE TRIGGER queue_stale_mark_update AFTER UPDATE ON curation_marks "
     f"BEGIN {_STALE} VALUES (OLD.document_id), (NEW.document_id); END"),
)  # fmt: skip
STATE_TRIGGERS = tuple(name for name, _sql in TRIGGERS if name.startswith("queue_stale_state_"))


def create_state_triggers(session: Session) -> None:
    """The triggers on `mention_state`, made again with the table (core.store.mention_state)."""
    for name, sql in TRIGGERS:
        if name in STATE_TRIGGERS:
            session.execute(text(sql))


# Per document (`{where}` picks which): `{head}` (its id first), live mentions, decided ones (the
# current-state table), mentions without suggestions, the smallest top-two score margin among undecided
# ones (absolute, as core.learn.ordering.margin: a composite's second row may score higher; reranker
# score when present; NULL when none is uncertain) and whether the newest "done" mark is set (as
# core.store.curation_marks keeps them in force). Plain SQL run with the driver's cursor: building the
# statement with SQLAlchemy at each decision cost more than running it.
_FIGURES = (
    "SELECT {head}, count(m.id), count(s.mention_id), count(m.id) - count(f.id), "
    "min(CASE WHEN s.mention_id IS NOT NULL THEN NULL WHEN f.id IS NULL THEN NULL "
    "WHEN n.id IS NULL THEN 1.0 ELSE abs(coalesce(f.reranker_score, f.retriever_score) "
    "- coalesce(n.reranker_score, n.retriever_score)) END), "
    "coalesce((SELECT c.value FROM curation_marks c WHERE c.document_id = d.id AND c.mention_id IS NULL "
    f"AND c.kind = '{DONE}' ORDER BY c.id DESC LIMIT 1), '') != '' "
    "FROM documents d "
    "LEFT JOIN mentions m ON m.document_id = d.id AND m.removed = 0 "
    "LEFT JOIN mention_state s ON s.mention_id = m.id "
    "LEFT JOIN suggestions f ON f.mention_id = m.id AND f.rank = 1 "
    "LEFT JOIN suggestions n ON n.mention_id = m.id AND n.rank = 2 "
    "WHERE {where} GROUP BY d.id"
)
_STALE_IDS = "SELECT document_id FROM queue_stale"
_READ = "d.id, d.external_id, d.title"
_FOLD = (
    f"DELETE FROM queue_summary WHERE document_id IN ({_STALE_IDS})",
    "INSERT INTO queue_summary (document_id, mentions, reviewed, unsuggested, margin, marked_done) "
    + _FIGURES.format(head="d.id", where=f"d.id IN ({_STALE_IDS})"),
    "DELETE FROM queue_stale",
)
_STORED = (  # the covering index ix_documents_queue answers the documents' side without their texts
    "SELECT d.id, d.external_id, d.title, q.mentions, q.reviewed, q.unsuggested, q.margin, q.marked_done "
    "FROM documents d JOIN queue_summary q ON q.document_id = d.id "
    f"WHERE d.id NOT IN ({_STALE_IDS}){{also}} ORDER BY d.id"
)
_NOT_STORED = (
    f"(d.id IN ({_STALE_IDS}) OR NOT EXISTS (SELECT 1 FROM queue_summary q WHERE q.document_id = d.id))"
)
_INCOMPLETE = (  # documents the table does not answer for: stale, or (made by hand) without a row
    f"SELECT EXISTS ({_STALE_IDS}) "
    "OR (SELECT count(*) FROM documents) != (SELECT count(*) FROM queue_summary)"
)


def _cursor(session: Session):
    """The driver's connection under the session's own (same transaction)."""
    return session.connection().connection.dbapi_connection


def fold_stale(session: Session) -> bool:
    """Recompute the rows of the documents marked stale, in the caller's transaction (before its commit);
    True when some were. Only a transaction that wrote pays for the check (a read-only one must not take
    SQLite's write lock)."""
    if not session.in_transaction():
        return False
    cursor = _cursor(session)
    if not cursor.in_transaction or not cursor.execute(f"SELECT EXISTS ({_STALE_IDS})").fetchone()[0]:
        return False
    for statement in _FOLD:
        cursor.execute(statement)
    return True


def summary_rows(session: Session, doc_ids: list[str] | None = None) -> list[tuple]:
    """(document id, external id, title, mentions, reviewed, unsuggested, margin, marked done as 0 or
    1) for every document (or those with these external ids), in document order: from the table where it
    is current, aggregated here where it is not (stale, or no row)."""
    cursor = _cursor(session)
    if doc_ids is None:
        rows = cursor.execute(_STORED.format(also="")).fetchall()
        if not cursor.execute(_INCOMPLETE).fetchone()[0]:
            return rows
        rows += cursor.execute(_FIGURES.format(head=_READ, where=_NOT_STORED)).fetchall()
    else:
        marks = ", ".join("?" * len(doc_ids))
        rows = cursor.execute(_STORED.format(also=f" AND d.external_id IN ({marks})"), doc_ids).fetchall()
        rows += cursor.execute(
            _FIGURES.format(head=_READ, where=f"d.external_id IN ({marks}) AND {_NOT_STORED}"), doc_ids
        ).fetchall()
    rows.sort(key=lambda row: row[0])
    return rows
