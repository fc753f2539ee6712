"""Issue 31 item 5 in the real window, driven with keys: with the queue filtered to the test split (Alt+2),
Ctrl+B's "the whole queue" accepts only in the documents the queue shows; the train documents it hides
get nothing. The expected mentions are counted with SQL on the database file itself."""

from __future__ import annotations

import sqlite3

from PySide6.QtCore import Qt

CTRL = Qt.KeyboardModifier.ControlModifier
ALT = Qt.KeyboardModifier.AltModifier


def _split(project, test: list[str]) -> None:
    with sqlite3.connect(project.path / "curalink.db") as db:
        db.execute("UPDATE documents SET split = 'train'")
        db.executemany("UPDATE documents SET split = 'test' WHERE external_id = ?", [(d,) for d in test])


def _suggested_in(project, split: str) -> set[int]:
    """Mentions (not deleted) of the split's documents with a top suggestion, from the file itself."""
    with sqlite3.connect(project.path / "curalink.db") as db:
        rows = db.execute(
            """SELECT m.id FROM mentions m JOIN documents d ON d.id = m.document_id
               JOIN suggestions s ON s.mention_id = m.id
               WHERE s.rank = 1 AND NOT m.removed AND d.split = ?""",
            (split,),
        ).fetchall()
    return {row[0] for row in rows}


def test_the_whole_queue_is_the_filtered_queue(window, demo_project, qtbot):
    documents = demo_project.documents.document_ids()
    _split(demo_project, documents[:2])
    window.document.reload_queue()
    for _ in range(4):  # Alt+2: the next split filter, until the queue shows the test split
        if window.queue.filters()["split"] == "test":
            break
        qtbot.keyClick(window, Qt.Key.Key_2, ALT)
    assert window.queue.filters()["split"] == "test"
    assert sorted(window.queue.visible_ids()) == sorted(documents[:2])
    tested, trained = _suggested_in(demo_project, "test"), _suggested_in(demo_project, "train")
    assert tested and trained

    qtbot.keyClick(window, Qt.Key.Key_B, CTRL)
    dialog = window.menu_dialog
    qtbot.waitUntil(dialog.threshold.hasFocus)
    qtbot.keyClick(dialog.threshold, Qt.Key.Key_A, CTRL)
    qtbot.keyClicks(dialog.threshold, "-100")  # every suggestion's score reaches it
    qtbot.keyClick(dialog.threshold, Qt.Key.Key_Tab)
    assert dialog.scope.hasFocus()
    qtbot.keyClick(dialog.scope, Qt.Key.Key_Down)  # the whole queue
    assert dialog.whole_queue
    assert f"Accepts {len(tested)} mentions in 2 documents" in dialog.count_label.text().replace(
        "<b>", ""
    ).replace("</b>", "")
    qtbot.keyClick(dialog.scope, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: len(demo_project.curation.current_decisions()) >= len(tested))
    qtbot.waitUntil(lambda: not window.saving.writer.busy())
    decided = set(demo_project.curation.current_decisions())
    assert decided == tested
    assert not decided & trained  # nothing on a document the queue hid
