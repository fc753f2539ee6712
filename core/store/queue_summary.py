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

from sqlalchemy import Select, case, delete, exists, func, insert, or_, select, text
from sqlalchemy.orm import Session, aliased

from core.store.schema import (
    CurationMarkRow,
    DocumentRow,
    MentionRow,
    MentionStateRow,
    QueueStaleRow,
    QueueSummaryRow,
    SuggestionRow,
)

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


def aggregate(*head) -> Select:
    """Per document: `head` columns, then live mentions, decided ones (the current-state table), mentions
    without suggestions, the smallest top-two score margin among undecided ones (absolute, as
    core.learn.ordering.margin: a composite's second row may score higher; reranker score when present;
    None when none is uncertain) and the newest "done" mark's value (as core.store.curation_marks keeps
    them in force). Python-side aggregation of 200,000 mentions took seconds."""
    first, second = aliased(SuggestionRow), aliased(SuggestionRow)
    marked_done = (
        select(CurationMarkRow.value)
        .where(
            CurationMarkRow.document_id == DocumentRow.id,
            CurationMarkRow.mention_id.is_(None),
            CurationMarkRow.kind == DONE,
        )
        .order_by(CurationMarkRow.id.desc())
        .limit(1)
        .scalar_subquery()
    )
    score = lambda row: func.coalesce(row.reranker_score, row.retriever_score)  # noqa: E731
    margin = case(
        (MentionStateRow.mention_id.is_not(None), None),
        (first.id.is_(None), None),
        (second.id.is_(None), 1.0),
        else_=func.abs(score(first) - score(second)),
    )
    return (
        select(
            *head,
            func.count(MentionRow.id),
            func.count(MentionStateRow.mention_id),
            func.count(MentionRow.id) - func.count(first.id),
            func.min(margin),
            marked_done,
        )
        .select_from(DocumentRow)
        .outerjoin(MentionRow, (MentionRow.document_id == DocumentRow.id) & MentionRow.removed.is_(False))
        .outerjoin(MentionStateRow, MentionStateRow.mention_id == MentionRow.id)
        .outerjoin(first, (first.mention_id == MentionRow.id) & (first.rank == 1))
        .outerjoin(second, (second.mention_id == MentionRow.id) & (second.rank == 2))
        .group_by(DocumentRow.id)
    )


def fold_stale(session: Session) -> int:
    """Recompute the rows of the documents marked stale, in the caller's transaction (before its commit);
    returns how many were stale. Only a transaction that wrote pays for the check (a read-only one must
    not take SQLite's write lock)."""
    if not session.in_transaction() or not session.connection().connection.dbapi_connection.in_transaction:
        return 0
    stale = select(QueueStaleRow.document_id)
    count = session.scalar(select(func.count()).select_from(QueueStaleRow))
    if not count:
        return 0
    session.execute(delete(QueueSummaryRow).where(QueueSummaryRow.document_id.in_(stale)))
    columns = ("document_id", "mentions", "reviewed", "unsuggested", "margin", "marked_done")
    figures = aggregate(DocumentRow.id).where(DocumentRow.id.in_(stale))
    session.execute(insert(QueueSummaryRow).from_select(columns, _as_flag(figures)))
    session.execute(delete(QueueStaleRow))
    return count


def _as_flag(figures: Select) -> Select:
    """The aggregate with its "done" value turned into the stored flag (a non-empty value is in force)."""
    inner = figures.subquery()
    *kept, done = inner.columns
    return select(*kept, func.coalesce(done, "") != "")


_STORED = (  # the covering index ix_documents_queue answers the documents' side without their texts
    "SELECT d.id, d.external_id, d.title, q.mentions, q.reviewed, q.unsuggested, q.margin, q.marked_done "
    "FROM documents d JOIN queue_summary q ON q.document_id = d.id "
    "WHERE d.id NOT IN (SELECT document_id FROM queue_stale) ORDER BY d.id"
)
_INCOMPLETE = (  # documents the table does not answer for: stale, or (made by hand) without a row
    "SELECT EXISTS (SELECT 1 FROM queue_stale) "
    "OR (SELECT count(*) FROM documents) != (SELECT count(*) FROM queue_summary)"
)


def summary_rows(session: Session, doc_ids: list[str] | None = None) -> list[tuple]:
    """(document id, external id, title, mentions, reviewed, unsuggested, margin, marked done: a truth
    value, not always a bool) for every
    document (or those with these external ids), in document order: from the table where it is current,
    aggregated here where it is not (stale, or no row). The whole queue is read with the driver's own
    cursor: SQLAlchemy's row processing doubled the read of 20,000 rows."""
    head = (DocumentRow.id, DocumentRow.external_id, DocumentRow.title)
    live = aggregate(*head)
    if doc_ids is None:
        cursor = session.connection().connection.dbapi_connection
        rows = cursor.execute(_STORED).fetchall()  # "marked done" as SQLite's 0 or 1
        if not cursor.execute(_INCOMPLETE).fetchone()[0]:
            return rows
    else:
        stored = (
            select(
                *head,
                QueueSummaryRow.mentions,
                QueueSummaryRow.reviewed,
                QueueSummaryRow.unsuggested,
                QueueSummaryRow.margin,
                QueueSummaryRow.marked_done,
            )
            .join(QueueSummaryRow, QueueSummaryRow.document_id == DocumentRow.id)
            .where(
                DocumentRow.id.not_in(select(QueueStaleRow.document_id)), DocumentRow.external_id.in_(doc_ids)
            )
        )
        rows = [tuple(row) for row in session.execute(stored)]
        live = live.where(DocumentRow.external_id.in_(doc_ids))
    live = live.where(
        or_(
            DocumentRow.id.in_(select(QueueStaleRow.document_id)),
            ~exists().where(QueueSummaryRow.document_id == DocumentRow.id),
        )
    )
    rows += [tuple(row) for row in session.execute(live)]
    rows.sort(key=lambda row: row[0])
    return rows
