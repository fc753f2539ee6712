"""`curalink bench desk` on the demo project with tiny sample counts: the harness runs, its JSON has every
figure, and the decisions it timed are really in the store of the project it measured."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from sqlalchemy import select

from core.store import Project
from core.store.schema import DecisionRow

REPO_ROOT = Path(__file__).resolve().parents[2]
FIGURES = ("n", "p50", "p95", "max")


def test_bench_desk_on_the_demo(demo_template: Path, tmp_path: Path):
    """Run as the command, in its own process: the window it drives, the application style and its
    settings stay out of this test session's Qt state."""
    work = tmp_path / "work"
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "--log-level", "WARNING", "bench", "desk", "--projects", "demo",
         "--demo", str(demo_template), "--work", str(work), "--samples", "3", "--queue-cycles", "1",
         "--refresh-samples", "2", "--cold-runs", "0", "--link-documents", "2", "--learn-decisions", "2",
         "--restart-withdrawals", "1", "--json"],
        capture_output=True, text=True, timeout=600, cwd=REPO_ROOT,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen", "OMP_WAIT_POLICY": "PASSIVE"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    demo = result["projects"]["demo"]
    window = demo["window"]
    for figures in (window["key_accept"], window["open_document"], window["queue_change"]["all"]):
        assert set(FIGURES) <= set(figures)
    assert window["key_accept"]["n"] == 3 and window["open_document"]["n"] == 3
    assert window["key_accept"]["p95"] >= window["key_accept"]["p50"] > 0
    assert {"sort", "filter"} <= set(window["queue_change"])
    assert demo["stall"]["documents"] == 2 and demo["stall"]["ticks"] > 0
    learning = demo["stall"]["learning"]  # two accepts, each learnt by the loaded linker
    assert learning["decisions"] == 2 and learning["seconds_to_learnt"]["n"] == 2 and learning["ticks"] > 0
    restart = demo["restart"]  # issue 23: a session withdrew a curator synonym, then the desk restarted
    assert restart["withdrawn"] == 1 and restart["index"] == "loaded", restart["index_lines"]
    assert restart["start_to_suggestions_ms"] > 0 and restart["undo_to_shown_ms"] > 0 and restart["ticks"] > 0
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
    # the key presses, the accepts learnt live, and the restart's session (one undone before the restart)
    assert len(accepted) == 3 + 2 + restart["accepts"]
    for decision in landed:
        assert (decision["mention_id"], decision["concept_id"]) in accepted
    template = sqlite3.connect(f"file:{demo_template / 'curalink.db'}?mode=ro", uri=True)
    try:  # the template itself was only copied, never written
        assert template.execute("SELECT count(*) FROM decisions").fetchone() == (0,)
    finally:
        template.close()
