"""Issue 31, items 1, 2 and 4: every key acts on what the curator sees. Each sequence of the report is
driven by keys in the real window on the demo project; each test names the documents the curator asked
for and checks that the store holds nothing on any other, and no identical decision twice.

Keys are sent as a keyboard sends them: to the widget that holds the window's focus (`press`). Qt fires
the window's shortcuts first only while it counts the window as active; after a dialog closes it may not
(as under Xvfb), and the key then reached the queue, whose type-ahead opened documents by title."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QInputDialog

from core.jobs.curation import operations as curation
from core.store.schema import DecisionRow

CTRL = Qt.KeyboardModifier.ControlModifier
ALT = Qt.KeyboardModifier.AltModifier
NONE = Qt.KeyboardModifier.NoModifier


def press(qtbot, window, key, modifiers=NONE) -> None:
    """A key press where the keyboard delivers it: the widget holding the window's focus."""
    qtbot.keyClick(window.focusWidget() or window, key, modifiers)


def click_row(qtbot, window, doc_id: str) -> None:
    """A click on the document's title in the queue (the curator asks for it)."""
    view = window.queue.view
    rect = view.visualRect(window.queue.model.index(window.queue.visible_row(doc_id), 1))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.model.doc.doc_id == doc_id


def correct_by_search(qtbot, window, concept_id: str) -> None:
    """Ctrl+F, the concept's id, Enter: a correction of the selected mention through the KB search."""
    press(qtbot, window, Qt.Key.Key_F, CTRL)
    search = window.curation.kb_dialog
    search.query.setText(concept_id)
    search.run_search()
    qtbot.keyClick(search.query, Qt.Key.Key_Return)
    assert not search.isVisible()
    qtbot.waitUntil(lambda: window.isActiveWindow())


def rows(project) -> list[tuple[int, str, str]]:
    """Every decision row: mention, action, concept."""
    with project.session() as session:
        found = session.query(DecisionRow).order_by(DecisionRow.id)
        return [(r.mention_id, r.action, r.concept_id or "") for r in found]


def decided_documents(project) -> set[str]:
    mentions = sorted({m for m, _a, _c in rows(project)})
    return set(project.documents.mention_documents(mentions).values()) if mentions else set()


def decide_whole_document(project, doc_id: str) -> None:
    """Setup, not under test: every mention of `doc_id` accepted with its top suggestion (another curator)."""
    found = list(project.documents.documents_with_mention_ids(ids=[doc_id]))
    for mention_id in found[0][1]:
        top = project.curation.suggestions(mention_id)[0]
        curation.decide(project, mention_id, "accept", concept_id=top.concept_id, curator="ann")


def test_keys_after_go_to_act_on_the_document_shown_not_as_queue_type_ahead(window, demo_project, qtbot):
    click_row(qtbot, window, "90000003")
    assert window.focusWidget() is window.queue.view
    press(qtbot, window, Qt.Key.Key_G, CTRL)
    dialog = window.menu_dialog
    qtbot.waitUntil(dialog.isActiveWindow)  # the curator types once the dialog is there
    qtbot.keyClicks(dialog.field, "90000005")
    qtbot.keyClick(dialog.field, Qt.Key.Key_Return)
    assert not dialog.isVisible() and window.model.doc.doc_id == "90000005"
    qtbot.wait(50)  # a moment's pause after the dialog: the key below is not the very next event
    # T changes the type; it is also the first letter of a queue title ("Tremor, rigidity…", 90000006).
    press(qtbot, window, Qt.Key.Key_T)
    assert window.model.doc.doc_id == "90000005" and window.queue.current_id() == "90000005"
    assert isinstance(window.menu_dialog, QInputDialog) and window.menu_dialog.isVisible()
    qtbot.waitUntil(window.menu_dialog.isActiveWindow)
    window.menu_dialog.reject()
    mention_id = window.model.current_mention_id()
    press(qtbot, window, Qt.Key.Key_Return)
    assert demo_project.curation.current_decisions()[mention_id].action == "accept"
    press(qtbot, window, Qt.Key.Key_B)  # no desk key: refused, said, and no title search either
    assert window.model.doc.doc_id == "90000005"
    assert "not a desk key" in window.statusBar().currentMessage()
    assert decided_documents(demo_project) == {"90000005"}


def test_keys_after_a_click_in_the_queue_and_the_bulk_dialog_stay_on_the_clicked_document(
    window, demo_project, qtbot
):
    click_row(qtbot, window, "90000002")
    press(qtbot, window, Qt.Key.Key_B, CTRL)
    bulk = window.menu_dialog
    qtbot.waitUntil(bulk.isActiveWindow)
    bulk.reject()  # and the next key at once, before the desk's window is active again
    # E writes a note on the mention; it is also the first letter of "Early motor signs…" (90000001).
    press(qtbot, window, Qt.Key.Key_E)
    assert window.model.doc.doc_id == "90000002"
    note = window.menu_dialog
    assert isinstance(note, QInputDialog) and "Note on" in note.labelText()
    qtbot.waitUntil(note.isActiveWindow)
    note.reject()
    first = window.model.current_mention_id()
    press(qtbot, window, Qt.Key.Key_Return)
    press(qtbot, window, Qt.Key.Key_D)
    assert window.model.doc.doc_id == "90000002"
    assert demo_project.curation.current_decisions()[first].action == "accept"
    assert "done" in demo_project.marks.document_marks(["90000002"]).get("90000002", {})
    assert decided_documents(demo_project) == {"90000002"}
    assert set(demo_project.marks.document_marks(demo_project.documents.document_ids())) == {"90000002"}


