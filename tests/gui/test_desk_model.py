"""The desk's model works without Qt: importing it loads no PySide6, and a decision and its undo go
through it to the store (read back here with plain SQL, not through the model)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from app.gui.desk_model import DeskModel

ROOT = Path(__file__).resolve().parents[2]


def test_the_desk_model_imports_no_qt():
    code = (
        "import sys; import app.gui.desk_model; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True, timeout=300
    )
    assert done.stdout.strip() == "[]", done.stdout


def _newest(db: Path, mention_id: int) -> tuple | None:
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return connection.execute(
            "SELECT action, concept_id, curator FROM decisions WHERE mention_id = ? ORDER BY id DESC LIMIT 1",
            (mention_id,),
        ).fetchone()
    finally:
        connection.close()


def test_a_decision_and_its_undo_through_the_model(demo):
    model = DeskModel(demo, curator=lambda: "model-tester")
    doc_id = next(entry.doc_id for entry in demo.desk.queue() if not entry.unsuggested)
    assert model.open(doc_id)
    index = model.first_open_mention()
    assert model.select(index) == index
    mention_id = model.current_mention_id()
    ranked = model.suggestions[mention_id]
    assert ranked, "the demo's documents are linked"
    top = ranked[0].concept_id
    db = demo.path / "curalink.db"
    before = _newest(db, mention_id)

    changes = model.run(model.accept_rank(1))

    assert _newest(db, mention_id) == ("accept", top, "model-tester")
    assert model.decisions[mention_id].concept_id == top and changes.mentions == {mention_id}
    assert model.current_mention_id() == mention_id  # the window moves on; the model stays on it
    assert before is None  # the demo template holds no decision

    undone = model.run(model.undo(), navigate=True)

    assert undone.label.startswith("undo accept")
    assert _newest(db, mention_id) == ("revert", "", "model-tester")  # the accept is taken back
    assert mention_id not in model.decisions
    fresh = DeskModel(demo)
    assert fresh.open(doc_id) and mention_id not in fresh.decisions
