"""Issue 22 item 2 and issue 23 items 2, 3 and 6 in the real window on the demo project.

- Undo after a restart acts on what the curator did last, notes and done marks included; the Edit menu
  and the status bar say what it undoes, and the desk goes to the document and mention it changes.
- A decision's redraw reads nothing from the store: every statement it causes runs inside the core
  operation (counted with SQLAlchemy's `before_cursor_execute`).
- Ctrl+Enter in the KB search builds a link to several concepts and stores nothing until Enter.
- R on a detected span means "not a mention": no export writes it.
"""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import Qt
from sqlalchemy import event

from app.cli import main as cli
from core.detect.dictionary import DictionaryDetector
from core.documents import Document, Passage
from core.jobs.curation import operations as curation
from core.jobs.linking.mentions import detect_into_project
from core.learn.synonyms import CURATOR_SOURCE, curated_synonyms
from core.store.curation_marks import DONE, NOTE

CTRL = Qt.KeyboardModifier.ControlModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier


def _restart(window, project, settings, qtbot):
    from app.gui.main_window import MainWindow

    window.close()
    again = MainWindow(project, settings, background=False)
    qtbot.addWidget(again)
    again.show()
    qtbot.waitExposed(again)
    again.activateWindow()
    qtbot.waitUntil(again.isActiveWindow, timeout=2000)
    return again


def test_undo_after_a_restart_takes_back_the_done_mark_first_and_shows_where(
    window, demo_project, app_settings, qtbot
):
    window.document.open_document("90000001")
    bulk = window.curation.bulk_accept(0.0)  # every suggested, undecided mention of the document
    accepted = [m for m in window.model.mention_ids if m in window.model.decisions]
    assert bulk == len(accepted) > 1
    state = demo_project.curation.current_decisions()
    assert all(state[m].model_version == demo_project.curation.suggestion_version(m) != "" for m in accepted)
    qtbot.keyClick(window, Qt.Key.Key_E, SHIFT)  # a note on the document
    window.menu_dialog.setTextValue("abbreviations checked")
    window.menu_dialog.accept()
    qtbot.keyClick(window, Qt.Key.Key_D)  # done
    assert DONE in demo_project.marks.document_marks(["90000001"])["90000001"]

    again = _restart(window, demo_project, app_settings, qtbot)
    try:
        again.document.open_document("90000006")  # somewhere else
        assert again.act_undo.text() == "Undo mark 90000001 done"
        qtbot.keyClick(again, Qt.Key.Key_Z, CTRL)
        marks = demo_project.marks.document_marks(["90000001"])["90000001"]
        assert DONE not in marks and marks[NOTE].value == "abbreviations checked"
        assert all(demo_project.curation.current_decisions()[m].action == "accept" for m in accepted)
        assert again.model.doc.doc_id == "90000001"  # taken to the document the undo changed
        assert again.statusBar().currentMessage() == "undone: mark 90000001 done"
        assert again.act_redo.text() == "Redo mark 90000001 done"

        qtbot.keyClick(again, Qt.Key.Key_Z, CTRL)  # the note
        assert NOTE not in demo_project.marks.document_marks(["90000001"]).get("90000001", {})
        assert again.act_undo.text().startswith(f"Undo bulk accept of {bulk} mention(s)")

        again.document.open_document("90000006")
        qtbot.keyClick(again, Qt.Key.Key_Z, CTRL)  # the bulk accept, in the document it changed
        state = demo_project.curation.current_decisions()
        assert not any(m in state for m in accepted)
        assert again.model.doc.doc_id == "90000001" and again.model.current_mention_id() == accepted[0]
        assert again.act_redo.text().startswith(f"Redo bulk accept of {bulk} mention(s)")
    finally:
        again.service.shutdown()


