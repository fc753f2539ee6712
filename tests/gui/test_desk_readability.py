"""Issue 31 items 7 and 8 in the real window on the demo project: what a curator reads (not-in-the-KB in
words, the key help within the window, names elided where rows differ, type colours that can be hidden)
and the small things a session met (the window's size, the no-teaching indicator, the first Ctrl+F)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel


def _select(window, doc_id: str, text: str) -> int:
    window.document.open_document(doc_id)
    index = [i for i, m in enumerate(window.model.doc.mentions) if m.text == text][0]
    window.document.select_mention(index)
    return window.model.mention_ids[index]


def test_the_identical_mentions_dialog_says_not_in_the_kb_in_words(window, qtbot) -> None:
    """Ctrl+D after N: the dialog and the saved step read "not in the KB", never the log's "nil" or
    its "-1"."""
    source = _select(window, "90000003", "cystic fibrosis")
    qtbot.keyClick(window, Qt.Key.Key_N)
    window.document.select_mention(window.model.mention_ids.index(source))
    qtbot.keyClick(window, Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier)
    dialog = window.menu_dialog
    texts = " ".join(label.text() for label in dialog.findChildren(QLabel))
    assert "not in the KB “cystic fibrosis”" in texts
    assert "nil" not in texts and "-1" not in texts
    dialog.accept()
    assert window.act_undo.text().startswith("Undo not in the KB “cystic fibrosis” copied to")


def test_the_window_size_and_pane_widths_are_kept_across_a_restart(window, demo_project, app_settings, qtbot):
    from app.gui.main_window import MainWindow

    screen = window.screen().availableGeometry()  # offscreen: 800 × 800; restoreGeometry keeps a window on it
    size = (screen.width() - 20, screen.height() - 40)
    window.resize(*size)
    qtbot.waitUntil(lambda: (window.width(), window.height()) == size)
    window.splitter.setSizes([500, 300, 400])
    panes = window.splitter.sizes()
    window.close()
    again = MainWindow(demo_project, app_settings, background=False)
    qtbot.addWidget(again)
    again.show()
    qtbot.waitExposed(again)
    try:
        assert (again.width(), again.height()) == size != (1500, 880)
        assert again.splitter.sizes() == panes
    finally:
        again.service.shutdown()


def test_deciding_without_teaching_shows_a_lasting_sign(window, qtbot) -> None:
    """Curate ▸ Decide without teaching: a sign stays in the status bar while it is on, after the status
    message has been replaced, and goes when it is off."""
    signs = [
        label
        for label in window.statusBar().findChildren(QLabel)
        if "without teaching" in label.text() and label.isVisible()
    ]
    assert not signs
    window.menus.learnt.no_teach.trigger()
    window.statusBar().showMessage("something else")
    shown = [
        label
        for label in window.statusBar().findChildren(QLabel)
        if "without teaching" in label.text() and label.isVisible()
    ]
    assert len(shown) == 1 and window.statusBar().currentMessage() == "something else"
    window.menus.learnt.no_teach.trigger()
    assert not shown[0].isVisible()


def test_the_first_kb_search_builds_its_index_off_the_window_thread(window, demo_project, qtbot, monkeypatch):
    """The first Ctrl+F of a session: the forgiving index is built in a thread while the dialog is shown
    and takes keys (built in the window's thread, it kept the dialog from showing and the typed letters
    went to the desk under it: "ion" for "infection"). Every letter typed reaches the query, and the
    results are for all of it."""
    import threading

    from core.kb import name_search as name_index_module

    built_in: list[str] = []
    original = name_index_module.NameIndex.__init__

    def record(self, *args, **kwargs):
        built_in.append(threading.current_thread().name)
        original(self, *args, **kwargs)

    monkeypatch.setattr(name_index_module.NameIndex, "__init__", record)
    assert not demo_project.kb.name_index_built()
    _select(window, "90000003", "cystic fibrosis")
    qtbot.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    dialog = window.curation.kb_dialog
    assert dialog.isVisible()
    qtbot.keyClicks(dialog.query, "fibrosis")
    qtbot.waitUntil(lambda: dialog.results.rowCount() > 0 and not dialog._timer.isActive(), timeout=10000)
    assert dialog.query.text() == "fibrosis"
    assert built_in and threading.main_thread().name not in built_in
    names = [dialog.results.item(row, 1).text().lower() for row in range(dialog.results.rowCount())]
    assert any("fibrosis" in name for name in names)
    dialog.reject()


def test_the_key_help_fits_the_window_at_1500_and_1600_px(window, qtbot) -> None:
    """F1 at 1,500 and 1,600 px wide: both columns whole inside the window (the right one ran off its
    edge, only the keys showing). Laid out as Qt lays out the sheet's rich text at the width it gets."""
    from PySide6.QtGui import QTextDocument

    for width in (1500, 1600):
        window.resize(width, 880)
        qtbot.waitUntil(lambda width=width: window.width() == width)
        qtbot.keyClick(window, Qt.Key.Key_F1)
        overlay = window.help_overlay
        label = overlay.findChild(QLabel, "keyHelp")
        assert overlay.isVisible() and overlay.width() == width
        layout = QTextDocument()
        layout.setDefaultFont(label.font())
        layout.setHtml(label.text())
        layout.setTextWidth(label.width())
        assert label.geometry().right() <= overlay.width() and label.sizeHint().width() <= overlay.width()
        assert layout.idealWidth() <= label.width()
        assert layout.size().height() <= overlay.height()
        qtbot.keyClick(overlay, Qt.Key.Key_Escape)
        assert not overlay.isVisible()


