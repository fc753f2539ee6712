"""Suggestions and the append-only decision log.

Suggestions are only ever those computed for a mention's current span and type: an edit deletes them in
its own transaction, `store_suggestions` drops lists computed for a span that has changed since (a
background linker that finishes late cannot bring them back), and a decision that says which span its
suggestions were for is refused when the mention has moved on.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import insert, select, update
from sqlalchemy.orm import Session

from core.documents import Candidate
from core.errors import CuralinkError
from core.store.access import StoreAccess
from core.store.curation import LINKING_ACTIONS, replay
from core.store.decision_checks import (
    DECISION_ACTIONS,
    MentionKey,
    check_removed,
    check_shape,
    check_suggestions,
    chunks,
    concept_parts,
    undecided_only,
)
from core.store.mention_state import apply_decisions
from core.store.op_changes import OpChanges
from core.store.schema import (
    ConceptRow,
    DecisionRow,
    DocumentRow,
    MentionRow,
    MentionStateRow,
    SuggestionRow,
)

log = logging.getLogger(__name__)

__all__ = [  # DECISION_ACTIONS, MentionKey and concept_parts live in core.store.decision_checks
    "DECISION_ACTIONS",
    "CurationLog",
    "Decision",
    "MentionKey",
    "NewDecision",
    "SuggestionSet",
    "concept_parts",
    "decision_row",
    "lock_mentions",
    "mention_key",
]



@dataclass(frozen=True)
class NewDecision:
    """One decision to write with `Project.curation.record_decisions` (the bulk form of `record_decision`)."""

    mention_id: int
    action: str
    concept_id: str = ""
    curator: str = ""
    model_version: str = ""
    detail: dict = field(default_factory=dict)
    # The span and type of the suggestions this decision acted on; refused when the mention has changed.
    suggested_for: MentionKey | None = None


@dataclass(frozen=True)
class Decision:
    """A stored decision, detached from the database session (the store returns values, not ORM rows)."""

    id: int
    mention_id: int
    action: str
    concept_id: str
    curator: str
    model_version: str
    detail_json: str
    created_at: datetime

    @classmethod
    def of(cls, row: DecisionRow) -> Decision:
        return cls(
            row.id,
            row.mention_id,
            row.action,
            row.concept_id,
            row.curator,
            row.model_version,
            row.detail_json,
            row.created_at,
        )


@dataclass(frozen=True)
class SuggestionSet:
    """A mention's ranked candidates and the span and type they were computed for (its current ones)."""

    key: MentionKey
    candidates: list[Candidate]


def mention_key(mention) -> MentionKey:
    """The span and type of a `Mention` (or a mention row)."""
    return (mention.start, mention.end, mention.type)


def lock_mentions(session: Session, mention_ids: Sequence[int]) -> dict[int, MentionKey]:
    """Take the write lock first (a no-op update), then read the mentions' current spans and types.

    SQLite starts a transaction lazily at the first write; writing before reading makes the check and
    the write that follows one atomic step against a span edit committed from another thread.
    """
    keys: dict[int, MentionKey] = {}
    for chunk in chunks(mention_ids):
        session.execute(update(MentionRow).where(MentionRow.id.in_(chunk)).values(start=MentionRow.start))
        rows = session.execute(
            select(MentionRow.id, MentionRow.start, MentionRow.end, MentionRow.type).where(
                MentionRow.id.in_(chunk)
            )
        )
        keys.update({row.id: (row.start, row.end, row.type) for row in rows})
    return keys


def _external_ids(session: Session, mention_ids: Sequence[int]) -> set[str]:
    """The documents (external ids) these mentions belong to."""
    found: set[str] = set()
    for chunk in chunks(mention_ids):
        found.update(
            session.scalars(
                select(DocumentRow.external_id)
                .join(MentionRow, MentionRow.document_id == DocumentRow.id)
                .where(MentionRow.id.in_(chunk))
            )
        )
    return found


