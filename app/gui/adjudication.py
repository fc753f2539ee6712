"""The adjudication view: the mentions two curators linked differently, side by side; the adjudicator
picks the final link per row, written as a decision by the adjudicator with detail `adjudicated`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from core.evaluate.agreement import Agreement, agreement, curators
from core.jobs.curation.adjudication import adjudicate

if TYPE_CHECKING:
    from core.store.project import Project

UNDECIDED = "(leave undecided)"


class AdjudicationDialog(QDialog):
    def __init__(self, project: Project, adjudicator: str, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Adjudicate disagreements")
        self.project = project
        self.adjudicator = adjudicator
        self.result_agreement: Agreement | None = None
        names = curators(project)
        self.curator_a = QComboBox()
        self.curator_b = QComboBox()
        self.curator_a.addItems(names)
        self.curator_b.addItems(names)
        if len(names) > 1:
            self.curator_b.setCurrentIndex(1)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.table = QTableWidget(0, 5)
        self.table.setHorizontalHeaderLabels(["document", "mention", "curator A", "curator B", "final link"])
        self.table.verticalHeader().setVisible(False)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Close
        )
        buttons.accepted.connect(self._save_and_close)
        buttons.rejected.connect(self.reject)
        pick = QHBoxLayout()
        pick.addWidget(QLabel("Curator A"))
        pick.addWidget(self.curator_a)
        pick.addWidget(QLabel("Curator B"))
        pick.addWidget(self.curator_b)
        layout = QVBoxLayout(self)
        layout.addLayout(pick)
        layout.addWidget(self.summary)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.curator_a.currentTextChanged.connect(self.reload)
        self.curator_b.currentTextChanged.connect(self.reload)
        self.resize(760, 480)
        self.reload()

    def _name(self, label: str) -> str:
        concept = self.project.kb.concept(label) if label and not label.startswith(("(", "-")) else None
        return f"{label} {concept.preferred_name}" if concept else label

    def reload(self) -> None:
        a, b = self.curator_a.currentText(), self.curator_b.currentText()
        self.table.setRowCount(0)
        if not a or not b or a == b:
            self.summary.setText("Pick two different curators.")
            self.result_agreement = None
            return
        result = agreement(self.project, a, b)
        self.result_agreement = result
        kappa = "—" if result.kappa is None else f"{result.kappa:.3f}"
        self.summary.setText(
            f"Cohen's kappa on concepts {kappa} over {result.mentions_compared} mentions both decided "
            f"({result.mentions_agreed} agree); span F1 {result.span_f1:.3f}; "
            f"{len(result.disagreements)} disagreement(s)."
        )
        self.table.setRowCount(len(result.disagreements))
        for row, item in enumerate(result.disagreements):
            values = (item.document_id, item.text, self._name(item.label_a), self._name(item.label_b))
            for column, text in enumerate(values):
                self.table.setItem(row, column, QTableWidgetItem(text))
            choice = QComboBox()
            choice.addItem(UNDECIDED, "")
            choice.addItem(f"A: {self._name(item.label_a)}", item.label_a)
            choice.addItem(f"B: {self._name(item.label_b)}", item.label_b)
            self.table.setCellWidget(row, 4, choice)
        self.table.resizeColumnsToContents()

    def choose(self, row: int, side: str) -> None:
        """Pick curator A's or B's link for one row (what a click in the combo does)."""
        self.table.cellWidget(row, 4).setCurrentIndex({"A": 1, "B": 2}[side])

    def _save_and_close(self) -> None:
        self.save()
        self.accept()

    def save(self) -> int:
        """Write one adjudicated decision per row with a final link; returns how many."""
        if self.result_agreement is None:
            return 0
        between = (self.result_agreement.curator_a, self.result_agreement.curator_b)
        written = 0
        for row, item in enumerate(self.result_agreement.disagreements):
            label = self.table.cellWidget(row, 4).currentData()
            if label:
                adjudicate(self.project, item.mention_id, label, self.adjudicator, between=between)
                written += 1
        self.summary.setText(f"{written} adjudicated decision(s) saved by {self.adjudicator}.")
        return written


def open_adjudication(window) -> AdjudicationDialog:
    """The Curate ▸ Adjudicate action: the window's curator adjudicates; the desk refreshes after a save."""
    dialog = AdjudicationDialog(window.project, window.settings.curator, window)
    dialog.accepted.connect(lambda: window.document.refresh(None))
    window.menu_dialog = dialog
    dialog.open()
    return dialog
