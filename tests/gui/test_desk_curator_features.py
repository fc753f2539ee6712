"""Issue 12 item 4 in the real window on the demo project, by keyboard: a decision applied to identical
mentions and undone in one step, word-snapped selections and word-wise span edges, notes / flags / done,
today's statistics, and the undo stack rebuilt from the log after a restart. Expected outcomes are worked
out here from the document texts and the keys pressed."""

from __future__ import annotations

import re

from PySide6.QtCore import Qt

from app.gui.dialogs import KeyHelpOverlay
from core.store.schema import DecisionRow

CTRL = Qt.KeyboardModifier.ControlModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier
ALT = Qt.KeyboardModifier.AltModifier


def _select(window, doc_id: str, text: str, nth: int = 0) -> int:
    window.document.open_document(doc_id)
    index = [i for i, m in enumerate(window.model.doc.mentions) if m.text == text][nth]
    window.document.select_mention(index)
    return window.model.mention_ids[index]


def _state(project) -> dict:
    return project.curation.current_decisions()


def test_a_decision_applies_to_identical_mentions_and_one_undo_takes_it_back(window, demo_project, qtbot):
    # In the document: the title's "cystic fibrosis"; the abstract's "Cystic fibrosis" is the same words.
    source = _select(window, "90000003", "cystic fibrosis")
    qtbot.keyClick(window, Qt.Key.Key_N)  # not in the KB
    window.document.select_mention(window.model.mention_ids.index(source))
    qtbot.keyClick(window, Qt.Key.Key_D, CTRL)
    dialog = window.menu_dialog
    same = [
        m_id
        for m, m_id in zip(window.model.doc.mentions, window.model.mention_ids, strict=True)
        if m.text.lower() == "cystic fibrosis" and m_id != source
    ]
    assert len(same) == 1
    assert dialog.count.text() == "<b>1 mention in 1 document</b> will get this decision"
    dialog.accept()
    assert _state(demo_project)[same[0]].action == "nil"
    assert _state(demo_project)[same[0]].curator == "tester"
    qtbot.keyClick(window, Qt.Key.Key_Z, CTRL)
    assert same[0] not in _state(demo_project) and _state(demo_project)[source].action == "nil"

    # In the whole queue: "diabetes" as a word in every document, drawn as mentions where it is not one yet;
    # one of them already decided by another curator, which must stay as it is.
    pattern = re.compile(r"\bdiabetes\b", re.IGNORECASE)
    occurrences = []
    for document, ids in demo_project.documents.documents_with_mention_ids():
        spans = {(m.start, m.end): i for m, i in zip(document.mentions, ids, strict=True)}
        for hit in pattern.finditer(document.text):
            mention_id = spans.get(hit.span()) or demo_project.documents.add_mention(document.doc_id, *hit.span())
            occurrences.append((document.doc_id, mention_id))
    assert len(occurrences) == 3  # two in 90000002, one (imported) in 90000003
    theirs = next(m for doc, m in occurrences if doc == "90000002")
    demo_project.curation.record_decision(theirs, "reject", curator="ann")
    source = _select(window, "90000003", "diabetes")
    qtbot.keyClick(window, Qt.Key.Key_N)
    window.document.select_mention(window.model.mention_ids.index(source))
    qtbot.keyClick(window, Qt.Key.Key_D, CTRL)
    dialog = window.menu_dialog
    assert dialog.count.text().startswith("<b>0 mentions in 0 documents</b>")  # none left in this document
    dialog.scope.setCurrentIndex(1)
    expected = [m for doc, m in occurrences if m not in (source, theirs)]
    expected_docs = {doc for doc, m in occurrences if m in expected}
    assert dialog.count.text().startswith(f"<b>{len(expected)} mention in {len(expected_docs)} document</b>")
    before = window.undo_stack.count()
    dialog.accept()
    assert window.undo_stack.count() == before + 1
    state = _state(demo_project)
    assert [state[m].action for m in expected] == ["nil"] * len(expected)
    assert (state[theirs].action, state[theirs].curator) == ("reject", "ann")
    qtbot.keyClick(window, Qt.Key.Key_Z, CTRL)
    state = _state(demo_project)
    assert not any(m in state for m in expected) and state[theirs].action == "reject"
    assert state[source].action == "nil"


