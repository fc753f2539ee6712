"""The Retrain dialog: choose what to retrain, then hand it to the desk, which runs it in the background
(the curator goes on curating; a status-bar job shows one bar and the time left, and can cancel).

The reranker is ticked only where a GPU makes training it worthwhile (core.jobs.models.retrain_plan); the
dialog says why when it is not."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
)

from core.jobs.models.retrain import HELD_OUT_FRACTION, PROMOTION_RULES
from core.jobs.models.retrain_plan import retrain_choice

if TYPE_CHECKING:
    from core.store.project import Project

DESK_PROMOTION_RULE = "never"  # the desk asks: the summary offers promotion with the numbers in view


class RetrainDialog(QDialog):
    """The options of one retrain; `startRequested(options)` carries the keyword arguments of
    `core.jobs.models.retrain.retrain` (without the project, progress and cancel)."""

    startRequested = Signal(dict)

    def __init__(
        self,
        project: Project,
        parent=None,
        *,
        max_seconds: float | None = None,
        epochs: int = 4,
        held_out_fraction: float = HELD_OUT_FRACTION,
        device: str = "auto",
    ):
        super().__init__(parent)
        self.setWindowTitle("Retrain from curator decisions")
        self.project = project
        self.epochs = epochs
        self.held_out_fraction = held_out_fraction
        self.device = device
        choice = retrain_choice(project, device)  # the policy `curalink retrain` follows too
        self.advice = choice.advice

        self.kind_boxes = {kind: QCheckBox(kind) for kind in choice.offered}
        for kind, box in self.kind_boxes.items():
            box.setChecked(kind in choice.kinds)
        self.kind_boxes["reranker"].setToolTip(self.advice.reason)
        self.kind_boxes["tagger"].setToolTip(
            "detection: learns the spans you added, moved and deleted; in force per type only where it "
            "finds more on held-out documents"
        )
        self.reranker_note = QLabel(self.advice.reason[:1].upper() + self.advice.reason[1:] + ".")
        self.reranker_note.setWordWrap(True)
        self.seconds = QDoubleSpinBox()
        self.seconds.setRange(0, 3600)
        self.seconds.setSpecialValueText("none: bounded by epochs")  # shown at 0
        self.seconds.setValue(max_seconds or 0)
        self.seconds.setSuffix(" s per model")
        self.seconds.setToolTip(f"training stops after {epochs} epochs; a time limit may stop it sooner")
        self.rule = QComboBox()
        self.rule.addItems(PROMOTION_RULES)
        self.rule.setCurrentText(DESK_PROMOTION_RULE)
        self.rule.setToolTip("never: the summary at the end offers promotion")
        form = QFormLayout()
        kinds_row = QHBoxLayout()
        for box in self.kind_boxes.values():
            kinds_row.addWidget(box)
        form.addRow("Models", kinds_row)
        form.addRow("", self.reranker_note)
        form.addRow("Time limit", self.seconds)
        form.addRow("Promote", self.rule)

        self.status = QLabel(
            "Learns from accepted and corrected links and the spans you checked; judged on a held-out "
            "slice of documents. "
            "It runs in the background: you can go on curating."
        )
        self.status.setWordWrap(True)
        self.start_button = QPushButton("Start retraining")
        self.close_button = QPushButton("Close")
        buttons = QHBoxLayout()
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.status)
        layout.addLayout(buttons)
        self.start_button.clicked.connect(self.start)
        self.close_button.clicked.connect(self.close)

    def selected_kinds(self) -> tuple[str, ...]:
        return tuple(kind for kind, box in self.kind_boxes.items() if box.isChecked())

    def options(self) -> dict:
        return {
            "kinds": self.selected_kinds(),
            "max_seconds": self.seconds.value() or None,
            "epochs": self.epochs,
            "promote": self.rule.currentText(),
            "held_out_fraction": self.held_out_fraction,
            "device": self.device,
        }

    def start(self) -> dict | None:
        if not self.selected_kinds():
            self.status.setText("Choose at least one model to retrain.")
            return None
        options = self.options()
        self.startRequested.emit(options)
        self.close()
        return options


def open_retrain(window) -> RetrainDialog:
    """The Curate ▸ Retrain action: the options dialog; Start hands the retrain to the desk."""
    dialog = RetrainDialog(window.project, window, device=window.settings.device)
    dialog.startRequested.connect(window.retrain.start_retrain)
    running = window.retrain.retrain_job is not None
    dialog.start_button.setEnabled(not running)
    if running:
        dialog.status.setText("A retrain is running: its progress is in the status bar.")
    window.menu_dialog = dialog
    dialog.show()
    return dialog