def _mesh_like_candidates():
    """Candidates as a MeSH project shows them: long names that differ in one word, matched synonyms
    and several tree numbers each."""
    from core.documents import Candidate
    from core.kb.concept import Concept

    rows = [
        (
            "D000001",
            "Complement Factor H Deficiency",
            "CFH Deficiency",
            ("C15.378.071.141.150.470", "C20.673.050"),
        ),
        (
            "D000002",
            "Complement Factor I Deficiency",
            "CFI Deficiency",
            ("C15.378.071.141.150.480", "C20.673.060"),
        ),
        (
            "D000003",
            "Complement Factor D Deficiency",
            "Factor D, Complement, Deficiency of",
            ("C20.673.070",),
        ),
        ("D000004", "Hereditary Complement Deficiency Diseases", "", ("C20.673.795.500",)),
    ]
    candidates = [
        Candidate(cid, name, synonym or name, 0.9 - 0.1 * n, 0.8 - 0.1 * n)
        for n, (cid, name, synonym, _trees) in enumerate(rows)
    ]
    concepts = {
        cid: Concept(cid, "MESH", name, (synonym,) if synonym else (), tree_numbers=trees)
        for cid, name, synonym, trees in rows
    }
    return candidates, concepts


def _shown(panel, row: int, column: int) -> str:
    """The text the name column paints: Qt's view item option as the column's delegate fills it."""
    from PySide6.QtWidgets import QStyleOptionViewItem

    index = panel.model.index(row, column)
    option = QStyleOptionViewItem()
    option.initFrom(panel.view)
    option.rect = panel.view.visualRect(index)
    option.widget = panel.view
    panel.view.itemDelegateForColumn(column).initStyleOption(option, index)
    return option.text


