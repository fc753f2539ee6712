"""What the desk looks documents up by, besides the queue counts: split and mention types (the queue's
filters), a text search over title and abstract, and a project identity that survives moving the folder.

Plain functions over `Project.session()`: the queue query itself (core/store/desk_queries.py) stays as it
is, these read only what the filters and the search need.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import select

from core.store.schema import DocumentRow, MentionRow

if TYPE_CHECKING:
    from core.store.project import Project

IDENTITY_KEY = "desk.project_uid"
SNIPPET_CONTEXT = 40


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


def document_facets(project: Project, doc_ids: Sequence[str] | None = None) -> dict[str, DocumentFacets]:
    """Split and mention types per document id (all documents, or those named), in two queries."""
    with project.session() as session:
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


def search_text(project: Project, query: str, *, limit: int = 500) -> list[TextHit]:
    """Documents whose title or abstract holds `query` (case-insensitive, spaces match any run of
    whitespace), in store order, at most `limit`. SQLite's LIKE narrows the scan for ASCII queries (it
    folds ASCII case only); the offset of the first match is found in Python, in the stored text, so it is
    a position in the abstract view."""
    words = query.split()
    if not words:
        return []
    pattern = re.compile(r"\s+".join(re.escape(word) for word in words), re.IGNORECASE)
    hits: list[TextHit] = []
    with project.session() as session:
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


def project_identity(project: Project) -> str:
    """A random id stored in the project's settings table the first time it is asked for: it moves
    with the folder (a path would not), so per-user desk state can be keyed by it."""
    value = project.settings.setting(IDENTITY_KEY)
    if isinstance(value, str) and value:
        return value
    value = uuid.uuid4().hex
    project.settings.set_setting(IDENTITY_KEY, value)
    return value
