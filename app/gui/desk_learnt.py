"""What the desk learnt from curators, where the curator can see it and take it back (issue 23 item 4).

Curate ▸ Learnt from curators… lists every synonym the curators' decisions taught the linker (the string,
its concept, the newest decision behind it, its curator and time, how many decisions teach it, how many
other mentions have the same text) with Remove / Restore: a removal is one Ctrl+Z step, and the loaded
linker withdraws the synonym at once (core.jobs.curation.learnt). Alt+Enter accepts the top (or marked) candidates
without teaching, and Curate ▸ Decide without teaching keeps every decision from teaching until it is
unchecked (the decision's detail says `"teach": false`). The dialog's check box and Curate ▸ Learn from
decisions while curating are the project's switch: off, the desk does not learn live, and the synonyms
learnt so far are withdrawn when the models are next loaded.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from core.errors import CuralinkError
from core.jobs.curation import learnt

COLUMNS = ("string", "concept", "decision", "curator", "when", "decisions", "same text", "state")


class LearntDialog(QDialog):
    """The learnt synonyms, newest first, with Remove / Restore and the project's learning switch."""

    def __init__(self, window):
        super().__init__(window)
        self.window_ = window
        self.setWindowTitle("Learnt from curators")
        self.rows: list[learnt.LearntSynonym] = []
        self.learning = QCheckBox("Learn from decisions while curating (every curator of this project)")
        self.summary = QLabel()
        self.summary.setObjectName("learntSummary")
        self.summary.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.remove = QPushButton("Remove")
        self.restore = QPushButton("Restore")
        self.remove.setToolTip(
            "the decision stays; its string stops being a synonym of the concept (Ctrl+Z undoes)"
        )
        note = QLabel(
            "Each row is a string a curator's link taught the linker as a synonym of the concept. "
            "“same text”: the other mentions with that text, whose suggestions it changes."
        )
        note.setObjectName("hint")
        note.setWordWrap(True)
        buttons = QHBoxLayout()
        buttons.addWidget(self.remove)
        buttons.addWidget(self.restore)
        buttons.addStretch(1)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.learning)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)
        layout.addWidget(note)
        layout.addLayout(buttons)
        self.resize(1060, 420)
        self.remove.clicked.connect(lambda: self.veto(True))
        self.restore.clicked.connect(lambda: self.veto(False))
        self.table.itemSelectionChanged.connect(self._buttons)
        self.refresh()
        self.learning.toggled.connect(self._switch)

    def _switch(self, on: bool) -> None:
        set_learning(self.window_, on)
        self.refresh()

    def refresh(self) -> None:
        project = self.window_.project
        self.rows = learnt.learnt_synonyms(project)
        self.learning.blockSignals(True)
        self.learning.setChecked(learnt.learning_on(project))
        self.learning.blockSignals(False)
        self.table.setRowCount(len(self.rows))
        for number, row in enumerate(self.rows):
            state = row.state
            cells = (
                row.string,
                f"{row.concept_name} ({row.concept_id})" if row.concept_name else row.concept_id,
                f"{row.action} in {row.document}" if row.action else "(no decision stands)",
                row.curator or ("(no name)" if row.action else ""),
                row.decided_at.strftime("%Y-%m-%d %H:%M") if row.decided_at else "",
                str(row.decisions),
                str(row.same_text),
                state,
            )
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(text)  # the name leads, so a narrow column cuts the id, not the name
                if column in (5, 6):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(number, column, item)
        standing = sum(1 for row in self.rows if not row.removed)
        off = (
            ""
            if self.learning.isChecked()
            else " Learning from decisions is off for this project: nothing is learnt, and what was learnt"
            " is withdrawn when the models are next loaded."
        )
        self.summary.setText(
            f"{standing} synonym(s) learnt from curators, {len(self.rows) - standing} removed.{off}"
        )
        self._buttons()

    def selected(self) -> learnt.LearntSynonym | None:
        rows = self.table.selectionModel().selectedRows()
        return self.rows[rows[0].row()] if rows else None

    def _buttons(self) -> None:
        row = self.selected()
        self.remove.setEnabled(row is not None and not row.removed)
        self.restore.setEnabled(row is not None and row.removed)

    def veto(self, remove: bool) -> str:
        """Remove (or restore) the selected synonym through the desk's writer: one undoable step."""
        row = self.selected()
        if row is None:
            return "refused"
        operation = learnt.remove_learnt if remove else learnt.restore_learnt
        verb = "remove" if remove else "restore"
        outcome = self.window_.saving.perform(
            f"{verb} learnt synonym “{row.string}” → {row.concept_id}",
            lambda curator: operation(self.window_.project, row.concept_id, row.string, curator=curator),
        )
        self.refresh()
        return outcome


