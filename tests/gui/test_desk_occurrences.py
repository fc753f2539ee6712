"""Issue 23 item 12 in the real window: Ctrl+Shift+A on a selection or on a decided mention counts the
word-bounded occurrences (document, then project), adds them as mentions in one step, and one Ctrl+Z
takes them all back. The expected offsets are written out by hand from the texts below ("QZ" is in no
demo document)."""

from __future__ import annotations

from PySide6.QtCore import Qt

from core.documents import Document, Passage

CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
ONE = "QZ patients. Quizoticus disease (QZ) raises QZL; qz\nagain, and Q.Z. or QZ-like."
TWO = "No QZ here?  Yes: QZ."


def _open(window, project) -> int:
    project.documents.import_documents(
        [
            Document("occ-1", (Passage(0, ONE, "abstract"),)),
            Document("occ-2", (Passage(0, TWO, "abstract"),)),
        ],
        source="",
        split="",
    )
    first = project.documents.add_mention("occ-1", 0, 2, type="Disease")
    window.document.reload_queue()
    window.document.open_document("occ-1")
    return first


def _spans(project, doc_id: str) -> list[tuple[int, int]]:
    return sorted((m.start, m.end) for m in project.documents.document(doc_id).mentions)


def test_a_selection_is_annotated_everywhere_and_one_undo_takes_it_back(window, demo_project, qtbot):
    _open(window, demo_project)
    window.abstract.select_text(33, 35)  # "(QZ)"
    qtbot.keyClick(window, Qt.Key.Key_A, CTRL_SHIFT)
    dialog = window.menu_dialog
    assert dialog.text.text() == "QZ" and dialog.link is None
    assert (
        dialog.count.text() == "<b>3 occurrences in 1 document (1 already a mention)</b> will become mentions"
    )
    dialog.scope.setCurrentIndex(1)
    assert (
        dialog.count.text()
        == "<b>5 occurrences in 2 documents (1 already a mention)</b> will become mentions"
    )
    dialog.accept()
    qtbot.waitUntil(lambda: len(demo_project.documents.document("occ-2").mentions) == 2)
    assert _spans(demo_project, "occ-1") == [(0, 2), (33, 35), (49, 51), (71, 73)]
    assert _spans(demo_project, "occ-2") == [(3, 5), (18, 20)]
    assert {m.type for m in demo_project.documents.document("occ-2").mentions} == {"Disease"}  # the document's type
    assert len(window.model.doc.mentions) == 4  # the open document shows them
    assert window.undo_stack.undoText().startswith("annotate “QZ”")

    window.activateWindow()
    qtbot.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: _spans(demo_project, "occ-2") == [])
    assert _spans(demo_project, "occ-1") == [(0, 2)]


def test_a_decided_mention_gives_its_decision_to_its_occurrences_in_the_document(window, demo_project, qtbot):
    first = _open(window, demo_project)
    window.document.select_mention(window.model.mention_ids.index(first))
    qtbot.keyClick(window, Qt.Key.Key_N)  # not in the KB
    qtbot.waitUntil(lambda: first in demo_project.curation.current_decisions(mention_ids=[first]))
    window.document.select_mention(window.model.mention_ids.index(first))
    window.abstract.select_text(0, 0)
    qtbot.keyClick(window, Qt.Key.Key_A, CTRL_SHIFT)
    dialog = window.menu_dialog
    assert dialog.link is not None and dialog.link.isChecked() and dialog.type.text() == "Disease"
    assert dialog.count.text().startswith("<b>3 occurrences in 1 document")
    dialog.accept()
    qtbot.waitUntil(lambda: len(demo_project.documents.document("occ-1").mentions) == 4)
    ids = [i for _, ids in demo_project.documents.documents_with_mention_ids(ids=["occ-1"]) for i in ids]
    state = demo_project.curation.current_decisions(mention_ids=ids)
    assert sorted(d.action for d in state.values()) == ["nil"] * 4
    assert _spans(demo_project, "occ-2") == []  # this document only