def test_names_that_differ_in_one_word_keep_it_and_the_name_column_takes_the_room(qtbot) -> None:
    """A MeSH-like list in the candidates pane at its width in a 1,500 px window (about 640 px): the
    preferred-name column is the widest text column, shows whole the names that fit, and where a name
    is elided the word that tells it from its neighbours ("H", "I", "D") is still painted."""
    from app.gui.candidate_panel import CandidatePanel

    panel = CandidatePanel()
    qtbot.addWidget(panel)
    panel.resize(640, 400)
    panel.show()
    qtbot.waitExposed(panel)
    candidates, concepts = _mesh_like_candidates()
    panel.show_candidates("<b>CFH deficiency</b>", candidates, concepts, [], "ranker")
    header = panel.view.horizontalHeader()
    name_width = header.sectionSize(2)
    assert panel.view.isColumnHidden(4)  # too narrow to read: tree numbers give way (concept pane)
    assert all(name_width >= header.sectionSize(c) for c in (3, 4))
    longest = max(panel.view.fontMetrics().horizontalAdvance(c.name) for c in candidates)
    shown_room = panel.view.viewport().width() - sum(
        header.sectionSize(c) for c in range(7) if c != 2 and not panel.view.isColumnHidden(c)
    )
    assert name_width >= min(longest + 10, int(0.6 * shown_room))
    panel.resize(1000, 400)  # wider: the tree numbers come back, the name still the widest text column
    qtbot.waitUntil(lambda: not panel.view.isColumnHidden(4) and not panel.view.isColumnHidden(3))
    assert header.sectionSize(2) > header.sectionSize(3) and header.sectionSize(2) > header.sectionSize(4)
    panel.resize(640, 400)
    qtbot.waitUntil(lambda: header.sectionSize(2) == name_width)
    for width in (name_width, 150, 110):
        header.setSectionResizeMode(2, header.ResizeMode.Interactive)  # narrower than the pane gives it
        header.resizeSection(2, width)
        painted = [_shown(panel, row, 2) for row in range(3)]
        assert len(set(painted)) == 3, painted
        for text, letter in zip(painted, "HID", strict=True):
            assert f" {letter} " in f" {text} ", (width, painted)
        for text in painted:
            assert panel.view.fontMetrics().horizontalAdvance(text) <= width


def test_elision_gives_way_on_shared_and_common_words_first() -> None:
    """Measured in characters: the shared words shorten, then go; the differing word is the last left."""
    from app.gui.elide import elide_name, shared_words

    names = [
        "Complement Factor H Deficiency",
        "Complement Factor I Deficiency",
        "Complement Component 3 Deficiency",
    ]
    shared = shared_words(names)
    assert shared == {"complement", "factor", "deficiency"}
    assert elide_name(names[0], 40, len, shared) == names[0]
    assert elide_name(names[0], 22, len, shared) == "Compl. Factor H Defic."
    assert elide_name(names[0], 10, len, shared) == "C. F. H D."
    assert elide_name(names[0], 6, len, shared) == "… H …"
    assert elide_name(names[2], 10, len, shared) == "… C. 3 …"
    # no neighbours: common words give way, then the longest words shorten, the end is cut last
    alone = elide_name("Deficiency of the Complement Factor H", 24, len, frozenset())
    assert len(alone) <= 24 and alone.endswith(" H")
    assert alone == "Defic. … Compl. Factor H"
    assert elide_name("Supercalifragilistic", 8, len, frozenset()) == "Super."
    assert elide_name("Supercalifragilistic", 4, len, frozenset()) == "Sup…"


def test_the_queue_shows_flagged_or_noted_documents(window, demo_project, qtbot) -> None:
    """Show = "flagged or noted": the documents with a flag or note on themselves or on a mention, kept
    up to date as marks are set and undone, without moving the open document."""
    from app.gui.queue_model import MARKED

    SHIFT = Qt.KeyboardModifier.ShiftModifier
    window.document.open_document("90000003")
    qtbot.keyClick(window, Qt.Key.Key_F, SHIFT)  # flag the document
    assert MARKED in window.queue.choices("status")
    window.queue.set_filters(status=MARKED)
    assert window.queue.visible_ids() == ["90000003"]
    _select(window, "90000004", _first_text(window, "90000004"))
    qtbot.keyClick(window, Qt.Key.Key_F)  # flag the mention
    assert window.queue.visible_ids() == ["90000003", "90000004"]
    qtbot.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # the flag undone
    model = window.queue.model

    def passing() -> list[str]:
        return [entry.doc_id for entry in model.shown if model.passes(entry)]

    qtbot.waitUntil(lambda: passing() == ["90000003"])
    assert window.model.doc.doc_id == "90000004"  # still open: shown only because it is (the held row)
    assert window.queue.visible_ids() == ["90000003", "90000004"]
    expected = {
        doc
        for doc in demo_project.documents.document_ids()
        if demo_project.marks.document_marks([doc]).get(doc, {}).keys() & {"flag", "note"}
    }
    assert set(passing()) == expected == {"90000003"}


