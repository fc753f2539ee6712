"""Issue 23 item 8, the small daily things, in the real window on a copy of the demo project: the selected
mention is brought to the middle of the view, the concept pane starts at the top of each concept, a
revisited mention shows the candidate it is linked to, composites read with '|', and a restart goes back
to the mention the curator was on."""

from __future__ import annotations

from PySide6.QtCore import Qt

from core.kb.concept import Concept


def _open(qtbot, project, settings):
    from app.gui.main_window import MainWindow

    win = MainWindow(project, settings, background=False)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow, timeout=2000)
    return win


def test_a_restart_returns_to_the_mention_the_curator_was_on(qtbot, demo_project, app_settings):
    desk = _open(qtbot, demo_project, app_settings)
    for _ in range(3):
        qtbot.keyClick(desk, Qt.Key.Key_Tab)
    doc_id, mention_id = desk.model.doc.doc_id, desk.model.current_mention_id()
    assert desk.model.current == 3
    desk.close()
    desk.service.shutdown()
    again = _open(qtbot, demo_project, app_settings)
    try:
        assert again.model.doc.doc_id == doc_id
        assert again.model.current_mention_id() == mention_id
    finally:
        again.service.shutdown()


def test_the_selected_mention_is_brought_to_the_middle_of_the_view(qtbot, window):
    window.abstract.set_zoom(12)  # large text in a short window: the abstract scrolls
    window.resize(1100, 420)
    qtbot.waitUntil(lambda: window.abstract.verticalScrollBar().maximum() > 0)
    last = len(window.model.mention_ids) - 1
    window.document.select_mention(last)
    mark = window.abstract.marks[last]
    probe = window.abstract.textCursor()
    probe.setPosition(mark.start)
    y = window.abstract.cursorRect(probe).center().y()
    height = window.abstract.viewport().height()
    bar = window.abstract.verticalScrollBar()
    # in the middle third, unless the view is already scrolled as far as it goes
    assert height / 3 <= y <= 2 * height / 3 or bar.value() == bar.maximum(), (y, height, bar.value())
    window.document.select_mention(0)
    probe.setPosition(window.abstract.marks[0].start)
    y = window.abstract.cursorRect(probe).center().y()
    assert 0 <= y <= 2 * height / 3


def test_the_concept_pane_starts_at_the_top_of_each_concept(qtbot, window):
    pane = window.concept
    long_one = Concept("D0", "MeSH", "Long", synonyms=tuple(f"synonym {i}" for i in range(60)))
    pane.resize(300, 150)
    pane.show_concept(long_one)
    qtbot.waitUntil(lambda: pane.verticalScrollBar().maximum() > 0)
    pane.verticalScrollBar().setValue(pane.verticalScrollBar().maximum())
    pane.show_concept(Concept("D1", "MeSH", "Other", synonyms=tuple(f"other {i}" for i in range(60))))
    assert pane.verticalScrollBar().value() == 0


def test_a_revisited_mention_shows_the_candidate_it_is_linked_to(qtbot, window, demo_project):
    ranked = window.model.suggestions[window.model.current_mention_id()]
    assert len(ranked) >= 3
    mention_id = window.model.current_mention_id()
    qtbot.keyClick(window, Qt.Key.Key_3)
    qtbot.waitUntil(
        lambda: demo_project.curation.current_decisions(mention_ids=[mention_id]).get(mention_id) is not None
    )
    window.document.select_mention(window.model.mention_ids.index(mention_id))
    assert window.candidates.view.currentIndex().row() == 2
    assert window.concept.concept is not None and window.concept.concept.concept_id == ranked[2].concept_id


def test_a_composite_link_reads_with_the_stored_separator(window):
    text = window.model.link_text("D006816|D003924")
    assert " | " in text and " + " not in text


def test_the_key_help_fits_the_default_window_and_lists_the_menu_keys(window):
    from PySide6.QtGui import QKeySequence

    text = " ".join(label.text() for label in window.help_overlay.findChildren(type(window.legend)))
    window.resize(1500, 880)
    assert window.help_overlay.sizeHint().height() <= window.height()
    for action in (window.act_bulk, window.act_help):
        assert action.shortcut().toString(QKeySequence.SequenceFormat.PortableText) in text
    for keys in ("Ctrl+L", "Ctrl+N", "Ctrl+O", "Ctrl+I", "Ctrl+Shift+I", "Ctrl+Y"):
        assert keys in text, keys


