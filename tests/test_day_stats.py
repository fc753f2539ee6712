"""The working day's statistics (issue 12 item 4.5), from decision times set by hand: the expected counts,
active time, rate and top-1 share are worked out below from the schedule, not by the code under test."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path

from sqlalchemy import update

from core.formats import read_corpus
from core.store import Project
from core.store.day_stats import day_stats
from core.store.schema import DecisionRow

ZONE = timezone(timedelta(hours=2))  # a curator two hours east of UTC
DAY = date(2026, 3, 10)


def _project(tmp_path: Path) -> tuple[Project, list[int]]:
    words = [f"w{i}" for i in range(8)]
    abstract = " ".join(words)
    lines = ["1|t|T", f"1|a|{abstract}"]
    offset = 2
    for word in words:
        lines.append(f"1\t{offset}\t{offset + len(word)}\t{word}\tDisease\t-1")
        offset += len(word) + 1
    path = tmp_path / "c.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    project = Project.create(tmp_path / "p")
    project.documents.import_documents(read_corpus(path, "pubtator"))
    ids = next(iter(project.documents.documents_with_mention_ids()))[1]
    return project, ids


def _at(project: Project, decision_id: int, local: datetime) -> None:
    utc = local.replace(tzinfo=ZONE).astimezone(UTC).replace(tzinfo=None)
    with project.session() as session:
        session.execute(update(DecisionRow).where(DecisionRow.id == decision_id).values(created_at=utc))


def test_a_day_of_decisions_undo_and_a_pause(tmp_path: Path) -> None:
    project, m = _project(tmp_path)
    day = lambda h, mi, s=0: datetime(2026, 3, 10, h, mi, s)  # noqa: E731
    schedule = [  # local time, mention, action, concept, detail, curator
        (datetime(2026, 3, 9, 23, 59), m[0], "accept", "D1", {"rank": 1}, "ann"),  # yesterday
        (day(0, 30), m[1], "accept", "D1", {"rank": 1}, "ann"),  # 00:30 local is 22:30 UTC the day before
        (day(0, 31), m[2], "accept", "D2", {"rank": 2}, "ann"),
        (day(0, 33), m[3], "nil", "", {}, "ann"),
        (day(0, 33, 30), m[3], "revert", "", {"undo": "nil"}, "ann"),  # undoes the nil
        (day(0, 34), m[0], "revert", "", {"undo": "accept"}, "ann"),  # undoes yesterday's: no effect today
        (day(9, 0), m[4], "accept", "D3", {"bulk_threshold": 0.9}, "ann"),  # after a long pause
        (day(9, 2), m[5], "correct", "D4", {"via": "kb search"}, "ann"),
        (day(9, 3), m[6], "reject", "", {}, "bob"),
        (datetime(2026, 3, 11, 0, 0), m[7], "accept", "D1", {"rank": 1}, "ann"),  # tomorrow
    ]
    for when, mention, action, concept, detail, curator in schedule:
        decision = project.curation.record_decision(
            mention, action, concept_id=concept, curator=curator, detail=detail
        )
        _at(project, decision, when)

    stats = day_stats(project, DAY, zone=ZONE)
    # Standing today: accept m1 (rank 1), accept m2 (rank 2), bulk accept m4, correct m5, reject m6.
    assert stats.decisions == 5
    assert stats.by_action == {"accept": 3, "correct": 1, "reject": 1}
    assert stats.top1_accepts == 2 and stats.top1_rate == 2 / 5
    # Gaps of today's 8 entries: 1, 2, 0.5, 0.5 min, then 8 h 26 min (a pause), 2, 1 min: 7 active minutes.
    assert stats.active_seconds == 7 * 60
    assert stats.per_hour == 5 / (7 / 60)
    assert stats.first_at == day(0, 30).replace(tzinfo=ZONE)
    assert stats.last_at == day(9, 3).replace(tzinfo=ZONE)

    ann = day_stats(project, DAY, curator="ann", zone=ZONE)
    assert ann.decisions == 4 and ann.active_seconds == 7 * 60 - 60  # bob's 09:03 entry is not hers
    assert day_stats(project, date(2026, 3, 8), zone=ZONE).decisions == 0
    assert day_stats(project, date(2026, 3, 8), zone=ZONE).per_hour is None

    result = subprocess.run(
        [sys.executable, "-m", "app.cli", "-p", str(project.path), "stats", "--day", "2026-03-10", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"TZ": "Etc/GMT-2", "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    assert shown["decisions"] == 5 and shown["top1_rate"] == 0.4
    assert shown["active_minutes"] == 7.0 and shown["decisions_per_hour"] == round(5 / (7 / 60), 1)
