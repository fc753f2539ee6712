"""The desk's reads, in one home (`project.desk`): the queue and `curalink stats`, and what the desk looks
documents up by besides the queue counts: split and mention types (the queue's filters), a text search over
title and abstract, and a project identity that survives moving the folder."""

from __future__ import annotations

import gc
import json
import re
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import func, select

from core.store.access import StoreAccess
from core.store.model_registry import ModelRegistry
from core.store.queue_summary import summary_rows
from core.store.schema import (
    ConceptRow,
    DecisionRow,
    DocumentRow,
    MentionRow,
    MentionStateRow,
    ModelVersionRow,
    NameRow,
    SettingRow,
    SuggestionRow,
)
from core.store.settings_store import write_setting

IDENTITY_KEY = "desk.project_uid"
SNIPPET_CONTEXT = 40


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while 20,000 rows and entries are made: none is a cycle, but
    their allocation set off full collections that walked everything the process held (a queue read
    took 430-620 ms instead of ~150 in the 20k benchmark's process, on a loaded machine)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _entry(row) -> QueueEntry:
    _id, external_id, title, mentions, reviewed, unsuggested, margin, marked_done = row
    return QueueEntry(
        external_id,
        title,
        mentions,
        reviewed,
        unsuggested,
        1.0 if margin is None else min(margin, 1.0),
        bool(marked_done),
    )


class DeskQueries:
    """What the desk reads (`project.desk`): the document queue and the stats, the queue's filters, the text
    search and the project's identity."""

    def __init__(self, store: StoreAccess, models: ModelRegistry):
        self._store = store
        self._models = models  # the stats name the active model of each kind

    def queue(self, doc_ids: Sequence[str] | None = None) -> list[QueueEntry]:
        """Per document: mention and reviewed counts, and the smallest top-two score margin (uncertainty).

        `doc_ids` limits it to those documents (the desk re-reads the row of the document a decision
        changed: the whole queue took seconds to show again with 20,000 documents). The figures are kept
        per document in `queue_summary` (core.store.queue_summary), in document order."""
        if doc_ids is None:
            with self._store.session() as session, _collector_paused():
                return [_entry(row) for row in summary_rows(session)]
        wanted = sorted(set(doc_ids))
        rows: list[tuple] = []
        with self._store.session() as session:
            for i in range(0, len(wanted), 500):  # SQLite caps bound parameters per statement
                rows += summary_rows(session, wanted[i : i + 500])
        return [_entry(row) for row in sorted(rows, key=lambda row: row[0])]

    def kb_size(self) -> tuple[int, int]:
        """(concepts, names) of the knowledge base: what the desk's status bar shows, without the counts
        of `stats` (every suggestion row: 3.2 million at 20,000 documents, read at each desk start)."""
        with self._store.session() as session:
            return (
                session.scalar(select(func.count()).select_from(ConceptRow)) or 0,
                session.scalar(select(func.count()).select_from(NameRow)) or 0,
            )

    def stats(self) -> dict:
        with self._store.session() as session:
            count = lambda model: session.scalar(select(func.count()).select_from(model))  # noqa: E731
            splits = dict(
                session.execute(select(DocumentRow.split, func.count()).group_by(DocumentRow.split)).all()
            )
            origins = dict(
                session.execute(
                    select(MentionRow.origin, func.count())
                    .where(MentionRow.removed.is_(False))
                    .group_by(MentionRow.origin)
                ).all()
            )
            vocabularies = dict(
                session.execute(
                    select(ConceptRow.vocabulary, func.count()).group_by(ConceptRow.vocabulary)
                ).all()
            )
            stats = {
                "project": str(self._store.path),
                "documents": count(DocumentRow),
                "documents_by_split": {k or "(none)": v for k, v in splits.items()},
                "mentions": session.scalar(
                    select(func.count()).select_from(MentionRow).where(MentionRow.removed.is_(False))
                ),
                "mentions_by_origin": origins,
                "concepts": count(ConceptRow),
                "concepts_by_vocabulary": vocabularies,
                "names": count(NameRow),
                "suggestions": count(SuggestionRow),
                "decisions": count(DecisionRow),
                # A mention counts as reviewed while its replayed decision stands (not reverted, not
                # a span edit alone) and the mention itself has not been deleted.
                "mentions_reviewed": session.scalar(
                    select(func.count())
                    .select_from(MentionStateRow)
                    .join(MentionRow, MentionRow.id == MentionStateRow.mention_id)
                    .where(MentionRow.removed.is_(False))
                ),
                "model_versions": count(ModelVersionRow),
            }
        for kind in ("retriever", "reranker"):
            active = self._models.active_model(kind)
            stats[f"{kind}_version"] = active.version if active else None
        return stats


    def document_facets(self, doc_ids: Sequence[str] | None = None) -> dict[str, DocumentFacets]:
        """Split and mention types per document id (all documents, or those named), in two queries."""
        with self._store.session() as session:
            query = select(DocumentRow.id, DocumentRow.external_id, DocumentRow.split)
            if doc_ids is not None:
                query = query.where(DocumentRow.external_id.in_(list(doc_ids)))
            docs = session.execute(query).all()
            types_query = (
                select(MentionRow.document_id, MentionRow.type).where(MentionRow.removed.is_(False)).distinct()
            )
            if doc_ids is not None:
                types_query = types_query.where(MentionRow.document_id.in_([row.id for row in docs]))
            types: dict[int, set[str]] = {}
            for document_id, mention_type in session.execute(types_query):
                types.setdefault(document_id, set()).add(mention_type or "")
        return {
            external_id: DocumentFacets(split or "", frozenset(types.get(row_id, ())))
            for row_id, external_id, split in docs
        }

    def search_text(self, query: str, *, limit: int = 500) -> list[TextHit]:
        """Documents whose title or abstract holds `query` (case-insensitive, spaces match any run of
        whitespace), in store order, at most `limit`. SQLite's LIKE narrows the scan for ASCII queries (it
        folds ASCII case only); the offset of the first match is found in Python, in the stored text, so it
        is a position in the abstract view."""
        words = query.split()
        if not words:
            return []
        pattern = re.compile(r"\s+".join(re.escape(word) for word in words), re.IGNORECASE)
        hits: list[TextHit] = []
        with self._store.session() as session:
            select_docs = select(DocumentRow.external_id, DocumentRow.title, DocumentRow.text).order_by(
                DocumentRow.id
            )
            for word in words:
                if word.isascii():
                    escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
                    select_docs = select_docs.where(DocumentRow.text.like(f"%{escaped}%", escape="\\"))
            for external_id, title, text in session.execute(select_docs):
                found = pattern.search(text)
                if found is None:
                    continue
                start, end = found.span()
                left = max(0, start - SNIPPET_CONTEXT)
                snippet = ("…" if left else "") + " ".join(text[left : end + SNIPPET_CONTEXT].split())
                if end + SNIPPET_CONTEXT < len(text):
                    snippet += "…"
                hits.append(TextHit(external_id, title, start, end - start, snippet))
                if len(hits) >= limit:
                    break
        return hits

    def project_identity(self) -> str:
        """A random id stored in the project's settings table the first time it is asked for: it moves
        with the folder (a path would not), so per-user desk state can be keyed by it."""
        with self._store.session() as session:
            row = session.get(SettingRow, IDENTITY_KEY)
            value = None if row is None else json.loads(row.value_json)
            if isinstance(value, str) and value:
                return value
            value = uuid.uuid4().hex
            write_setting(session, IDENTITY_KEY, value)
            return value


@dataclass(frozen=True)
class DocumentFacets:
    """A document's split ("" when none) and the types of its live mentions."""

    split: str
    types: frozenset[str]


@dataclass(frozen=True)
class TextHit:
    """A document whose text holds the query: where it first occurs and a snippet around it."""

    doc_id: str
    title: str
    offset: int
    length: int
    snippet: str


@dataclass
class QueueEntry:
    """One row of the curation queue; `margin` is 1.0 when nothing unreviewed is uncertain."""

    doc_id: str
    title: str
    mentions: int = 0
    reviewed: int = 0
    unsuggested: int = 0
    margin: float = 1.0
    marked_done: bool = False  # a curator marked the document done (D), whatever its counts say

    @property
    def status(self) -> str:
        """"done" when every mention is reviewed or a curator marked the document done (D): a curator who
        finished a document with mentions left open, out of scope, counts it done in the footer and filter."""
        if self.marked_done or (self.mentions and self.reviewed >= self.mentions):
            return "done"
        return "in progress" if self.reviewed else "unreviewed"
