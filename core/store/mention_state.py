"""The present of curation kept beside the append-only log: one `mention_state` row per decided mention.

Replaying every decision to learn each mention's state grew with the log (345 ms for the queue at 20,000
decisions). Instead each write of decisions recomputes, in its own transaction, the state of the mentions
it touched from their own histories (an indexed read per mention: a `revert` needs the decision below the
one it undoes). A mark records the newest decision the table reflects; a project whose table is missing
or behind its log (written by hand, restored from parts) is rebuilt on open, with a log line.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import delete, insert, inspect, select
from sqlalchemy.orm import Session

from core.store.curation import EDIT_ACTIONS, replay
from core.store.queue_summary import STATE_TRIGGERS, create_state_triggers
from core.store.schema import DecisionRow, MentionStateRow, SettingRow
from core.store.settings_store import write_setting

log = logging.getLogger(__name__)

STATE_MARK = "curation.state_through_decision"  # settings key: the newest decision id the table reflects
_CHUNK = 500  # SQLite caps bound parameters per statement


@dataclass(frozen=True)
class StateChange:
    """What a write did to the present: mentions whose state changed, and how many became (un)decided."""

    mention_ids: frozenset[int]
    newly_decided: int = 0
    undecided: int = 0


def rebuilt_objects() -> frozenset[tuple[str, str]]:
    """(type, name) of the schema objects `ensure_current` makes again when they are missing (the queue
    summary's triggers on the table go with it)."""
    table = MentionStateRow.__table__
    return frozenset(
        {
            ("table", table.name),
            *(("index", str(index.name)) for index in table.indexes),
            *(("trigger", name) for name in STATE_TRIGGERS),
        }
    )


def _chunks(ids: Iterable[int]) -> list[list[int]]:
    ordered = sorted(set(ids))
    return [ordered[i : i + _CHUNK] for i in range(0, len(ordered), _CHUNK)]


def _state_rows(current: dict[int, DecisionRow]) -> list[dict]:
    return [
        {
            "mention_id": mention_id,
            "decision_id": row.id,
            "action": row.action,
            "concept_id": row.concept_id,
            "curator": row.curator,
        }
        for mention_id, row in current.items()
    ]


def _newest_decision(session: Session) -> int:
    """The newest decision the table reflects or should: span, type and mention edits are logged as
    decisions too but never enter the table, so they must not put it "behind the log" (an edit after the
    last decision made every later open rebuild the table and warn)."""
    newest = select(DecisionRow.id).where(DecisionRow.action.not_in(EDIT_ACTIONS))
    return session.scalar(newest.order_by(DecisionRow.id.desc()).limit(1)) or 0


def apply_decisions(session: Session, written: Sequence[DecisionRow]) -> StateChange:
    """Bring the table up to date with decisions just appended (flushed) in the caller's transaction.

    A mention whose new decisions hold no `revert` is in the state of its last one (a write, not a read);
    only a revert needs the mention's history, to find the decision below the one it undoes.
    """
    last: dict[int, DecisionRow] = {}
    replayed: set[int] = set()
    for row in written:
        if row.action in EDIT_ACTIONS:
            continue
        if row.action == "revert":
            replayed.add(row.mention_id)
        last[row.mention_id] = row
    direct = {m: row for m, row in last.items() if m not in replayed}
    change = refresh_mentions(session, sorted(replayed)) if replayed else StateChange(frozenset())
    newly = 0
    for chunk in _chunks(direct):
        decided = set(
            session.scalars(select(MentionStateRow.mention_id).where(MentionStateRow.mention_id.in_(chunk)))
        )
        newly += len(set(chunk) - decided)
        session.execute(delete(MentionStateRow).where(MentionStateRow.mention_id.in_(chunk)))
        session.execute(insert(MentionStateRow), _state_rows({m: direct[m] for m in chunk}))
    write_setting(session, STATE_MARK, _newest_decision(session))
    return StateChange(change.mention_ids | frozenset(direct), change.newly_decided + newly, change.undecided)


def refresh_mentions(session: Session, mention_ids: Sequence[int]) -> StateChange:
    """Recompute the state of these mentions from their histories, inside the caller's transaction."""
    changed: set[int] = set()
    newly = gone = 0
    for chunk in _chunks(mention_ids):
        before = dict(
            session.execute(
                select(MentionStateRow.mention_id, MentionStateRow.decision_id).where(
                    MentionStateRow.mention_id.in_(chunk)
                )
            ).all()
        )
        history = session.scalars(
            select(DecisionRow)
            .where(DecisionRow.mention_id.in_(chunk), DecisionRow.action.not_in(EDIT_ACTIONS))
            .order_by(DecisionRow.id)
        )
        current = replay(history)
        session.execute(delete(MentionStateRow).where(MentionStateRow.mention_id.in_(chunk)))
        rows = _state_rows(current)
        if rows:
            session.execute(insert(MentionStateRow), rows)
        for mention_id in chunk:
            old, new = before.get(mention_id), current.get(mention_id)
            if (old is None) != (new is None) or (new is not None and new.id != old):
                changed.add(mention_id)
            newly += old is None and new is not None
            gone += old is not None and new is None
    write_setting(session, STATE_MARK, _newest_decision(session))
    return StateChange(frozenset(changed), newly, gone)


def rebuild(session: Session) -> int:
    """Replace the whole table with a full replay of the log; returns the number of decided mentions."""
    history = session.scalars(
        select(DecisionRow).where(DecisionRow.action.not_in(EDIT_ACTIONS)).order_by(DecisionRow.id)
    )
    current = replay(history)
    session.execute(delete(MentionStateRow))
    rows = _state_rows(current)
    for i in range(0, len(rows), 5000):
        session.execute(insert(MentionStateRow), rows[i : i + 5000])
    write_setting(session, STATE_MARK, _newest_decision(session))
    return len(rows)


def out_of_step(session: Session) -> str | None:
    """Why the table cannot be trusted (missing, never filled, behind the log), or None when it is current."""
    if not inspect(session.connection()).has_table(MentionStateRow.__tablename__):
        return "the current-state table is missing"
    mark = session.get(SettingRow, STATE_MARK)
    if mark is None:
        return "the current-state table was never filled"
    through = int(mark.value_json)
    newest = _newest_decision(session)
    if newest > through:
        return f"the log holds decisions up to {newest} but the current-state table only up to {through}"
    return None


def ensure_current(session: Session, db_path) -> bool:
    """Rebuild the table when it is missing or out of step with the log; True when it was rebuilt."""
    problem = out_of_step(session)
    if problem is None:
        return False
    if problem.endswith("missing"):
        MentionStateRow.__table__.create(session.connection())
        create_state_triggers(session)
    decided = rebuild(session)
    log.warning("%s: %s; rebuilt it from the decision log (%d decided mentions)", db_path, problem, decided)
    return True