def test_selection_snaps_to_words_and_edges_move_word_by_word(window, demo_project, qtbot):
    window.document.open_document("90000003")
    text = window.model.doc.text
    inside = text.index("lung function") + 1  # "ung functi"
    window.abstract.select_text(inside, inside + len("ung functi"))
    qtbot.keyClick(window, Qt.Key.Key_M)
    mention_id = window.model.current_mention_id()
    span = lambda: window.model.doc.mentions[window.model.mention_ids.index(mention_id)].text  # noqa: E731
    assert span() == "lung function"
    steps = [
        ((Qt.Key.Key_Right, ALT | SHIFT), "lung function in"),
        ((Qt.Key.Key_Left, CTRL | ALT), "and lung function in"),
        ((Qt.Key.Key_Left, ALT | SHIFT), "and lung function"),
        ((Qt.Key.Key_Right, CTRL | ALT), "lung function"),
    ]
    count = window.undo_stack.count()
    for (key, modifiers), expected in steps:
        assert expected in text
        qtbot.keyClick(window, key, modifiers)
        assert span() == expected
        assert (
            window.model.suggestions[mention_id] == [] and mention_id in window.model.resuggesting
        )  # suggested again
        count += 1
        assert window.undo_stack.count() == count  # each move is its own undo step
    qtbot.keyClick(window, Qt.Key.Key_Z, CTRL)
    assert span() == "and lung function"
    qtbot.keyClick(window, Qt.Key.Key_Z, CTRL)
    assert span() == "and lung function in"
    with demo_project.session() as session:
        edits = session.query(DecisionRow).filter_by(mention_id=mention_id, action="adjust_span").count()
    assert edits == 6  # four moves and two undos, each logged


def test_notes_flags_and_done_are_stored_shown_and_undone(window, demo_project, qtbot):
    mention_id = _select(window, "90000001", "HD")
    index = window.model.current
    qtbot.keyClick(window, Qt.Key.Key_F)
    assert set(demo_project.marks.mention_marks([mention_id])[mention_id]) == {"flag"}
    assert "flagged for later" in window.marks.marks_strip.text() and window.marks.marks_strip.isVisible()
    assert window.abstract.marks[index].flagged
    qtbot.keyClick(window, Qt.Key.Key_E)
    window.menu_dialog.setTextValue("HD here is Huntington disease, not heart disease")
    window.menu_dialog.accept()
    note = demo_project.marks.mention_marks([mention_id])[mention_id]["note"]
    assert (note.value, note.curator) == ("HD here is Huntington disease, not heart disease", "tester")
    assert "not heart disease" in window.abstract.tooltip_html([index])
    assert "not heart disease" in window.marks.marks_strip.text()
    qtbot.keyClick(window, Qt.Key.Key_D)
    qtbot.keyClick(window, Qt.Key.Key_F, SHIFT)
    assert set(demo_project.marks.document_marks(["90000001"])["90000001"]) == {"done", "flag"}
    assert "done" in window.marks.marks_strip.text()
    qtbot.keyClick(window, Qt.Key.Key_Z, CTRL)  # the document flag
    qtbot.keyClick(window, Qt.Key.Key_Z, CTRL)  # done
    assert "90000001" not in demo_project.marks.document_marks()
    assert [m.value for m in demo_project.marks.mark_history(document="90000001")] == ["true", "true", "", ""]
    window.document.select_mention(window.model.mention_ids.index(mention_id))
    qtbot.keyClick(window, Qt.Key.Key_F)  # flag off
    assert set(demo_project.marks.mention_marks([mention_id])[mention_id]) == {"note"}
    assert not window.abstract.marks[index].flagged