@dataclass(frozen=True)
class LearntActions:
    """Curate menu's learning actions (install_learnt), kept by the window in its `menus`."""

    accept_no_teach: QAction  # Alt+Enter
    no_teach: QAction  # Decide without teaching (checkable)
    learning: QAction  # the project's switch (checkable)
    no_teach_label: QLabel  # the status bar's lasting sign while `no_teach` is checked


def set_learning(window, on: bool) -> None:
    """The project's switch, said in the status bar (and kept in step with the menu's check mark)."""
    try:
        learnt.set_learning(window.project, on)
    except CuralinkError as exc:
        window.statusBar().showMessage(f"not saved: {exc}", 8000)
        return
    switch = window.menus.learnt.learning
    switch.blockSignals(True)
    switch.setChecked(on)
    switch.blockSignals(False)
    window.statusBar().showMessage(
        "learning from decisions is on"
        if on
        else "learning from decisions is off: synonyms learnt so far are withdrawn at the next load",
        6000,
    )


def open_learnt(window) -> LearntDialog:
    dialog = LearntDialog(window)
    window.menu_dialog = dialog
    dialog.finished.connect(lambda _result: window.activateWindow())
    dialog.open()
    return dialog


def teaching_detail(detail: dict | None, *, teach: bool) -> dict | None:
    """The decision's detail, marked `"teach": false` when the curator decides without teaching."""
    return detail if teach else {**(detail or {}), learnt.TEACH: False}


def install_learnt(window, menu) -> LearntActions:
    """Curate menu: the list, the no-teaching toggle and key, and the project's learning switch."""
    menu.addSeparator()
    menu.addAction(window.key_action("Learnt from curators…", [], lambda: open_learnt(window)))
    accept_no_teach = window.key_action(
        "Accept without teaching",
        ["Alt+Return", "Alt+Enter"],
        lambda: window.curation.accept_top(teach=False),
        tip="accept the top (or marked) candidates; the linker does not learn the string",
    )
    no_teach = window.key_action(
        "Decide without teaching", [], lambda: None, tip="decisions link but teach the linker nothing"
    )
    no_teach.setCheckable(True)
    no_teach.toggled.connect(
        lambda on: window.statusBar().showMessage(
            "decisions teach the linker nothing until Decide without teaching is unchecked"
            if on
            else "decisions teach the linker again",
            6000,
        )
    )
    # A lasting sign in the status bar while it is on (a 6-second message was all there was, issue 31).
    label = QLabel("⊘ deciding without teaching")
    label.setObjectName("noTeach")
    label.setStyleSheet("color:#b85c00; font-weight:600")
    label.setToolTip("Curate ▸ Decide without teaching is on: decisions link but teach nothing")
    label.hide()
    window.statusBar().addPermanentWidget(label)
    no_teach.toggled.connect(label.setVisible)
    learning = window.key_action("Learn from decisions while curating", [], lambda: None)
    learning.setCheckable(True)
    learning.setChecked(learnt.learning_on(window.project))
    learning.toggled.connect(lambda on: set_learning(window, on))
    menu.addActions([accept_no_teach, no_teach, learning])
    return LearntActions(accept_no_teach, no_teach, learning, label)
