"""The curator's working day, read from the decision log's times: how many decisions stand, how fast they
came over the time actually spent, and how often the top suggestion was taken as it was.

- decisions: link decisions (accept, correct, nil, reject, ambiguous) made that day and not undone: a
  `revert` that day cancels the newest decision of that day on its mention (an undo of an older day's
  decision cancels nothing of today's); span and type edits are not decisions;
- active time: the sum of the gaps between consecutive log entries of the day (reverts and edits are work
  too) that are at most `idle` long; a longer gap is a pause and counts nothing;
- per hour: decisions / active hours (None under a minute of active time: a rate over seconds means
  nothing);
- top-1 rate: standing accepts of the top suggestion (rank 1, or a bulk accept, which takes the top one)
  over the standing decisions.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING

from sqlalchemy import select

from core.store.curation import replay_stacks
from core.store.schema import DecisionRow

if TYPE_CHECKING:
    from core.store.project import Project

IDLE = timedelta(minutes=5)
MIN_ACTIVE = 60.0  # seconds of active time before a rate per hour is shown


@dataclass(frozen=True)
class DayStats:
    day: date
    curator: str | None
    decisions: int = 0
    by_action: dict[str, int] = field(default_factory=dict)
    active_seconds: float = 0.0
    top1_accepts: int = 0
    first_at: datetime | None = None
    last_at: datetime | None = None

    @property
    def per_hour(self) -> float | None:
        return self.decisions / (self.active_seconds / 3600) if self.active_seconds >= MIN_ACTIVE else None

    @property
    def top1_rate(self) -> float | None:
        return self.top1_accepts / self.decisions if self.decisions else None

    def as_dict(self) -> dict:
        return {
            "day": self.day.isoformat(),
            "curator": self.curator,
            "decisions": self.decisions,
            "by_action": dict(self.by_action),
            "active_minutes": round(self.active_seconds / 60, 1),
            "decisions_per_hour": None if self.per_hour is None else round(self.per_hour, 1),
            "top1_accepts": self.top1_accepts,
            "top1_rate": None if self.top1_rate is None else round(self.top1_rate, 3),
            "first_at": self.first_at.isoformat() if self.first_at else None,
            "last_at": self.last_at.isoformat() if self.last_at else None,
        }


def _is_top1(row: DecisionRow) -> bool:
    if row.action != "accept":
        return False
    detail = json.loads(row.detail_json or "{}")
    return detail.get("rank") == 1 or "bulk_threshold" in detail


def day_stats(
    project: Project,
    day: date | None = None,
    *,
    curator: str | None = None,
    zone: tzinfo | None = None,
    idle: timedelta = IDLE,
) -> DayStats:
    """Statistics of one local day (today by default; `zone` defaults to the machine's), for one curator
    or (None) everyone. The log stores naive UTC times."""
    zone = zone or datetime.now().astimezone().tzinfo
    day = day or datetime.now(zone).date()
    start = datetime(day.year, day.month, day.day, tzinfo=zone)
    end = start + timedelta(days=1)
    start_utc = start.astimezone(UTC).replace(tzinfo=None)
    end_utc = end.astimezone(UTC).replace(tzinfo=None)
    query = (
        select(DecisionRow)
        .where(DecisionRow.created_at >= start_utc, DecisionRow.created_at < end_utc)
        .order_by(DecisionRow.id)
    )
    if curator is not None:
        query = query.where(DecisionRow.curator == curator)
    with project.session() as session:
        rows = list(session.scalars(query))
    if not rows:
        return DayStats(day, curator)
    standing = [row for stack in replay_stacks(rows).values() for row in stack]
    times = sorted(row.created_at for row in rows)
    active = sum(
        (gap for gap in (b - a for a, b in zip(times, times[1:], strict=False)) if gap <= idle),
        timedelta(),
    )
    local = lambda t: t.replace(tzinfo=UTC).astimezone(zone)  # noqa: E731
    return DayStats(
        day,
        curator,
        len(standing),
        dict(Counter(row.action for row in standing)),
        active.total_seconds(),
        sum(_is_top1(row) for row in standing),
        local(times[0]),
        local(times[-1]),
    )
