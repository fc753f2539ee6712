"""Issue 31 item 5 in the real window, driven with keys: with the queue filtered to the test split (Alt+2),
Ctrl+B's "the whole queue" accepts only in the documents the queue shows; the train documents it hides
get nothing. The expected mentions are counted with SQL on the database file itself."""

from __future__ import annotations

import sqlite3

from PySide6.QtCore import Qt

from tests.gui.test_bulk_accept_dialog import ranked_project, ranked_window  # noqa: F401

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
    assert (
        f"Accepts {len(tested)} mentions in 2 documents of the 2 the queue shows"
        in dialog.count_label.text().replace("<b>", "").replace("</b>", "")
    )
    qtbot.keyClick(dialog.scope, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: len(demo_project.curation.current_decisions()) >= len(tested))
    qtbot.waitUntil(lambda: not window.saving.writer.busy())
    decided = set(demo_project.curation.current_decisions())
    assert decided == tested
    assert not decided & trained  # nothing on a document the queue hid


def _checked_by_hand(project, threshold: float, ranker: str) -> tuple[int, int, int, int]:
    """(documents, gold mentions scored, accepted, right) on the test split, from the file itself: a top
    is right when the gold names one concept and the top is it (a composite's part is not)."""
    with sqlite3.connect(project.path / "curalink.db") as db:
        rows = db.execute(
            """SELECT d.external_id, m.concept_id, s.concept_id, COALESCE(s.reranker_score, s.retriever_score)
               FROM mentions m JOIN documents d ON d.id = m.document_id JOIN suggestions s ON s.mention_id = m.id
               WHERE s.rank = 1 AND NOT m.removed AND m.concept_id != '' AND d.split = 'test'
                 AND s.reranker_version LIKE ?""",
            (f"%ranker {ranker}",),
        ).fetchall()
    taken = [(gold, top) for _, gold, top, score in rows if score >= threshold]
    right = sum(1 for gold, top in taken if gold == top)
    return len({row[0] for row in rows}), len(rows), len(taken), right


def test_the_promise_is_checked_on_held_out_documents(ranked_window, ranked_project, qtbot):  # noqa: F811
    """The dialog shows the promise checked on the project's test split, counted by hand in SQL."""
    window, project = ranked_window, ranked_project
    documents = project.documents.document_ids()
    _split(project, documents[:3])  # after the ranker was trained: the test documents are held out
    qtbot.keyClick(window, Qt.Key.Key_B, CTRL)
    dialog = window.menu_dialog
    qtbot.waitUntil(dialog.threshold.hasFocus)
    qtbot.keyClick(dialog.threshold, Qt.Key.Key_A, CTRL)
    qtbot.keyClicks(dialog.threshold, "0.5")
    count, mentions, accepted, right = _checked_by_hand(project, 0.5, "v1")
    assert mentions > 0 and accepted > 0
    text = dialog.held_out_label.text()
    assert (
        f"Checked on this project's held-out documents (split test: {count} documents, {mentions} gold-linked "
        f"mentions the ranker scored): at ≥ 0.50, {right} of {accepted} right"
    ) in text
    assert "composites counted as curators count them" in text
    assert "Measured out-of-fold" in text
