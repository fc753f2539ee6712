"""Who decides: the desk signs every decision with the curator's name, so multi-curator agreement and
adjudication can tell curators apart (it used to sign everything with the login name, "root" on a
shared machine, without asking). The name is asked once, at the first start (prefilled with the login
name; not asked when $CURALINK_CURATOR names the curator, as in headless runs and tests), shown in the
status bar, and switched with Curate ▸ Switch curator…; the undo stack then holds the new curator's own
recent decisions."""

from __future__ import annotations

import html
import unicodedata
from dataclasses import dataclass

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit, QVBoxLayout

from app.gui.settings import CURATOR_VARIABLE, login_name

MAX_NAME = 80


def clean_name(text: str) -> str:
    """The name as stored: trimmed, control characters dropped, at most MAX_NAME characters."""
    spaced = "".join(" " if c.isspace() else c for c in text)
    kept = "".join(c for c in spaced if unicodedata.category(c)[0] != "C")
    return " ".join(kept.split())[:MAX_NAME]


class CuratorDialog(QDialog):
    """Asks who is curating; OK stays off while the name is empty."""

    def __init__(self, parent=None, *, name: str = "", first_start: bool = False):
        super().__init__(parent)
        self.setWindowTitle("Who is curating?" if first_start else "Switch curator")
        self.name_edit = QLineEdit(name)
        self.name_edit.selectAll()
        explanation = QLabel(
            "Every decision is stored with this name: agreement between curators and adjudication "
            "compare curators by it. It is shown in the status bar; Curate ▸ Switch curator… changes it."
            + (f" (Set ${CURATOR_VARIABLE} to skip this question.)" if first_start else "")
        )
        explanation.setObjectName("hint")
        explanation.setWordWrap(True)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow("Curator name", self.name_edit)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(explanation)
        layout.addWidget(self.buttons)
        self.setMinimumWidth(440)
        self.name_edit.textChanged.connect(self._check)
        self._check()

    @property
    def name(self) -> str:
        return clean_name(self.name_edit.text())

    def _check(self) -> None:
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(bool(self.name))


class CuratorStatus(QObject):
    """The status bar's curator label and the switch; a child of the window, so the settings' signal
    lets go of it with the window."""

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.label = QLabel()
        self.label.setObjectName("curatorLabel")
        window.statusBar().addPermanentWidget(self.label)
        window.settings.signals.curatorChanged.connect(self.on_changed)
        self.show_name()

    def show_name(self) -> None:
        name = self.window.settings.curator
        self.label.setText(f"curator: <b>{html.escape(name)}</b>")
        self.label.setToolTip("Decisions are stored under this name. Curate ▸ Switch curator… changes it.")

    def on_changed(self, name: str) -> None:
        """Another curator took over: the label, and an undo stack of their own decisions."""
        self.show_name()
        window = self.window
        window.extras.restore_undo_history()  # the project keeps one history per curator (core.jobs.curation.undo)
        window.statusBar().showMessage(
            f"curating as {name}: decisions from now on are stored under this name", 6000
        )

    def ask(self, *, first_start: bool = False) -> CuratorDialog | None:
        """The name dialog (window-modal, never blocking the event loop); None while changes wait to be
        saved under the current name (a switch then would sign them with the old one in another stack)."""
        window = self.window
        if not first_start and window.saving.waiting_for_writes("switching curator"):
            return None
        name = login_name() if first_start else window.settings.curator
        dialog = CuratorDialog(window, name=name, first_start=first_start)

        def take() -> None:
            window.settings.curator = dialog.name
            window.settings.sync()
            self.show_name()  # the first answer may equal the login name: no change signal then

        dialog.accepted.connect(take)
        window.menu_dialog = dialog
        dialog.open()
        return dialog


@dataclass(frozen=True)
class CuratorActions:
    """Who decides (install_curator), kept by the window in its `menus`."""

    status: CuratorStatus  # the status bar's name, and the dialog that changes it
    switch: QAction  # Curate ▸ Switch curator…


def install_curator(window, menu) -> CuratorActions:
    """The status label and Curate ▸ Switch curator…, while the window builds its menus."""
    status = CuratorStatus(window)
    switch = window.key_action("Switch curator…", [], status.ask)
    menu.addSeparator()
    menu.addAction(switch)
    return CuratorActions(status, switch)


def ask_curator_once(window) -> CuratorDialog | None:
    """At the first start (no name stored, none in $CURALINK_CURATOR): ask who is curating."""
    if window.settings.curator_chosen:
        return None
    return window.menus.curator.status.ask(first_start=True)