def test_show_unreviewed_by_uncertainty_never_switches_the_open_document(window, demo_project, qtbot):
    press(qtbot, window, Qt.Key.Key_1, ALT)  # Show: unreviewed
    press(qtbot, window, Qt.Key.Key_4, ALT)  # Sort: by uncertainty
    assert window.queue.filters()["status"] == "unreviewed" and window.queue.sort_key() == "uncertainty"
    chosen = window.queue.visible_ids()[1]
    click_row(qtbot, window, chosen)
    seen = window.queue.visible_ids()
    press(qtbot, window, Qt.Key.Key_1)  # accept: the document is no longer unreviewed
    assert window.model.doc.doc_id == chosen and window.queue.current_id() == chosen
    assert window.queue.visible_ids() == seen  # neither hidden nor moved while it is open
    corrected = window.model.current_mention_id()
    correct_by_search(qtbot, window, "D003866")  # a correction through the KB search
    assert window.model.doc.doc_id == chosen and window.queue.current_id() == chosen
    press(qtbot, window, Qt.Key.Key_Return)
    press(qtbot, window, Qt.Key.Key_Return)
    press(qtbot, window, Qt.Key.Key_D)
    assert window.model.doc.doc_id == chosen
    assert demo_project.curation.current_decisions()[corrected].concept_id == "D003866"
    assert decided_documents(demo_project) == {chosen}
    assert set(demo_project.marks.document_marks(demo_project.documents.document_ids())) == {chosen}


def test_next_document_follows_the_order_on_screen_after_finishing_one(window, demo_project, qtbot):
    decide_whole_document(demo_project, "90000006")  # a finished document: last by uncertainty
    window.document.reload_queue()
    press(qtbot, window, Qt.Key.Key_4, ALT)  # Sort: by uncertainty
    seen = window.queue.visible_ids()
    assert seen[-1] == "90000006"
    click_row(qtbot, window, seen[0])
    for _ in window.model.mention_ids:  # every mention accepted: nothing uncertain is left in it
        press(qtbot, window, Qt.Key.Key_Return)
    press(qtbot, window, Qt.Key.Key_D)
    assert demo_project.desk.queue(doc_ids=[seen[0]])[0].margin == 1.0
    assert window.queue.visible_ids() == seen  # it stays where the curator found it while open
    press(qtbot, window, Qt.Key.Key_Down, CTRL)
    assert window.model.doc.doc_id == seen[1]  # the next uncertain one, not the next finished one
    shown = window.queue.visible_ids()  # left, the finished one takes its own place among the finished
    assert shown.index(seen[0]) > shown.index(seen[1]) and shown[-1] == "90000006"


def test_go_to_a_hidden_document_keeps_show_and_split(window, demo_project, qtbot):
    decide_whole_document(demo_project, "90000004")
    window.document.reload_queue()
    press(qtbot, window, Qt.Key.Key_1, ALT)  # Show: unreviewed; 90000004 (done) is hidden
    assert "90000004" not in window.queue.visible_ids()
    press(qtbot, window, Qt.Key.Key_G, CTRL)
    dialog = window.menu_dialog
    qtbot.keyClicks(dialog.field, "90000004")
    qtbot.keyClick(dialog.field, Qt.Key.Key_Return)
    assert window.model.doc.doc_id == "90000004" and window.queue.current_id() == "90000004"
    assert window.queue.filters()["status"] == "unreviewed"
    press(qtbot, window, Qt.Key.Key_Down, CTRL)
    assert window.model.doc.doc_id == "90000005"  # the next one the filter shows
    assert "90000004" not in window.queue.visible_ids() and window.queue.filters()["status"] == "unreviewed"
    press(qtbot, window, Qt.Key.Key_Down, CTRL)
    press(qtbot, window, Qt.Key.Key_Down, CTRL)  # past the last one: said, nothing else opened
    assert window.model.doc.doc_id == "90000006"
    assert "last document the queue shows" in window.statusBar().currentMessage()


def test_enter_on_a_decided_mention_moves_on_and_stores_nothing(window, demo_project, qtbot):
    assert window.model.doc.doc_id == "90000001" and window.model.current == 0
    corrected = window.model.current_mention_id()
    correct_by_search(qtbot, window, "D002819")  # a correction through the KB search
    assert window.model.current == 1
    press(qtbot, window, Qt.Key.Key_K)  # back to the correction
    before = rows(demo_project)
    press(qtbot, window, Qt.Key.Key_Return)
    assert rows(demo_project) == before  # the correction stands, no row written
    assert window.model.current == 1  # on to the next undecided mention
    assert "already decided" in window.statusBar().currentMessage()
    mentions = len(window.model.mention_ids)
    for _ in range(mentions + 3):  # through to the last mention, then Enter again and again
        press(qtbot, window, Qt.Key.Key_Return)
    written = rows(demo_project)
    assert len(written) == mentions  # one row per mention: the correction and an accept for each other
    assert len({m for m, _a, _c in written}) == mentions
    assert demo_project.curation.current_decisions()[corrected].concept_id == "D002819"
    assert "every mention here" in window.statusBar().currentMessage()


