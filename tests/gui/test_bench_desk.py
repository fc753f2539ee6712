"""`curalink bench desk` on the demo project with tiny sample counts: the harness runs, its JSON has every
figure, and the decisions it timed are really in the store of the project it measured."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from sqlalchemy import select

from app.cli import main
from core.store import Project
from core.store.schema import DecisionRow

FIGURES = ("n", "p50", "p95", "max")


def test_bench_desk_on_the_demo(demo_template: Path, tmp_path: Path, capsys):
    work = tmp_path / "work"
    code = main(
        ["--log-level", "WARNING", "bench", "desk", "--projects", "demo", "--demo", str(demo_template),
         "--work", str(work), "--samples", "3", "--queue-cycles", "1", "--refresh-samples", "2",
         "--cold-runs", "0", "--link-documents", "2", "--json"]
    )  # fmt: skip
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    demo = result["projects"]["demo"]
    window = demo["window"]
    for figures in (window["key_accept"], window["open_document"], window["queue_change"]["all"]):
        assert set(FIGURES) <= set(figures)
    assert window["key_accept"]["n"] == 3 and window["open_document"]["n"] == 3
    assert window["key_accept"]["p95"] >= window["key_accept"]["p50"] > 0
    assert {"sort", "filter"} <= set(window["queue_change"])
    assert demo["stall"]["documents"] == 2 and demo["stall"]["ticks"] > 0
    assert [stage["decisions"] for stage in demo["store"]] == [0]
    assert demo["store"][0]["queue"]["documents"] == 6

    # Every timed key press left an accept of the top suggestion in the measured copy's log (read here
    # with plain SQL, not through the desk's own state).
    landed = window["key_accept"]["landed"]
    with Project.open(work / "runs" / "demo" / "project") as project, project.session() as session:
        rows = session.execute(
            select(DecisionRow.mention_id, DecisionRow.concept_id).where(DecisionRow.action == "accept")
        ).all()
    accepted = {(mention_id, concept_id) for mention_id, concept_id in rows}
    assert len(landed) == 3
    for decision in landed:
        assert (decision["mention_id"], decision["concept_id"]) in accepted
    template = sqlite3.connect(f"file:{demo_template / 'curalink.db'}?mode=ro", uri=True)
    try:  # the template itself was only copied, never written
        assert template.execute("SELECT count(*) FROM decisions").fetchone() == (0,)
    finally:
        template.close()
