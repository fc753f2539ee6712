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
    window.act_no_teach.trigger()
    window.statusBar().showMessage("something else")
    shown = [
        label
        for label in window.statusBar().findChildren(QLabel)
        if "without teaching" in label.text() and label.isVisible()
    ]
    assert len(shown) == 1 and window.statusBar().currentMessage() == "something else"
    window.act_no_teach.trigger()
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
