"""The curators' undo histories as stored (`project.undo`): one per curator, its steps in `undo_steps` and
where it stands in `undo_histories` (migration 0006; before it, settings JSON). What a step means and how
it is undone is core.jobs.curation.undo's business; this keeps the rows, written in the operation's own
transaction (`Project.transaction`), so a decision and its step are stored together.

It also reads back a curator's recent decisions from the log: where the history of a curator who has
none stored starts. Only decisions still in force and made by this curator are undoable steps (one undone
since, or covered by another curator's decision, is not); newest last, at most `limit`. Decisions
written together under one `batch` id in their detail (a copy to identical mentions, a bulk accept) come
back as one step.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlalchemy import and_, delete, select

from core.store.access import StoreAccess
from core.store.schema import DecisionRow, MentionRow, MentionStateRow, UndoHistoryRow, UndoStepRow

HISTORY_LIMIT = 200
_HELD = "undo_rows"  # session.info key: rows held for the transaction, so a second look needs no statement


@dataclass
class Step:
    """One undoable step: its kind, its label ("accept “HD” → D006816 in 123"), the document and mention
    it changes (an undo goes there), and the kind's data (core.jobs.curation.undo lists the kinds)."""

    kind: str
    label: str
    document: str
    mention: int | None = None
    data: dict = field(default_factory=dict)


@dataclass
class UndoIndex:
    """Where a history stands: the number of its oldest step, how many are done, every step's label."""

    first: int = 0
    done: int = 0
    labels: list[str] = field(default_factory=list)


@dataclass
class RestoredStep:
    """One undo step read from the log: (mention id, action, concept id, detail, mention text) per decision."""

    batch: str
    decisions: list[tuple[int, str, str, dict, str]] = field(default_factory=list)
    decision_ids: list[int] = field(default_factory=list)


class UndoHistoryStore:
    """The stored undo histories (`project.undo`)."""

    def __init__(self, store: StoreAccess):
        self._store = store

    def index(self, curator: str) -> UndoIndex | None:
        """The curator's history, or None when none is stored: one statement (its state row and every
        step's label), held for the rest of the transaction so the next look reads nothing."""
        with self._store.session() as session:
            held = session.info.setdefault(_HELD, {})
            if ("row", curator) not in held:
                query = (
                    select(UndoHistoryRow, UndoStepRow.label)
                    .outerjoin(
                        UndoStepRow,
                        and_(UndoStepRow.curator == UndoHistoryRow.curator, UndoStepRow.number >= UndoHistoryRow.first),
                    )
                    .where(UndoHistoryRow.curator == curator)
                    .order_by(UndoStepRow.number)
                )
                rows = session.execute(query).all()
                held[("row", curator)] = rows[0][0] if rows else None
                held[("labels", curator)] = [label for _, label in rows if label is not None]
            row = held[("row", curator)]
            if row is None:
                return None
            return UndoIndex(row.first, row.done, list(held[("labels", curator)]))

    def save_index(self, curator: str, index: UndoIndex) -> None:
        """Store where the history stands (its steps are written by `write_step`)."""
        with self._store.session() as session:
            row = session.get(UndoHistoryRow, curator)
            if row is None:
                row = UndoHistoryRow(curator=curator, first=index.first, done=index.done)
                session.add(row)
            row.first, row.done = index.first, index.done
            held = session.info.setdefault(_HELD, {})
            held[("row", curator)] = row
            held[("labels", curator)] = list(index.labels)

    def step(self, curator: str, number: int) -> Step | None:
        with self._store.session() as session:
            row = session.info.get(_HELD, {}).get((curator, number)) or session.get(UndoStepRow, (curator, number))
            if row is None:
                return None
            return Step(row.kind, row.label, row.document, row.mention_id, json.loads(row.data_json))

    def write_step(self, curator: str, number: int, step: Step) -> None:
        """Insert or replace step `number` of the curator's history."""
        with self._store.session() as session:
            row = session.get(UndoStepRow, (curator, number))
            if row is None:
                row = UndoStepRow(curator=curator, number=number)
                session.add(row)
            row.kind, row.label, row.document = step.kind, step.label, step.document
            row.mention_id, row.data_json = step.mention, json.dumps(step.data)
            session.info.setdefault(_HELD, {})[(curator, number)] = row

    def drop_steps(self, curator: str, numbers: Iterable[int]) -> None:
        numbers = list(numbers)
        if not numbers:
            return
        with self._store.session() as session:
            held = session.info.setdefault(_HELD, {})
            for number in numbers:
                held.pop((curator, number), None)
            session.execute(
                delete(UndoStepRow).where(UndoStepRow.curator == curator, UndoStepRow.number.in_(numbers))
            )

    def recent_decisions(self, curator: str, limit: int = HISTORY_LIMIT) -> list[RestoredStep]:
        """At most `limit` steps, oldest first (the order to push them onto an undo stack)."""
        query = (
            select(DecisionRow, MentionRow.text)
            .join(MentionStateRow, MentionStateRow.decision_id == DecisionRow.id)
            .join(MentionRow, MentionRow.id == DecisionRow.mention_id)
            .where(DecisionRow.curator == curator, MentionRow.removed.is_(False))
            .order_by(DecisionRow.id.desc())
        )
        steps: dict[str, RestoredStep] = {}
        with self._store.session() as session:
            for row, text in session.execute(query):
                detail = json.loads(row.detail_json or "{}")
                batch = str(detail.get("batch") or f"decision {row.id}")
                if batch not in steps:
                    if len(steps) >= limit:
                        break
                    steps[batch] = RestoredStep(batch)
                steps[batch].decisions.append((row.mention_id, row.action, row.concept_id, detail, text))
                steps[batch].decision_ids.append(row.id)
        return list(reversed(steps.values()))