class CurationLog:
    """Suggestions and the append-only decision log (`project.curation`)."""

    def __init__(self, store: StoreAccess):
        self._store = store

    def store_suggestions(
        self,
        suggestions: Mapping[int, Sequence[Candidate]],
        *,
        computed_for: Mapping[int, MentionKey] | None = None,
        retriever_version: str = "",
        reranker_version: str = "",
    ) -> int:
        """Replace the suggestions of the given mentions (by database id) with new ranked candidates.

        `computed_for` names the span and type each list was computed for (required for a non-empty
        list): a list whose mention has since moved or changed type is dropped, in the same transaction
        that would have stored it. An empty list without a key just clears the mention's suggestions.
        Returns the number of candidate rows stored.
        """
        computed_for = computed_for or {}
        unkeyed = [m for m, ranked in suggestions.items() if ranked and m not in computed_for]
        if unkeyed:
            raise CuralinkError(
                f"suggestions for mention {unkeyed[0]} do not say which span they were computed for"
            )
        with self._store.session() as session:
            current = lock_mentions(session, list(suggestions))
            missing = sorted(set(suggestions) - set(current))
            if missing:
                raise CuralinkError(f"no mention with id {missing[0]}")
            fresh = {
                m: ranked
                for m, ranked in suggestions.items()
                if m not in computed_for or tuple(computed_for[m]) == current[m]
            }
            stale = len(suggestions) - len(fresh)
            if stale:
                log.info("dropped the suggestions of %d mention(s) edited while they were computed", stale)
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
                for mention_id, candidates in fresh.items()
                for rank, c in enumerate(candidates, start=1)
            ]
            for chunk in chunks(list(fresh)):
                session.query(SuggestionRow).filter(SuggestionRow.mention_id.in_(chunk)).delete()
            if rows:
                session.execute(insert(SuggestionRow), rows)
        return len(rows)

    def suggestions(self, mention_id: int) -> list[Candidate]:
        with self._store.session() as session:
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
        suggested_for: MentionKey | None = None,
    ) -> int:
        return self.record_decisions(
            [NewDecision(mention_id, action, concept_id, curator, model_version, detail or {}, suggested_for)]
        )[0]

    def record_decisions(self, decisions: Sequence[NewDecision]) -> list[int]:
        """Write many decisions in one transaction (a bulk accept is all or nothing); returns their ids."""
        return list(self.decide(decisions).decision_ids)

    def decide(self, decisions: Sequence[NewDecision], *, skip_decided: bool = False) -> OpChanges:
        """Write many decisions in one transaction (a bulk accept is all or nothing); returns what changed.

        With `skip_decided`, decisions on mentions that hold a decision when the write lock is taken are
        left out (a propagation to identical mentions never overwrites a curator's decision).

        A link may name several concepts (`A|B|C`, a composite mention). A decision made on suggestions
        says which span and type they were for (`suggested_for`) and is refused when the mention has
        changed since; an accept of a mention whose span or type was edited must name concepts among its
        current suggestions (they are, by construction, computed for the current span).
        """
        decisions = list(decisions)
        for decision in decisions:
            check_shape(decision)
        if not decisions:
            return OpChanges()
        with self._store.session() as session:
            current = lock_mentions(session, [d.mention_id for d in decisions])
            missing = sorted({d.mention_id for d in decisions} - set(current))
            if missing:
                raise CuralinkError(f"no mention with id {missing[0]}")
            if skip_decided:
                decisions = undecided_only(session, decisions)
                if not decisions:
                    return OpChanges()
            check_removed(session, decisions)
            check_suggestions(session, decisions, current)
            rows = [decision_row(d) for d in decisions]
            session.add_all(rows)
            session.flush()
            change = apply_decisions(session, rows)
            return OpChanges(
                tuple(row.id for row in rows),
                change.mention_ids,
                frozenset(_external_ids(session, list(change.mention_ids))),
                change.newly_decided,
                change.undecided,
            )

    def current_decisions(
        self, curator: str | None = None, *, mention_ids: Sequence[int] | None = None
    ) -> dict[int, Decision]:
        """The decision in force per mention (reverts undo), read from the current-state table.

        With `curator`, that curator's own history replayed alone (an agreement report compares two
        curators' independent views; the table holds the shared present)."""
        with self._store.session() as session:
            if curator is not None:
                query = select(DecisionRow).where(DecisionRow.curator == curator).order_by(DecisionRow.id)
                if mention_ids is not None:
                    query = query.where(DecisionRow.mention_id.in_(list(mention_ids)))
                return {m: Decision.of(row) for m, row in replay(session.scalars(query)).items()}
            query = select(DecisionRow).join(MentionStateRow, MentionStateRow.decision_id == DecisionRow.id)
            if mention_ids is None:
                return {row.mention_id: Decision.of(row) for row in session.scalars(query)}
            found: dict[int, Decision] = {}
            for chunk in chunks(mention_ids):
                rows = session.scalars(query.where(MentionStateRow.mention_id.in_(chunk)))
                found.update((row.mention_id, Decision.of(row)) for row in rows)
            return found

    def linked_to(self, concept_ids: Iterable[str]) -> list[int]:
        """Mentions whose decision in force links one of these ids (as written in the decision)."""
        query = select(MentionStateRow.mention_id).join(DecisionRow, DecisionRow.id == MentionStateRow.decision_id)
        query = query.where(DecisionRow.action.in_(LINKING_ACTIONS))
        with self._store.session() as session:
            groups = chunks(sorted(concept_ids))
            return [m for chunk in groups for m in session.scalars(query.where(DecisionRow.concept_id.in_(chunk)))]

    def decision_history(self, curator: str | None = None) -> list[Decision]:
        """Every decision (one curator's, or all), oldest first: the log as it was written."""
        with self._store.session() as session:
            query = select(DecisionRow).order_by(DecisionRow.id)
            if curator is not None:
                query = query.where(DecisionRow.curator == curator)
            return [Decision.of(row) for row in session.scalars(query)]

    def curators(self) -> list[str]:
        """Every named curator who recorded a decision, in order of first appearance."""
        with self._store.session() as session:
            names = session.scalars(select(DecisionRow.curator).order_by(DecisionRow.id)).all()
        return [n for n in dict.fromkeys(names) if n]

    def suggestions_for(self, mention_ids: Sequence[int]) -> dict[int, list[Candidate]]:
        """Ranked candidates of many mentions in one query, so opening an abstract costs one round trip."""
        found: dict[int, list[Candidate]] = {mention_id: [] for mention_id in mention_ids}
        if not found:
            return found
        with self._store.session() as session:
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

    def suggestion_sets(self, mention_ids: Sequence[int]) -> dict[int, SuggestionSet]:
        """Each suggested mention's candidates with the span and type they are for, read in one statement
        (so a span edit cannot fall between reading the candidates and reading the span)."""
        found: dict[int, SuggestionSet] = {}
        with self._store.session() as session:
            for chunk in chunks(mention_ids):
                rows = session.execute(
                    select(
                        SuggestionRow,
                        ConceptRow.preferred_name,
                        MentionRow.start,
                        MentionRow.end,
                        MentionRow.type,
                    )
                    .join(MentionRow, MentionRow.id == SuggestionRow.mention_id)
                    .outerjoin(ConceptRow, ConceptRow.id == SuggestionRow.concept_id)
                    .where(SuggestionRow.mention_id.in_(chunk))
                    .order_by(SuggestionRow.mention_id, SuggestionRow.rank)
                ).all()
                for row, preferred, start, end, kind in rows:
                    entry = found.setdefault(row.mention_id, SuggestionSet((start, end, kind), []))
                    entry.candidates.append(
                        Candidate(
                            row.concept_id,
                            preferred or "",
                            row.matched_name,
                            row.retriever_score,
                            row.reranker_score,
                        )
                    )
        return found

    def suggestion_version(self, mention_id: int) -> str:
        """The model version(s) behind a mention's suggestions, recorded with the decision acted on them."""
        with self._store.session() as session:
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
