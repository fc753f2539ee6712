"""The few reads the curation operations (core.jobs.curation.operations) make around a write: what a label names
(a mention's document, text, origin, span and type; the text a new span would cover), the model versions a
bulk accept records, and the decisions an undo step holds (all of them, to write them again; those still
in force, to revert them)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import select

from core.errors import CuralinkError
from core.store.curation_log import Decision
from core.store.schema import DecisionRow, DocumentRow, MentionRow, MentionStateRow, SuggestionRow

if TYPE_CHECKING:
    from core.store.project import Project

_CHUNK = 500  # SQLite caps bound parameters per statement


@dataclass(frozen=True)
class MentionFacts:
    """A mention (deleted ones too) as a label names it, and its document's text (for a new span)."""

    document: str
    text: str
    origin: str
    start: int
    end: int
    type: str
    document_text: str


def mention_facts(project: Project, mention_id: int) -> MentionFacts:
    with project.session() as session:
        row = session.execute(
            select(
                DocumentRow.external_id,
                MentionRow.text,
                MentionRow.origin,
                MentionRow.start,
                MentionRow.end,
                MentionRow.type,
                DocumentRow.text,
            )
            .join(DocumentRow, DocumentRow.id == MentionRow.document_id)
            .where(MentionRow.id == mention_id)
        ).first()
    if row is None:
        raise CuralinkError(f"no mention with id {mention_id}")
    return MentionFacts(*row)


def decisions_by_id(project: Project, decision_ids: Sequence[int]) -> list[Decision]:
    """The decisions with these ids, oldest first."""
    ordered = sorted(set(decision_ids))
    found: list[Decision] = []
    with project.session() as session:
        for i in range(0, len(ordered), _CHUNK):
            query = select(DecisionRow).where(DecisionRow.id.in_(ordered[i : i + _CHUNK]))
            found += [Decision.of(row) for row in session.scalars(query)]
    return sorted(found, key=lambda d: d.id)


def in_force(project: Project, decision_ids: Sequence[int]) -> list[Decision]:
    """Those of these decisions that are still the one in force on their mention, oldest first."""
    ordered = sorted(set(decision_ids))
    found: list[Decision] = []
    with project.session() as session:
        for i in range(0, len(ordered), _CHUNK):
            query = (
                select(DecisionRow)
                .join(MentionStateRow, MentionStateRow.decision_id == DecisionRow.id)
                .where(DecisionRow.id.in_(ordered[i : i + _CHUNK]))
            )
            found += [Decision.of(row) for row in session.scalars(query)]
    return sorted(found, key=lambda d: d.id)


def suggestion_versions(project: Project, mention_ids: Sequence[int]) -> dict[int, str]:
    """The model version(s) behind each mention's suggestions (`Project.curation.suggestion_version` for many, in
    one statement per 500 mentions: a bulk accept records them)."""
    ordered = sorted(set(mention_ids))
    found: dict[int, str] = {}
    with project.session() as session:
        for i in range(0, len(ordered), _CHUNK):
            rows = session.execute(
                select(
                    SuggestionRow.mention_id, SuggestionRow.retriever_version, SuggestionRow.reranker_version
                ).where(SuggestionRow.mention_id.in_(ordered[i : i + _CHUNK]), SuggestionRow.rank == 1)
            )
            for mention_id, retriever, reranker in rows:
                found[mention_id] = "+".join(v for v in (retriever, reranker) if v)
    return found


def past_spans(project: Project, mention_ids: Sequence[int]) -> dict[int, set[tuple[int, int]]]:
    """Mention id -> every span its logged span edits (`adjust_span`) moved it from or to: the strings a
    decision on it may have taught before (core.learn.live asks about them again after a span edit)."""
    found: dict[int, set[tuple[int, int]]] = {}
    ordered = sorted(set(mention_ids))
    with project.session() as session:
        for start in range(0, len(ordered), _CHUNK):
            rows = session.execute(
                select(DecisionRow.mention_id, DecisionRow.detail_json).where(
                    DecisionRow.action == "adjust_span",
                    DecisionRow.mention_id.in_(ordered[start : start + _CHUNK]),
                )
            )
            for mention_id, detail_json in rows:
                detail = json.loads(detail_json or "{}")
                spans = found.setdefault(mention_id, set())
                for side in ("old", "new"):
                    begin, end = detail.get(f"{side}_start"), detail.get(f"{side}_end")
                    if isinstance(begin, int) and isinstance(end, int):
                        spans.add((begin, end))
    return found
