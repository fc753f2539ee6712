"""Curator marks beside the decisions: a note, a "flag for later" and "document done".

A note or a flag sits on a mention or a document; "done" on a document. Marks are append-only like the
decision log (`curation_marks`): setting one writes a row with the curator and the time, clearing it writes
an empty value, so the history of who noted what stays. Exports carry the marks in force as infons
(`curation_infons`); a JSONL or BioC file read back turns those infons into marks again (`restore_marks`,
run by every import), so a note survives a round trip through a file.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from core.errors import CuralinkError
from core.store.access import StoreAccess
from core.store.schema import CurationMarkRow, DocumentRow, MentionRow

NOTE, FLAG, DONE = "note", "flag", "done"
MARK_KINDS = (NOTE, FLAG, DONE)
SET = "true"  # the value of a flag or done mark that is on
MAX_NOTE = 10_000
# Export infons: the mark's value, then who set it and when (ISO time, UTC).
INFON_KEYS = {NOTE: "curator_note", FLAG: "flagged", DONE: "curation_done"}
_CHUNK = 500


@dataclass(frozen=True)
class Mark:
    kind: str
    value: str
    curator: str
    created_at: datetime


def curation_infons(marks: dict[str, Mark]) -> dict[str, str]:
    """The infons a writer gives the marks in force (`curator_note`, `flagged`, `curation_done` and their
    `_by` / `_at`)."""
    infons: dict[str, str] = {}
    for kind, mark in marks.items():
        key = INFON_KEYS[kind]
        infons[key] = mark.value
        infons[f"{key}_by"] = mark.curator
        when = mark.created_at
        infons[f"{key}_at"] = (when if when.tzinfo else when.replace(tzinfo=UTC)).isoformat()
    return infons


def _check(kind: str, value: str, mention_id: int | None) -> None:
    if kind not in MARK_KINDS:
        raise CuralinkError(f"unknown mark {kind!r}; use one of {', '.join(MARK_KINDS)}")
    if kind == DONE and mention_id is not None:
        raise CuralinkError(f"mention {mention_id}: only a document can be marked done")
    if kind != NOTE and value not in ("", SET):
        raise CuralinkError(f"a {kind} mark is {SET!r} or empty, not {value!r}")
    if len(value) > MAX_NOTE:
        raise CuralinkError(f"a note holds at most {MAX_NOTE} characters; this one has {len(value)}")


def _in_force(rows) -> dict:
    """(target, kind) -> newest row, for rows in id order; cleared marks are left out."""
    newest: dict = {}
    for row in rows:
        newest[(row.mention_id if row.mention_id is not None else row.document_id, row.kind)] = row
    return {key: row for key, row in newest.items() if row.value}


def _mark(row: CurationMarkRow) -> Mark:
    return Mark(row.kind, row.value, row.curator, row.created_at)


class CurationMarks:
    """Curation marks and notes on documents and mentions (`project.marks`)."""

    def __init__(self, store: StoreAccess):
        self._store = store

    def set_mark(
        self,
        kind: str,
        value: str,
        *,
        document: str | None = None,
        mention_id: int | None = None,
        curator: str = "",
    ) -> int:
        """Set (or, with "", clear) a mark on a mention or, without `mention_id`, on the document
        `document` (its external id); returns the new row's id."""
        _check(kind, value, mention_id)
        with self._store.session() as session:
            if mention_id is not None:
                found = session.execute(
                    select(MentionRow.document_id, MentionRow.removed).where(MentionRow.id == mention_id)
                ).first()
                if found is None:
                    raise CuralinkError(f"no mention with id {mention_id}")
                if found.removed:
                    raise CuralinkError(f"mention {mention_id} was deleted; its {kind} was not stored")
                document_id = found.document_id
            else:
                document_id = session.scalar(
                    select(DocumentRow.id).where(DocumentRow.external_id == document)
                )
                if document_id is None:
                    raise CuralinkError(f"no document {document!r} in {self._store.path}")
            row = CurationMarkRow(
                document_id=document_id, mention_id=mention_id, kind=kind, value=value, curator=curator
            )
            session.add(row)
            session.flush()
            return row.id

    def mention_marks(self, mention_ids: Sequence[int] | None = None) -> dict[int, dict[str, Mark]]:
        """The marks in force per mention (all mentions when `mention_ids` is None)."""
        found: dict[int, dict[str, Mark]] = {}
        with self._store.session() as session:
            query = select(CurationMarkRow).where(CurationMarkRow.mention_id.is_not(None))
            chunks = [None] if mention_ids is None else _chunks(mention_ids)
            for chunk in chunks:
                scoped = query if chunk is None else query.where(CurationMarkRow.mention_id.in_(chunk))
                rows = session.scalars(scoped.order_by(CurationMarkRow.id))
                for (mention_id, kind), row in _in_force(rows).items():
                    found.setdefault(mention_id, {})[kind] = _mark(row)
        return found

    def document_marks(self, doc_ids: Sequence[str] | None = None) -> dict[str, dict[str, Mark]]:
        """The marks in force per document (by external id; all documents when `doc_ids` is None)."""
        query = (
            select(CurationMarkRow, DocumentRow.external_id)
            .join(DocumentRow, DocumentRow.id == CurationMarkRow.document_id)
            .where(CurationMarkRow.mention_id.is_(None))
            .order_by(CurationMarkRow.id)
        )
        if doc_ids is not None:
            query = query.where(DocumentRow.external_id.in_(list(doc_ids)))
        with self._store.session() as session:
            pairs = session.execute(query).all()
        names = {row.document_id: external for row, external in pairs}
        found: dict[str, dict[str, Mark]] = {}
        for (document_id, kind), row in _in_force(row for row, _ in pairs).items():
            found.setdefault(names[document_id], {})[kind] = _mark(row)
        return found

    def noted_or_flagged(self, doc_ids: Sequence[str] | None = None) -> set[str]:
        """Documents (external ids) with a note or a flag in force on themselves or on a live mention of
        theirs: the queue's "flagged or noted" filter. One read of the mark rows (they are few)."""
        query = (
            select(CurationMarkRow, DocumentRow.external_id)
            .join(DocumentRow, DocumentRow.id == CurationMarkRow.document_id)
            .outerjoin(MentionRow, MentionRow.id == CurationMarkRow.mention_id)
            .where(CurationMarkRow.kind.in_((NOTE, FLAG)), MentionRow.removed.is_not(True))
            .order_by(CurationMarkRow.id)
        )
        if doc_ids is not None:
            query = query.where(DocumentRow.external_id.in_(list(doc_ids)))
        with self._store.session() as session:
            pairs = session.execute(query).all()
        names = {row.document_id: external for row, external in pairs}
        return {names[row.document_id] for row in _in_force(row for row, _ in pairs).values()}

    def mark_history(self, *, document: str | None = None, mention_id: int | None = None) -> list[Mark]:
        """Every mark ever set on the mention (or the document itself), oldest first, clears included."""
        query = select(CurationMarkRow).order_by(CurationMarkRow.id)
        if mention_id is not None:
            query = query.where(CurationMarkRow.mention_id == mention_id)
        else:
            query = query.join(DocumentRow, DocumentRow.id == CurationMarkRow.document_id).where(
                DocumentRow.external_id == document, CurationMarkRow.mention_id.is_(None)
            )
        with self._store.session() as session:
            return [_mark(row) for row in session.scalars(query)]


