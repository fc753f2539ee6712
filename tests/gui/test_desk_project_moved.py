"""Issue 23 item 9 in the real window: the project folder is moved away while the desk is open. The desk's
change watcher raised sqlite3.OperationalError ("unable to open database file") into the Qt event loop on
every poll. Now it says once that the project cannot be reached, stops polling, keeps the change it could
not save on screen, and reopens the project where it now is, saving that change there.

The folder is really moved (shutil.move) while another program (a real second process) holds the database's
write lock, so the curator's decision waits to be saved. SQLite keeps working through connections opened
before the move, so the pool's connections are closed after it, as an unmount closes them: every later read
or write opens the database by its old path and fails as in the issue."""

from __future__ import annotations

import logging
import shutil

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame

from core.store import Project
from tests.gui.test_desk_saving import write_lock_held

CEILING_MS = 600_000
"""How long a wait for an event may take before the test gives up: a hang, never a slow machine."""


def _open(qtbot, project, settings):
    from app.gui.main_window import MainWindow

    window = MainWindow(project, settings, background=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=CEILING_MS)
    return window


def test_a_moved_project_is_said_once_keeps_the_unsaved_change_and_reopens_where_it_is(
    qtbot, demo_project, app_settings, tmp_path, caplog
) -> None:
    window = _open(qtbot, demo_project, app_settings)
    window.document.select_mention(0)
    mention_id = window.model.current_mention_id()
    doc_id = window.model.doc.doc_id
    shown_text = window.abstract.toPlainText()
    old_place = demo_project.path
    moved = tmp_path / "elsewhere" / "renamed"
    moved.parent.mkdir()
    caplog.set_level(logging.WARNING, logger="app.gui.desk_watch")

    with write_lock_held(old_place / "curalink.db"):  # another program writes: the decision waits
        assert window.curation.decide("nil") is not None
        assert [w.label for w in window.saving.writer.pending], "the decision waits to be saved"
        shutil.move(str(old_place), moved)
        demo_project.engine.dispose()  # the connections of before the move are gone, as after an unmount
        window.watch.watch_timer.setInterval(10)  # the next poll comes at once
        qtbot.waitUntil(
            lambda: window.watch.lost_dialog is not None and window.watch.lost_dialog.isVisible(),
            timeout=CEILING_MS,
        )
        said = window.watch.lost_dialog.text()
        assert not window.watch.watch_timer.isActive(), "polling stopped"
        assert str(old_place) in said and "can no longer be reached" in said and "1 change" in said
        qtbot.waitUntil(
            lambda: window.saving.writer.error is not None, timeout=CEILING_MS
        )  # its retries stopped
        for _ in range(3):  # a poll that still comes (a queued tick) says nothing again and raises nothing
            assert window.watch.check_project_changes() is False
        window.act_next.trigger()  # a key whose reads fail is said by the same dialog, not raised
        window.act_nil.trigger()
        assert window.watch.lost_dialog.text() == said and window.watch.lost_dialog.isVisible()
        assert [r.getMessage() for r in caplog.records].count(said) == 1
        # What the curator did stays on screen: the waiting decision in the save bar, the abstract.
        assert len(window.saving.writer.pending) == 1
        bar = window.findChild(QFrame, "saveBar")
        assert bar is not None and bar.isVisible()
        assert window.abstract.toPlainText() == shown_text and window.model.doc.doc_id == doc_id

    # Reopen where it is now: the button, the folder chooser, the folder.
    window.watch.lost_dialog.buttonClicked.emit(window.watch.reopen_button)
    chooser = window.menu_dialog
    qtbot.waitUntil(chooser.isVisible, timeout=CEILING_MS)
    chooser.setDirectory(str(moved.parent))
    chooser.selectFile(str(moved))
    chooser.accept()  # Choose
    qtbot.waitUntil(lambda: not window.saving.writer.pending, timeout=CEILING_MS)
    assert window.watch.lost_dialog is None and window.watch.watch_timer.isActive()
    assert window.project.path == moved and app_settings.last_project == moved
    with Project.open(moved) as again:  # the waiting change is in the project at its new place
        assert again.curation.current_decisions(mention_ids=[mention_id])[mention_id].action == "nil"
    assert window.model.decisions[mention_id].action == "nil"
    window.document.select_mention(window.model.mention_ids.index(mention_id))
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=CEILING_MS)
    qtbot.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # the desk works on as before
    qtbot.waitUntil(lambda: mention_id not in window.model.decisions, timeout=CEILING_MS)
    with Project.open(moved) as again:
        assert mention_id not in again.curation.current_decisions(mention_ids=[mention_id])
    window.close()


def test_a_closed_desk_stops_polling_its_project(qtbot, demo_project, app_settings) -> None:
    """The fresh-clone failure of test_view_is_restored_after_the_project_moves: the closed desk's watch
    timer still polled the project after it was closed and moved."""
    window = _open(qtbot, demo_project, app_settings)
    assert window.watch.watch_timer.isActive()
    window.close()
    assert not window.watch.watch_timer.isActive()