def _first_text(window, doc_id: str) -> str:
    window.document.open_document(doc_id)
    return window.model.doc.mentions[0].text


def _format_at(window, offset: int):
    from PySide6.QtGui import QTextCursor

    cursor = QTextCursor(window.abstract.document())
    cursor.setPosition(offset + 1)  # the format of the character before the cursor: the mention's first
    return cursor.charFormat()


def test_mentions_coloured_by_type_keep_their_state_and_a_type_can_be_hidden(
    window, demo_project, app_settings, qtbot
) -> None:
    """Alt+5 colours mentions by type (each type its own fill, as PubTator does), the state still
    drawn (an accepted mention bold, a rejected one struck out); a click on a type in the legend hides
    that type's fills and another shows them again; the choice is kept for the project."""
    from PySide6.QtGui import QColor, QFont

    from app.gui.main_window import MainWindow
    from app.gui.type_colours import type_colour, type_slots

    window.document.open_document("90000004")
    mentions = window.model.doc.mentions
    types = {m.type for m in mentions}
    window.document.select_mention(0)
    qtbot.keyClick(window, Qt.Key.Key_Return)  # accept mention 1
    window.document.select_mention(1)
    qtbot.keyClick(window, Qt.Key.Key_R)  # reject mention 2
    window.document.select_mention(len(mentions) - 1)
    qtbot.keyClick(window, Qt.Key.Key_5, Qt.KeyboardModifier.AltModifier)
    assert window.view.by_type and window.abstract.type_slots is not None
    all_types = {t for d in demo_project.documents.document_ids() for t in _types_of(demo_project, d)}
    slots = type_slots(all_types)
    assert len({slots[t] for t in all_types}) == min(len(all_types), 8)  # a colour per type
    accepted, rejected = _format_at(window, mentions[0].start), _format_at(window, mentions[1].start)
    assert accepted.background().color() == QColor(type_colour(slots[mentions[0].type], False)[0])
    assert accepted.fontWeight() == QFont.Weight.Bold and not accepted.fontStrikeOut()
    assert rejected.fontStrikeOut() and rejected.fontWeight() != QFont.Weight.Bold
    for name in types:
        assert f"type:{name}" in window.legend.text()

    hidden = mentions[0].type
    window.legend.linkActivated.emit(f"type:{hidden}")
    assert _format_at(window, mentions[0].start).background().style() == Qt.BrushStyle.NoBrush
    others = [m for m in mentions if m.type != hidden]
    if others:
        shown = _format_at(window, others[0].start).background().color()
        assert shown == QColor(type_colour(slots[others[0].type], False)[0])
    window.close()
    again = MainWindow(demo_project, app_settings, background=False)
    qtbot.addWidget(again)
    try:
        assert again.view.by_type and again.view.hidden_types == {hidden}
        again.legend.linkActivated.emit(f"type:{hidden}")
        again.document.open_document("90000004")
        assert _format_at(again, mentions[0].start).background().color() == QColor(
            type_colour(slots[hidden], False)[0]
        )
    finally:
        again.service.shutdown()


def _types_of(project, doc_id: str) -> set[str]:
    return {m.type for m in project.documents.document(doc_id).mentions}


def test_after_reopening_a_moved_project_the_models_load_at_once(qtbot, demo_project, app_settings, tmp_path):
    """"Reopen where it is now…": the linker is loaded from the new place straight away (it waited for a
    span edit, about 20 s, and identical mentions were not suggested again meanwhile)."""
    import shutil

    from app.gui.main_window import MainWindow

    window = MainWindow(demo_project, app_settings, background=True)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    try:
        qtbot.waitUntil(lambda: window.service.models_loaded and not window.service.busy(), timeout=300_000)
        moved = tmp_path / "elsewhere"
        old_place = demo_project.path
        shutil.move(str(old_place), moved)
        demo_project.engine.dispose()
        with qtbot.waitSignal(window.service.linkerReady, timeout=300_000):
            assert window.watch.reopen_project_at(moved)
            assert window.service.busy()  # loading, asked by nothing but the reopen
        assert window.service.models_loaded and window.project.path == moved
    finally:
        window.close()
        window.service.shutdown()
