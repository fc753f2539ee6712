"""Who decided (issue 23 item 11): the desk signed every decision with the login name ("root") and never
asked who was curating. It now asks once, shows the name in the status bar and switches it; decisions
carry the name of whoever was curating when they were made, read back from the store's own table."""

from __future__ import annotations

import getpass
import os

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QDialogButtonBox, QLabel
from sqlalchemy import select

from app.gui.settings import AppSettings
from core.store.schema import DecisionRow


def _ok(dialog):
    return dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)


def _signed(project) -> list[tuple[int, str, str]]:
    """(mention id, action, curator) of every decision row, in the order written."""
    with project.session() as session:
        rows = session.execute(
            select(DecisionRow.mention_id, DecisionRow.action, DecisionRow.curator).order_by(DecisionRow.id)
        ).all()
    return [tuple(row) for row in rows]


def _curator_label(window) -> str:
    found = [w for w in window.statusBar().findChildren(QLabel) if w.objectName() == "curatorLabel"]
    assert len(found) == 1 and found[0].isVisible()
    return found[0].text()


def test_decisions_after_switching_carry_the_new_curator(window, demo_project, app_settings, qtbot, tmp_path):
    first, second, third = window.model.mention_ids[:3]
    assert "tester" in _curator_label(window)
    window.curation.decide("reject")
    assert _signed(demo_project)[-1] == (first, "reject", "tester")

    window.menus.curator.switch.trigger()
    dialog = window.menu_dialog
    assert dialog.isVisible() and dialog.name_edit.text() == "tester"
    dialog.name_edit.setText("   ")
    assert not _ok(dialog).isEnabled()  # no nameless decisions
    dialog.name_edit.setText("  Ada\tLovelace ")
    _ok(dialog).click()
    assert "Ada Lovelace" in _curator_label(window)
    assert window.undo_stack.count() == 0  # tester's reject is not Ada's to undo

    window.document.select_mention(1)
    window.curation.accept_rank(1)
    window.document.select_mention(2)
    window.curation.decide("nil")
    assert _signed(demo_project)[-2:] == [(second, "accept", "Ada Lovelace"), (third, "nil", "Ada Lovelace")]
    decisions = demo_project.curation.current_decisions()
    assert (decisions[first].curator, decisions[second].curator) == ("tester", "Ada Lovelace")
    # The next start reads the name back.
    reread = AppSettings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    assert reread.curator == "Ada Lovelace" and reread.curator_chosen

    # Switching back brings tester's own undo history; Ctrl+Z undoes tester's reject, signed by tester.
    window.menus.curator.switch.trigger()
    window.menu_dialog.name_edit.setText("tester")
    _ok(window.menu_dialog).click()
    assert window.undo_stack.count() == 1
    window.saving.undo()
    qtbot.waitUntil(lambda: _signed(demo_project)[-1][1] == "revert", timeout=5000)
    assert _signed(demo_project)[-1] == (first, "revert", "tester")


def test_first_start_asks_once_prefilled_with_the_login_name(qtbot, demo_project, tmp_path, monkeypatch):
    from app.gui.curator_identity import ask_curator_once
    from app.gui.main_window import MainWindow

    if "CURALINK_CURATOR" in os.environ:  # unset for this test only
        monkeypatch.delenv("CURALINK_CURATOR")
    settings = AppSettings(QSettings(str(tmp_path / "fresh.ini"), QSettings.Format.IniFormat))
    assert not settings.curator_chosen
    window = MainWindow(demo_project, settings, background=False)
    qtbot.addWidget(window)
    window.show()
    dialog = ask_curator_once(window)
    assert dialog is not None and dialog.isVisible()
    assert dialog.name_edit.text() == getpass.getuser()
    dialog.name_edit.setText("bea")
    _ok(dialog).click()
    assert "bea" in _curator_label(window)
    window.curation.accept_rank(1)
    assert _signed(demo_project)[-1][2] == "bea"
    assert ask_curator_once(window) is None  # asked once
    reread = AppSettings(QSettings(str(tmp_path / "fresh.ini"), QSettings.Format.IniFormat))
    assert reread.curator == "bea" and reread.curator_chosen
    window.service.shutdown()


def test_the_environment_names_the_curator_without_asking(qtbot, demo_project, tmp_path, monkeypatch):
    from app.gui.curator_identity import ask_curator_once
    from app.gui.main_window import MainWindow

    monkeypatch.setenv("CURALINK_CURATOR", "cy")
    settings = AppSettings(QSettings(str(tmp_path / "fresh.ini"), QSettings.Format.IniFormat))
    window = MainWindow(demo_project, settings, background=False)
    qtbot.addWidget(window)
    window.show()
    assert ask_curator_once(window) is None
    assert "cy" in _curator_label(window)
    window.curation.accept_rank(1)
    assert _signed(demo_project)[-1][2] == "cy"
    window.service.shutdown()
