"""What bulk accept would take: each undecided mention's top suggestion, with the models that scored it.

Read straight from the store (rank 1 of the stored suggestions, mentions not deleted, no decision in
force), so the count the bulk-accept dialog shows and the decisions bulk accept then writes come from
one rule, whichever scope (a document's mentions, or every mention of the project)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import select

from core.store.curation_log import MentionKey
from core.store.schema import DocumentRow, MentionRow, SuggestionRow

if TYPE_CHECKING:
    from core.store.project import Project

_CHUNK = 500  # SQLite caps bound parameters per statement


@dataclass(frozen=True)
class TopSuggestion:
    mention_id: int
    document: int  # the document's row id (counts documents)
    concept_id: str
    score: float  # the final score: the ranker's probability when a ranker scored it
    version: str  # retriever version + reranker / ranker versions, as recorded with a decision
    key: MentionKey  # the span and type it was computed for

    def scored_by(self, ranker_version: str) -> bool:
        """Whether the score is this ranker version's calibrated probability."""
        return self.version.endswith(f"ranker {ranker_version}")


def undecided_top_suggestions(
    project: Project,
    mention_ids: Sequence[int] | None = None,
    *,
    documents: Sequence[str] | None = None,
    mention_type: str | None = None,
) -> list[TopSuggestion]:
    """Top suggestions of the undecided mentions among `mention_ids` (None: the whole project), by id.
    `documents` (external ids): only theirs, as a desk's filtered queue shows them (issue 31: "the whole
    queue" took train documents the queue hid); `mention_type`: only mentions of that type."""
    if documents is not None:
        mention_ids = _mentions_of(project, documents, mention_type, mention_ids)
        mention_type = None
    if mention_ids is not None and not mention_ids:
        return []
    query = (
        select(
            SuggestionRow.mention_id,
            MentionRow.document_id,
            SuggestionRow.concept_id,
            SuggestionRow.retriever_score,
            SuggestionRow.reranker_score,
            SuggestionRow.retriever_version,
            SuggestionRow.reranker_version,
            MentionRow.start,
            MentionRow.end,
            MentionRow.type,
        )
        .join(MentionRow, MentionRow.id == SuggestionRow.mention_id)
        .where(SuggestionRow.rank == 1, MentionRow.removed.is_(False))
        .order_by(SuggestionRow.mention_id)
    )
    if mention_type is not None:
        query = query.where(MentionRow.type == mention_type)
    rows = []
    with project.session() as session:
        if mention_ids is None:
            rows = session.execute(query).all()
        else:
            ordered = sorted(set(mention_ids))
            for start in range(0, len(ordered), _CHUNK):
                chunk = ordered[start : start + _CHUNK]
                rows += session.execute(query.where(SuggestionRow.mention_id.in_(chunk))).all()
    decided = project.curation.current_decisions(mention_ids=mention_ids)
    found = []
    for row in rows:
        if row.mention_id in decided:
            continue
        score = row.reranker_score if row.reranker_score is not None else row.retriever_score
        version = "+".join(v for v in (row.retriever_version, row.reranker_version) if v)
        key = (row.start, row.end, row.type)
        found.append(TopSuggestion(row.mention_id, row.document_id, row.concept_id, score, version, key))
    return found


def _mentions_of(
    project: Project, documents: Sequence[str], mention_type: str | None, among: Sequence[int] | None
) -> list[int]:
    """The mentions (not deleted) of these documents, of `mention_type` when given, among `among`."""
    found: list[int] = []
    ordered = sorted(set(documents))
    with project.session() as session:
        for start in range(0, len(ordered), _CHUNK):
            query = (
                select(MentionRow.id)
                .join(DocumentRow, DocumentRow.id == MentionRow.document_id)
                .where(DocumentRow.external_id.in_(ordered[start : start + _CHUNK]), MentionRow.removed.is_(False))
            )
            if mention_type is not None:
                query = query.where(MentionRow.type == mention_type)
            found += session.scalars(query).all()
    if among is not None:
        wanted = set(among)
        found = [m for m in found if m in wanted]
    return sorted(found)


@dataclass(frozen=True)
class GoldTop:
    """A gold-linked mention of a held-out document and its stored top suggestion."""

    mention_id: int
    document: str  # external id
    gold: str  # the imported concept id as written ("A|B" for a composite)
    concept_id: str  # the top suggestion
    score: float
    version: str


def gold_top_suggestions(project: Project, splits: Sequence[str]) -> list[GoldTop]:
    """Every mention (not deleted) with an imported gold link in the documents of `splits`, with its stored
    top suggestion (what bulk accept would take there, decided or not), by mention id."""
    query = (
        select(
            MentionRow.id,
            DocumentRow.external_id,
            MentionRow.concept_id,
            SuggestionRow.concept_id,
            SuggestionRow.retriever_score,
            SuggestionRow.reranker_score,
            SuggestionRow.retriever_version,
            SuggestionRow.reranker_version,
        )
        .join(DocumentRow, DocumentRow.id == MentionRow.document_id)
        .join(SuggestionRow, SuggestionRow.mention_id == MentionRow.id)
        .where(
            SuggestionRow.rank == 1,
            MentionRow.removed.is_(False),
            MentionRow.concept_id != "",
            DocumentRow.split.in_(list(splits)),
        )
        .order_by(MentionRow.id)
    )
    with project.session() as session:
        rows = session.execute(query).all()
    return [
        GoldTop(
            mention_id,
            document,
            gold,
            top,
            reranker if reranker is not None else retriever,
            "+".join(v for v in (retriever_version, reranker_version) if v),
        )
        for mention_id, document, gold, top, retriever, reranker, retriever_version, reranker_version in rows
    ]
