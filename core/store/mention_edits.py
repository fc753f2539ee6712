"""A curator's edits of a mention after import (`project.documents.add_mention`, `set_mention_removed`,
`set_mention_span`, `set_mention_type`), each inside the caller's session: the edit, the suggestions it makes
stale, and, with a curator, the decision that logs it (provenance) in the same transaction."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.errors import CuralinkError
from core.store import span_infons
from core.store.curation_log import NewDecision, decision_row, lock_mentions
from core.store.schema import DocumentRow, MentionRow, SuggestionRow


def add_mention(
    session: Session, path: Path, document_id: str, start: int, end: int, type: str, curator: str | None
) -> int:
    document = session.scalar(select(DocumentRow).where(DocumentRow.external_id == document_id))
    if document is None:
        raise CuralinkError(f"no document {document_id!r} in {path}")
    if not 0 <= start < end <= len(document.text):
        raise CuralinkError(f"{document_id}: span [{start}, {end}) is outside the text")
    row = MentionRow(
        document_id=document.id,
        start=start,
        end=end,
        text=document.text[start:end],
        type=type,
        origin="curator",
    )
    session.add(row)
    session.flush()
    if curator is not None:
        edit = NewDecision(row.id, "add_mention", curator=curator, detail={"start": start, "end": end})
        session.add(decision_row(edit))
    return row.id


def set_mention_removed(session: Session, mention_id: int, removed: bool, curator: str | None) -> None:
    row = session.get(MentionRow, mention_id)
    if row is None:
        raise CuralinkError(f"no mention with id {mention_id}")
    row.removed = removed
    if curator is not None:
        detail = {"start": row.start, "end": row.end, "restored": not removed}
        session.add(decision_row(NewDecision(mention_id, "delete_mention", curator=curator, detail=detail)))


def set_mention_span(session: Session, mention_id: int, start: int, end: int, curator: str | None) -> tuple[int, int]:
    lock_mentions(session, [mention_id])
    row = session.get(MentionRow, mention_id)
    if row is None:
        raise CuralinkError(f"no mention with id {mention_id}")
    text = row.document.text
    if not 0 <= start < end <= len(text):
        raise CuralinkError(f"mention {mention_id}: span [{start}, {end}) is outside the text")
    old = (row.start, row.end)
    if old != (start, end):
        session.query(SuggestionRow).filter(SuggestionRow.mention_id == mention_id).delete()
    row.start, row.end, row.text = start, end, text[start:end]
    infons = json.loads(row.infons_json)
    updated = span_infons.moved(infons, old, (start, end))
    if updated is not infons:
        row.infons_json = json.dumps(updated, ensure_ascii=False)
    if curator is not None:
        detail = {"old_start": old[0], "old_end": old[1], "new_start": start, "new_end": end}
        session.add(decision_row(NewDecision(mention_id, "adjust_span", curator=curator, detail=detail)))
    return old


def set_mention_type(session: Session, mention_id: int, type: str, curator: str | None) -> str:
    lock_mentions(session, [mention_id])
    row = session.get(MentionRow, mention_id)
    if row is None:
        raise CuralinkError(f"no mention with id {mention_id}")
    if any(ch in type for ch in "\t\n\r"):
        raise CuralinkError(f"mention {mention_id}: a type cannot hold tabs or line breaks")
    old = row.type
    if old != type:
        session.query(SuggestionRow).filter(SuggestionRow.mention_id == mention_id).delete()
    row.type = type
    if curator is not None:
        detail = {"old_type": old, "new_type": type}
        session.add(decision_row(NewDecision(mention_id, "change_type", curator=curator, detail=detail)))
    return old