def test_the_note_editor_wraps_and_ctrl_enter_saves(qtbot, window, demo_project):
    from PySide6.QtWidgets import QPlainTextEdit

    dialog = window.marks.edit_note(on_document=True)
    editor = dialog.findChild(QPlainTextEdit)
    assert dialog.width() >= 500 and editor.lineWrapMode() == QPlainTextEdit.LineWrapMode.WidgetWidth
    qtbot.keyClicks(editor, "check the second abstract")
    qtbot.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    doc_id = window.model.doc.doc_id
    qtbot.waitUntil(lambda: "note" in demo_project.marks.document_marks([doc_id]).get(doc_id, {}))
    assert demo_project.marks.document_marks([doc_id])[doc_id]["note"].value == "check the second abstract"


def test_kb_search_placement_leaves_the_mention_in_view():
    from PySide6.QtCore import QRect

    from app.gui.kb_search import MIN_SIZE, placement

    screen = QRect(0, 0, 1920, 1080)
    wanted = QRect(0, 0, 1040, 560)
    # the abstract in the middle of a 1500-wide window: the search goes to the wider side, level with it
    mention = QRect(300, 400, 600, 40)
    placed = placement(wanted, mention, screen)
    assert not placed.intersects(mention) and screen.contains(placed)
    assert placed.left() > mention.right() and placed.width() == 1020  # 1920 - 900, shrunk to the room
    # a mention across the whole width: below it, or above when it is low on the screen
    wide = QRect(0, 100, 1920, 30)
    assert placement(wanted, wide, screen).top() > wide.bottom()
    low = QRect(0, 900, 1920, 30)
    assert placement(wanted, low, screen).bottom() < low.top()
    # never smaller than readable
    tight = QRect(0, 0, 800, 600)
    placed = placement(wanted, QRect(0, 280, 800, 30), tight)
    assert placed.width() >= MIN_SIZE[0] and placed.height() >= MIN_SIZE[1]


def test_the_kb_search_does_not_cover_the_mention_being_linked(qtbot, window):
    window.move(0, 0)
    dialog = window.curation.open_kb_search()
    qtbot.waitExposed(dialog)
    mention = window.abstract.mention_rect(window.model.current)
    assert not dialog.frameGeometry().intersects(mention), (dialog.frameGeometry(), mention)
    dialog.reject()


def test_a_document_marked_done_is_marked_in_the_queue(qtbot, window, demo_project):
    doc_id = window.model.doc.doc_id
    row = window.queue.model.shown_rows[doc_id]
    assert not window.queue.model.index(row, 0).data().startswith("✔")
    entry = window.queue.entry(doc_id)
    assert entry.reviewed < entry.mentions  # mentions still open: only the mark can make it done
    done_before = int(window.queue.summary.text().split(" of ")[0])
    qtbot.keyClick(window, Qt.Key.Key_D)
    qtbot.waitUntil(lambda: window.queue.entry(doc_id).marked_done)
    # the footer counts the marked document as done (it said "0 of 792 documents done" beside a ✔)
    assert window.queue.summary.text().startswith(f"{done_before + 1} of ")
    row = window.queue.model.shown_rows[doc_id]
    assert window.queue.model.index(row, 0).data() == f"✔ {doc_id}"
    assert "marked done" in window.queue.model.index(row, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert window.queue.current_id() == doc_id
    # as the store says, read afresh; and D again clears it
    assert [e.marked_done for e in demo_project.desk.queue([doc_id])] == [True]
    qtbot.keyClick(window, Qt.Key.Key_D)
    qtbot.waitUntil(lambda: not window.queue.entry(doc_id).marked_done)
    assert [e.marked_done for e in demo_project.desk.queue([doc_id])] == [False]
    assert window.queue.summary.text().startswith(f"{done_before} of ")
