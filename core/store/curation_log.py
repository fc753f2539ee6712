"""Suggestions and the append-only decision log."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import insert, select

from core.documents import Candidate
from core.errors import CuralinkError
from core.store.curation import EDIT_ACTIONS, replay
from core.store.schema import (
    ConceptRow,
    DecisionRow,
    MentionRow,
    SuggestionRow,
)

DECISION_ACTIONS = (
    "accept",
    "reject",
    "correct",
    "nil",
    "ambiguous",
    "revert",
    *EDIT_ACTIONS,
)


@dataclass(frozen=True)
class NewDecision:
    """One decision to write with `Project.record_decisions` (the bulk form of `record_decision`)."""

    mention_id: int
    action: str
    concept_id: str = ""
    curator: str = ""
    model_version: str = ""
    detail: dict = field(default_factory=dict)


class CurationLog:
    """Mixed into `Project`: needs `self.session()`."""

    def store_suggestions(
        self,
        suggestions: dict[int, Sequence[Candidate]],
        *,
        retriever_version: str = "",
        reranker_version: str = "",
    ) -> int:
        """Replace the suggestions of the given mentions (by database id) with new ranked candidates."""
        rows = [
            {
                "mention_id": mention_id,
                "concept_id": c.concept_id,
                "rank": rank,
                "matched_name": c.matched_name,
                "retriever_score": float(c.retriever_score),
                "reranker_score": None if c.reranker_score is None else float(c.reranker_score),
                "retriever_version": retriever_version,
                "reranker_version": reranker_version,
            }
            for mention_id, candidates in suggestions.items()
            for rank, c in enumerate(candidates, start=1)
        ]
        with self.session() as session:
            if suggestions:
                session.query(SuggestionRow).filter(SuggestionRow.mention_id.in_(list(suggestions))).delete()
            if rows:
                session.execute(insert(SuggestionRow), rows)
        return len(rows)

    def suggestions(self, mention_id: int) -> list[Candidate]:
        with self.session() as session:
            rows = session.scalars(
                select(SuggestionRow)
                .where(SuggestionRow.mention_id == mention_id)
                .order_by(SuggestionRow.rank)
            ).all()
            names = dict(
                session.execute(
                    select(ConceptRow.id, ConceptRow.preferred_name).where(
                        ConceptRow.id.in_([r.concept_id for r in rows])
                    )
                ).all()
            )
        return [
            Candidate(
                r.concept_id, names.get(r.concept_id, ""), r.matched_name, r.retriever_score, r.reranker_score
            )
            for r in rows
        ]

    def record_decision(
        self,
        mention_id: int,
        action: str,
        *,
        concept_id: str = "",
        curator: str = "",
        model_version: str = "",
        detail: dict | None = None,
    ) -> int:
        return self.record_decisions(
            [NewDecision(mention_id, action, concept_id, curator, model_version, detail or {})]
        )[0]

    def record_decisions(self, decisions: Sequence[NewDecision]) -> list[int]:
        """Write many decisions in one transaction (a bulk accept is all or nothing); returns their ids."""
        decisions = list(decisions)
        for decision in decisions:
            if decision.action not in DECISION_ACTIONS:
                raise CuralinkError(
                    f"unknown decision {decision.action!r}; use one of {', '.join(DECISION_ACTIONS)}"
                )
        if not decisions:
            return []
        with self.session() as session:
            wanted = {d.mention_id for d in decisions}
            known: set[int] = set()
            ordered = sorted(wanted)
            for start in range(0, len(ordered), 500):  # SQLite caps bound parameters per statement
                chunk = ordered[start : start + 500]
                known.update(session.scalars(select(MentionRow.id).where(MentionRow.id.in_(chunk))))
            missing = sorted(wanted - known)
            if missing:
                raise CuralinkError(f"no mention with id {missing[0]}")
            rows = [decision_row(d) for d in decisions]
            session.add_all(rows)
            session.flush()
            return [row.id for row in rows]

    def current_decisions(
        self, curator: str | None = None, *, mention_ids: Sequence[int] | None = None
    ) -> dict[int, DecisionRow]:
        """The effective decision per mention, replaying the append-only history (reverts undo)."""
        with self.session() as session:
            query = select(DecisionRow).order_by(DecisionRow.id)
            if curator is not None:
                query = query.where(DecisionRow.curator == curator)
            if mention_ids is not None:
                query = query.where(DecisionRow.mention_id.in_(list(mention_ids)))
            return replay(session.scalars(query))

    def suggestions_for(self, mention_ids: Sequence[int]) -> dict[int, list[Candidate]]:
        """Ranked candidates of many mentions in one query, so opening an abstract costs one round trip."""
        found: dict[int, list[Candidate]] = {mention_id: [] for mention_id in mention_ids}
        if not found:
            return found
        with self.session() as session:
            rows = session.execute(
                select(SuggestionRow, ConceptRow.preferred_name)
                .outerjoin(ConceptRow, ConceptRow.id == SuggestionRow.concept_id)
                .where(SuggestionRow.mention_id.in_(list(found)))
                .order_by(SuggestionRow.mention_id, SuggestionRow.rank)
            ).all()
        for row, preferred in rows:
            found[row.mention_id].append(
                Candidate(
                    row.concept_id, preferred or "", row.matched_name, row.retriever_score, row.reranker_score
                )
            )
        return found

    def suggestion_version(self, mention_id: int) -> str:
        """The model version(s) behind a mention's suggestions, recorded with the decision acted on them."""
        with self.session() as session:
            row = session.execute(
                select(SuggestionRow.retriever_version, SuggestionRow.reranker_version)
                .where(SuggestionRow.mention_id == mention_id)
                .limit(1)
            ).first()
        if row is None:
            return ""
        return "+".join(v for v in row if v)


def decision_row(decision: NewDecision) -> DecisionRow:
    """The ORM row of one new decision (also written by mention edits, in their transaction)."""
    return DecisionRow(
        mention_id=decision.mention_id,
        action=decision.action,
        concept_id=decision.concept_id,
        curator=decision.curator,
        model_version=decision.model_version,
        detail_json=json.dumps(decision.detail),
    )