def test_a_decision_redraws_without_reading_the_store(window, demo_project, qtbot, monkeypatch):
    window.document.open_document("90000004")
    window.document.select_mention(0)
    mention_id = window.model.current_mention_id()
    inside = threading.local()
    outside: list[str] = []
    within: list[str] = []

    def counted(_conn, _cursor, statement, *_rest) -> None:
        if threading.current_thread() is threading.main_thread():
            (within if getattr(inside, "op", False) else outside).append(statement)

    real = curation.decide

    def decide(*args, **kwargs):
        inside.op = True
        try:
            return real(*args, **kwargs)
        finally:
            inside.op = False

    monkeypatch.setattr(curation, "decide", decide)
    event.listen(demo_project.engine, "before_cursor_execute", counted)
    try:
        qtbot.keyClick(window, Qt.Key.Key_1)
    finally:
        event.remove(demo_project.engine, "before_cursor_execute", counted)
    assert demo_project.curation.current_decisions()[mention_id].action == "accept"
    assert window.model.decisions[mention_id].action == "accept"  # shown, from the operation's answer
    assert window.abstract.marks[window.model.mention_ids.index(mention_id)].state == "accepted"
    assert window.model.current_mention_id() != mention_id  # moved on to the next open mention
    assert within, "the operation itself reads and writes"
    assert outside == []


def test_ctrl_enter_builds_a_link_and_stores_nothing_until_enter(window, demo_project, qtbot):
    window.document.open_document("90000004")
    index = next(i for i, m in enumerate(window.model.doc.mentions) if m.text == "Breast and ovarian cancer")
    window.document.select_mention(index)
    mention_id = window.model.current_mention_id()
    assert mention_id not in window.model.decisions

    for query, concept in (("breast neoplasms", "D001943"), ("ovarian neoplasms", "D010051")):
        dialog = window.curation.open_kb_search()
        dialog.query.setText(query)
        dialog.run_search()
        assert dialog.result_ids()[0] == concept
        qtbot.keyClick(dialog.query, Qt.Key.Key_Return, CTRL)  # add to the link
        assert mention_id not in demo_project.curation.current_decisions()  # nothing stored yet
        assert window.model.current_mention_id() == mention_id  # still on the mention being linked
        assert demo_project.kb.names_from_source(CURATOR_SOURCE) == {}
    assert window.model.marked == ["D001943", "D010051"]
    assert "Enter stores it" in window.statusBar().currentMessage()

    qtbot.keyClick(window, Qt.Key.Key_Return)
    decision = demo_project.curation.current_decisions()[mention_id]
    assert (decision.action, decision.concept_id) == ("correct", "D001943|D010051")
    assert "D001943|D010051" in window.undo_stack.undoText() or "D001943 " in window.undo_stack.undoText()
    # the composite's text names neither part alone: it is no synonym of either
    assert curated_synonyms(demo_project, demo_project.kb.knowledge_base(), [mention_id]) == {}


def test_reject_of_a_detected_span_means_not_a_mention_in_exports(
    window, demo_project, qtbot, tmp_path: Path
):
    title = "Huntington disease and cystic fibrosis in one family"
    body = "A patient with Huntington disease had a sister with cystic fibrosis; asthma was treated."
    document = Document("raw-1", (Passage(0, title, "title"), Passage(len(title) + 1, body, "abstract")))
    demo_project.documents.import_documents([document])
    detector = DictionaryDetector.from_kb(demo_project.kb.knowledge_base(), mention_type="Disease")
    assert detect_into_project(demo_project, detector, ids=["raw-1"]).added >= 3
    window.document.reload_queue()
    window.document.open_document("raw-1")
    index = next(i for i, m in enumerate(window.model.doc.mentions) if m.text == "asthma")
    assert window.model.doc.mentions[index].origin == "detected"
    window.document.select_mention(index)
    qtbot.keyClick(window, Qt.Key.Key_R)

    out = tmp_path / "out.pubtator"
    path = str(demo_project.path)
    assert cli(["-p", path, "export", "--format", "pubtator", "--out", str(out)]) == 0
    lines = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines() if "\t" in line]
    raw = [line[3] for line in lines if line[0] == "raw-1"]
    assert "asthma" not in raw
    assert raw.count("Huntington disease") == 2 and raw.count("cystic fibrosis") == 2
    # the key says what it did, and the help says what it does
    assert "not a mention" in window.undo_stack.undoText()
    window.act_help.trigger()
    assert (
        "detected span (not gold): not a mention"
        in window.help_overlay.findChild(type(window.doc_meta)).text()
    )
    window.help_overlay.hide()
