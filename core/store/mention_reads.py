"""Reads of mentions for the curation jobs (`project.documents.occurrence_documents`, `live_mention_texts`,
`live_mention`): the documents where a string may occur with the spans already taken, every live mention's
text, and one mention's text and type. Each runs inside the caller's session; deleted mentions are left out."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.errors import CuralinkError
from core.store.schema import DocumentRow, MentionRow

_CHUNK = 500  # SQLite caps bound parameters per statement


def occurrence_documents(
    session: Session, path: Path, document: str | None, containing: str | None
) -> list[tuple[str, str, list[tuple[int, int]]]]:
    """(document id, text, spans of its live mentions) in store order: `document` only, or every document,
    narrowed in SQL to those whose text holds `containing` (an ASCII word: LIKE folds ASCII case only)."""
    query = select(DocumentRow.id, DocumentRow.external_id, DocumentRow.text).order_by(DocumentRow.id)
    if document is not None:
        query = query.where(DocumentRow.external_id == document)
    elif containing is not None:
        query = query.where(DocumentRow.text.ilike(f"%{_like(containing)}%", escape="\\"))
    rows = session.execute(query).all()
    if document is not None and not rows:
        raise CuralinkError(f"no document {document!r} in {path}")
    taken: dict[int, list[tuple[int, int]]] = {}
    ids = [row.id for row in rows]
    for first in range(0, len(ids), _CHUNK):
        spans = session.execute(
            select(MentionRow.document_id, MentionRow.start, MentionRow.end).where(
                MentionRow.document_id.in_(ids[first : first + _CHUNK]), MentionRow.removed.is_(False)
            )
        )
        for document_id, start, end in spans:
            taken.setdefault(document_id, []).append((start, end))
    return [(external_id, text, taken.get(row_id, [])) for row_id, external_id, text in rows]


def _like(word: str) -> str:
    return word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def live_mention_texts(session: Session) -> dict[int, str]:
    """Mention id -> text, of every mention not deleted."""
    return dict(session.execute(select(MentionRow.id, MentionRow.text).where(MentionRow.removed.is_(False))).all())


def live_mention(session: Session, mention_id: int) -> tuple[str, str]:
    """(text, type) of a mention not deleted."""
    row = session.get(MentionRow, mention_id)
    if row is None or row.removed:
        raise CuralinkError(f"no mention with id {mention_id}")
    return row.text, row.type