def test_todays_statistics_count_the_keys_pressed(window, demo_project, qtbot):
    window.document.open_document("90000005")
    window.document.select_mention(0)
    qtbot.keyClick(window, Qt.Key.Key_1)  # accept the top suggestion
    qtbot.keyClick(window, Qt.Key.Key_1)  # again, on the next mention
    qtbot.keyClick(window, Qt.Key.Key_2)  # the second suggestion
    qtbot.keyClick(window, Qt.Key.Key_N)
    qtbot.keyClick(window, Qt.Key.Key_Z, CTRL)  # the nil is undone: 3 decisions stand, 2 of them top-1
    qtbot.keyClick(window, Qt.Key.Key_T, CTRL | SHIFT)
    text = window.menu_dialog.findChild(type(window.marks.marks_strip), "dayStats").text()
    assert "<td align='right' style='padding:3px 12px'>3</td>" in text
    assert "67% (2)" in text


def test_undo_history_survives_a_restart(window, demo_project, app_settings, qtbot):
    from app.gui.main_window import MainWindow

    window.document.open_document("90000006")
    window.document.select_mention(0)
    first, second = window.model.mention_ids[0], window.model.mention_ids[1]
    qtbot.keyClick(window, Qt.Key.Key_1)
    qtbot.keyClick(window, Qt.Key.Key_N)
    demo_project.curation.record_decision(window.model.mention_ids[2], "reject", curator="someone else")
    pd = [
        i for m, i in zip(window.model.doc.mentions, window.model.mention_ids, strict=True) if m.text == "PD"
    ]
    assert len(pd) == 2
    window.document.select_mention(window.model.mention_ids.index(pd[0]))
    qtbot.keyClick(window, Qt.Key.Key_A)  # ambiguous, then the same for the other "PD" (a batch)
    window.document.select_mention(window.model.mention_ids.index(pd[0]))
    qtbot.keyClick(window, Qt.Key.Key_D, CTRL)
    window.menu_dialog.accept()
    assert _state(demo_project)[pd[1]].action == "ambiguous"
    window.close()

    again = MainWindow(demo_project, app_settings, background=False)
    qtbot.addWidget(again)
    again.show()
    qtbot.waitExposed(again)
    again.activateWindow()
    qtbot.waitUntil(again.isActiveWindow, timeout=2000)
    try:
        assert again.undo_stack.count() == 4  # only the tester's own: accept, nil, ambiguous, the batch
        qtbot.keyClick(again, Qt.Key.Key_Z, CTRL)  # the batch, in one step
        state = _state(demo_project)
        assert pd[1] not in state and state[pd[0]].action == "ambiguous"
        qtbot.keyClick(again, Qt.Key.Key_Z, CTRL)
        assert pd[0] not in _state(demo_project)
        assert "not in the KB" in again.undo_stack.undoText()
        qtbot.keyClick(again, Qt.Key.Key_Z, CTRL)
        state = _state(demo_project)
        assert second not in state and state[first].action == "accept"
        qtbot.keyClick(again, Qt.Key.Key_Z, CTRL)
        assert first not in _state(demo_project)
        qtbot.keyClick(again, Qt.Key.Key_Z, CTRL | SHIFT)  # redo writes the accept again
        assert _state(demo_project)[first].action == "accept"
        assert _state(demo_project)[window.model.mention_ids[2]].curator == "someone else"
    finally:
        again.service.shutdown()
        again.close()


def test_the_key_help_lists_the_new_keys(window):
    overlay = window.help_overlay
    assert isinstance(overlay, KeyHelpOverlay)
    shown = overlay.findChild(type(window.marks.marks_strip), "keyHelp").text()
    for key in ("Alt+Shift+← / →", "Ctrl+Alt+← / →", "Ctrl+D", "Shift+E", "Shift+F", "Ctrl+Shift+T"):
        assert key in shown
    bound = {action.shortcut().toString() for action in window.actions() if not action.shortcut().isEmpty()}
    assert {"Ctrl+D", "E", "F", "D", "Shift+E", "Shift+F", "Ctrl+Shift+T"} <= bound
    clashes = [seq for seq in bound if sum(a.shortcut().toString() == seq for a in window.actions()) > 1]
    assert clashes == []