def test_enter_after_applying_to_identical_mentions_keeps_the_correction(window, demo_project, qtbot):
    click_row(qtbot, window, "90000003")
    same = [i for i, m in enumerate(window.model.doc.mentions) if m.text.lower() == "cystic fibrosis"]
    assert len(same) == 2
    window.document.select_mention(same[0])
    source = window.model.current_mention_id()
    correct_by_search(qtbot, window, "D003550")  # a correction through the KB search
    window.document.select_mention(same[0])  # back on the correction, to copy it
    press(qtbot, window, Qt.Key.Key_D, CTRL)
    dialog = window.menu_dialog
    dialog.accept()
    qtbot.waitUntil(lambda: window.isActiveWindow())
    assert window.model.current_mention_id() != source
    press(qtbot, window, Qt.Key.Key_Return)
    state = demo_project.curation.current_decisions()
    copy = window.model.mention_ids[same[1]]
    assert (state[source].action, state[source].concept_id) == ("correct", "D003550")
    assert state[copy].concept_id == "D003550"
    assert [r for r in rows(demo_project) if r[0] == source] == [(source, "correct", "D003550")]


def test_a_resuggestion_waits_while_its_mention_is_selected(window, demo_project, qtbot):
    from tests.test_curator_synonyms import _correctable
    from tests.test_live_learning import _with_copies, _wrong_concept

    mention, _ = _correctable(demo_project)
    wrong = _wrong_concept(demo_project, mention)
    first, second = _with_copies(demo_project, mention.text)  # one new document, the text twice
    window.document.reload_queue()
    linking = window.service.link(["copies-1"])  # loads the models; both get suggestions
    qtbot.waitUntil(linking.done.is_set, timeout=120000)
    press(qtbot, window, Qt.Key.Key_G, CTRL)
    dialog = window.menu_dialog
    qtbot.waitUntil(dialog.isActiveWindow)
    qtbot.keyClicks(dialog.field, "copies-1")
    qtbot.keyClick(dialog.field, Qt.Key.Key_Return)
    assert window.model.current_mention_id() == first and window.model.suggestions[second]
    press(qtbot, window, Qt.Key.Key_F, CTRL)
    search = window.curation.kb_dialog
    search.query.setText(wrong)
    search.run_search()
    arrived = []  # connected after the desk's own slot: it has run when this one does
    window.service.chunkLinked.connect(lambda chunk: arrived.append(chunk))
    with qtbot.waitSignal(window.service.learned, timeout=60000) as learnt:
        qtbot.keyClick(search.query, Qt.Key.Key_Return)  # the correction teaches "text" -> wrong
        assert window.model.current_mention_id() == second  # on to the other one, its list on screen
        shown = [c.concept_id for c in window.candidates.model.candidates]
    assert learnt.args[0][1] >= 1 and shown and shown[0] != wrong
    qtbot.waitUntil(lambda: any(second in c.suggestions for c in arrived), timeout=120000)
    assert demo_project.curation.suggestions(second)[0].concept_id == wrong
    assert [c.concept_id for c in window.candidates.model.candidates] == shown  # not under the fingers
    assert "new suggestions arrived" in window.candidates.mention_label.text()
    press(qtbot, window, Qt.Key.Key_1)  # the top the curator read
    decision = demo_project.curation.current_decisions()[second]
    assert (decision.action, decision.concept_id) == ("accept", shown[0])
    press(qtbot, window, Qt.Key.Key_K)  # having left it, coming back shows the new list
    press(qtbot, window, Qt.Key.Key_J)
    assert window.model.current_mention_id() == second
    assert window.candidates.model.candidates[0].concept_id == wrong


def test_the_pane_holding_the_focus_is_framed(window, qtbot):
    from PySide6.QtGui import QColor
    from PySide6.QtWidgets import QApplication

    from app.resources import resources_dir

    app = QApplication.instance()
    before = app.styleSheet()
    app.setStyleSheet((resources_dir() / "style.qss").read_text(encoding="utf-8"))  # as the desk starts
    try:
        view = window.queue.view

        def edge() -> QColor:
            image = view.grab().toImage()
            return image.pixelColor(1, image.height() // 2)

        assert window.focusWidget() is None  # nothing holds the focus at the start: keys go to the window
        unfocused = edge()
        click_row(qtbot, window, "90000002")
        assert view.hasFocus()
        qtbot.waitUntil(lambda: edge() != unfocused)
        assert edge() == QColor("#2f6fd0")
    finally:
        app.setStyleSheet(before)