def _chunks(ids: Sequence[int]) -> list[list[int]]:
    ordered = sorted(set(ids))
    return [ordered[i : i + _CHUNK] for i in range(0, len(ordered), _CHUNK)]


def _marks_in(infons: dict) -> list[tuple[str, str, str, datetime | None]]:
    """(kind, value, curator, time) of the mark infons an export wrote; keys not ours are left alone."""
    found = []
    for kind, key in INFON_KEYS.items():
        value = infons.get(key)
        if kind == NOTE:
            if value in (None, ""):
                continue
            value = str(value)
        elif str(value).strip().lower() in ("true", "1", "yes"):
            value = SET
        else:  # "false", "", a JSON false: not set
            continue
        when = None
        stamp = infons.get(f"{key}_at")
        if isinstance(stamp, str):
            try:
                when = datetime.fromisoformat(stamp)
            except ValueError:
                when = None
        if when is not None and when.tzinfo is not None:
            when = when.astimezone(UTC).replace(tzinfo=None)
        found.append((kind, value[:MAX_NOTE], str(infons.get(f"{key}_by") or ""), when))
    return found


def _strip(infons: dict) -> dict:
    keys = {f"{key}{suffix}" for key in INFON_KEYS.values() for suffix in ("", "_by", "_at")}
    return {k: v for k, v in infons.items() if k not in keys}


def _mentions_any(column):
    """A cheap SQL pre-filter: the JSON text names one of the mark infons."""
    clauses = [column.like(f'%"{key}"%') for key in INFON_KEYS.values()]
    return or_(*clauses)


def restore_marks(session: Session, document_ids: Sequence[int]) -> int:
    """Turn the mark infons of freshly imported documents and mentions into marks (in the import's
    transaction), and drop them from the stored infons so a later clear is not undone by an export."""
    rows: list[CurationMarkRow] = []
    for chunk in _chunks(document_ids):
        documents = session.scalars(
            select(DocumentRow).where(DocumentRow.id.in_(chunk), _mentions_any(DocumentRow.metadata_json))
        )
        for document in documents:
            metadata = json.loads(document.metadata_json)
            found = _marks_in(metadata)
            if found:
                rows += [_row(document.id, None, *mark) for mark in found]
                document.metadata_json = json.dumps(_strip(metadata), ensure_ascii=False)
        mentions = session.scalars(
            select(MentionRow).where(MentionRow.document_id.in_(chunk), _mentions_any(MentionRow.infons_json))
        )
        for mention in mentions:
            infons = json.loads(mention.infons_json)
            found = [m for m in _marks_in(infons) if m[0] != DONE]
            if found:
                rows += [_row(mention.document_id, mention.id, *mark) for mark in found]
                mention.infons_json = json.dumps(_strip(infons), ensure_ascii=False)
    session.add_all(rows)
    return len(rows)


def _row(document_id, mention_id, kind, value, curator, when) -> CurationMarkRow:
    row = CurationMarkRow(
        document_id=document_id, mention_id=mention_id, kind=kind, value=value, curator=curator
    )
    if when is not None:
        row.created_at = when
    return row
