"""What a decision must be before the curation log (core.store.curation_log) writes it: a known action
and a well-formed link, on a mention not deleted meanwhile, acting on suggestions for the span and type
the mention has now (a span or type edit since makes them stale). Also the few names both modules share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.errors import CuralinkError
from core.store.curation import COMPOSITE_SEPARATOR, EDIT_ACTIONS, LINKING_ACTIONS
from core.store.schema import DecisionRow, MentionRow, MentionStateRow, SuggestionRow

if TYPE_CHECKING:
    from core.store.curation_log import NewDecision

# A mention's span and type: what its suggestions were computed for, and what a decision acted on.
MentionKey = tuple[int, int, str]
# Span and type edits: after one, an accept must name concepts among the new suggestions.
SPAN_EDITS = ("adjust_span", "change_type")
_CHUNK = 500  # SQLite caps bound parameters per statement

DECISION_ACTIONS = (
    "accept",
    "reject",
    "correct",
    "nil",
    "ambiguous",
    "revert",
    *EDIT_ACTIONS,
)


def chunks(ids: Sequence) -> list[list]:
    """Sorted, distinct ids in groups SQLite accepts as bound parameters."""
    ordered = sorted(set(ids))
    return [ordered[i : i + _CHUNK] for i in range(0, len(ordered), _CHUNK)]


def concept_parts(concept_id: str) -> list[str]:
    """The concepts of a link: `A|B|C` names three (a composite mention), `A` one."""
    return concept_id.split(COMPOSITE_SEPARATOR) if concept_id else []


def check_shape(decision: NewDecision) -> None:
    """A known action; a link names one or more distinct, non-empty concept ids."""
    if decision.action not in DECISION_ACTIONS:
        raise CuralinkError(f"unknown decision {decision.action!r}; use one of {', '.join(DECISION_ACTIONS)}")
    if decision.action not in LINKING_ACTIONS:
        return
    parts = concept_parts(decision.concept_id)
    if not parts:
        raise CuralinkError(f"mention {decision.mention_id}: an {decision.action} needs a concept id")
    if any(not part or part != part.strip() for part in parts) or len(set(parts)) != len(parts):
        raise CuralinkError(
            f"mention {decision.mention_id}: {decision.concept_id!r} is not a list of distinct concept ids "
            f"joined by {COMPOSITE_SEPARATOR!r}"
        )


def _describe(key: MentionKey) -> str:
    start, end, kind = key
    return f"[{start}, {end})" + (f" {kind}" if kind else "")


def undecided_only(session: Session, decisions: list[NewDecision]) -> list[NewDecision]:
    decided: set[int] = set()
    for chunk in chunks([d.mention_id for d in decisions]):
        decided.update(
            session.scalars(select(MentionStateRow.mention_id).where(MentionStateRow.mention_id.in_(chunk)))
        )
    return [d for d in decisions if d.mention_id not in decided]


def check_removed(session: Session, decisions: list[NewDecision]) -> None:
    """Refuse a decision on a mention deleted meanwhile (by another window or process): it would be
    stored against a mention no export writes, and the curator would believe it counted."""
    for chunk in chunks([d.mention_id for d in decisions]):
        removed = session.scalars(
            select(MentionRow.id).where(MentionRow.id.in_(chunk), MentionRow.removed.is_(True))
        ).first()
        if removed is not None:
            action = next(d.action for d in decisions if d.mention_id == removed)
            raise CuralinkError(
                f"mention {removed} was deleted (in another window or process); this {action} was not "
                "stored. Reload the document, or restore the mention first"
            )


def check_suggestions(
    session: Session, decisions: list[NewDecision], current: dict[int, MentionKey]
) -> None:
    """Refuse decisions that act on suggestions computed for a span or type the mention no longer has."""
    for decision in decisions:
        if (
            decision.suggested_for is not None
            and tuple(decision.suggested_for) != current[decision.mention_id]
        ):
            raise CuralinkError(
                f"mention {decision.mention_id}: this {decision.action} acted on suggestions for "
                f"{_describe(tuple(decision.suggested_for))}, but the mention is now "
                f"{_describe(current[decision.mention_id])}; wait for its new suggestions"
            )
    unchecked = [d for d in decisions if d.action == "accept" and d.suggested_for is None]
    if not unchecked:
        return
    ids = [d.mention_id for d in unchecked]
    edited: set[int] = set()
    suggested: dict[int, set[str]] = {}
    for chunk in chunks(ids):
        edited.update(
            session.scalars(
                select(DecisionRow.mention_id).where(
                    DecisionRow.mention_id.in_(chunk), DecisionRow.action.in_(SPAN_EDITS)
                )
            )
        )
        for mention_id, concept_id in session.execute(
            select(SuggestionRow.mention_id, SuggestionRow.concept_id).where(
                SuggestionRow.mention_id.in_(chunk)
            )
        ):
            suggested.setdefault(mention_id, set()).add(concept_id)
    for decision in unchecked:
        if decision.mention_id not in edited:
            continue
        outside = [
            c for c in concept_parts(decision.concept_id) if c not in suggested.get(decision.mention_id, ())
        ]
        if outside:
            raise CuralinkError(
                f"mention {decision.mention_id}: {', '.join(outside)} is not among the suggestions for its "
                f"current span {_describe(current[decision.mention_id])} (its span or type was edited); "
                "wait for its new suggestions, or link it with a KB search (a correction)"
            )
