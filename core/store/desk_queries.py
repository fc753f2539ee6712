"""Read-only summaries for the desk and `curalink stats`: the queue and project statistics."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import func, select

from core.store.schema import (
    ConceptRow,
    DecisionRow,
    DocumentRow,
    MentionRow,
    MentionStateRow,
    ModelVersionRow,
    NameRow,
    SuggestionRow,
)


class DeskQueries:
    """Mixed into `Project`: needs `self.session()`, `self.path`, `self.active_model()`."""

    def queue(self, doc_ids: Sequence[str] | None = None) -> list[QueueEntry]:
        """Per document: mention and reviewed counts, and the smallest top-two score margin (uncertainty).

        `doc_ids` limits it to those documents (the desk re-reads the row of the document a decision
        changed: the whole queue took seconds to show again with 20,000 documents)."""
        with self.session() as session:
            query = select(DocumentRow.id, DocumentRow.external_id, DocumentRow.title).order_by(
                DocumentRow.id
            )
            if doc_ids is not None:
                query = query.where(DocumentRow.external_id.in_(list(doc_ids)))
            docs = session.execute(query).all()
            mention_query = (
                select(MentionRow.id, MentionRow.document_id, MentionStateRow.mention_id.is_not(None))
                .outerjoin(MentionStateRow, MentionStateRow.mention_id == MentionRow.id)
                .where(MentionRow.removed.is_(False))
            )
            if doc_ids is not None:
                mention_query = mention_query.where(MentionRow.document_id.in_([row.id for row in docs]))
            mentions = session.execute(mention_query).all()
            score_query = (
                select(SuggestionRow.mention_id, SuggestionRow.retriever_score, SuggestionRow.reranker_score)
                .where(SuggestionRow.rank <= 2)
                .order_by(SuggestionRow.mention_id, SuggestionRow.rank)
            )
            if doc_ids is not None:
                score_query = score_query.where(SuggestionRow.mention_id.in_([row.id for row in mentions]))
            scores = session.execute(score_query).all()
        top: dict[int, list[float]] = {}
        for mention_id, retrieved, reranked in scores:
            top.setdefault(mention_id, []).append(retrieved if reranked is None else reranked)
        entries = {row_id: QueueEntry(external_id, title) for row_id, external_id, title in docs}
        for mention_id, document_id, decided in mentions:
            entry = entries[document_id]
            entry.mentions += 1
            entry.reviewed += bool(decided)
            pair = top.get(mention_id)
            if pair is None:
                entry.unsuggested += 1
                continue
            # absolute, as core.learn.ordering.margin: a composite's second row may score higher
            margin = abs(pair[0] - pair[1]) if len(pair) > 1 else 1.0
            if not decided:
                entry.margin = min(entry.margin, margin)
        return list(entries.values())

    def stats(self) -> dict:
        with self.session() as session:
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
                "project": str(self.path),
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
            active = self.active_model(kind)
            stats[f"{kind}_version"] = active.version if active else None
        return stats


@dataclass
class QueueEntry:
    """One row of the curation queue; `margin` is 1.0 when nothing unreviewed is uncertain."""

    doc_id: str
    title: str
    mentions: int = 0
    reviewed: int = 0
    unsuggested: int = 0
    margin: float = 1.0

    @property
    def status(self) -> str:
        if self.mentions and self.reviewed >= self.mentions:
            return "done"
        return "in progress" if self.reviewed else "unreviewed"
