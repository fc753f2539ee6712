"""The Retrain dialog: run `core.learn.retrain.retrain` off the UI thread with progress and cancel, then
show old vs new on the held-out slice (table + a small accuracy-by-epoch plot) and let the curator
promote the new version, keep the one in force, or roll back."""

from __future__ import annotations

import logging

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from app.gui.workers import Job, run_in_thread
from core.errors import CuralinkError
from core.learn.retrain import KINDS, PROMOTION_RULES, RetrainReport, retrain, rollback
from core.learn.training_data import HELD_OUT_FRACTION

log = logging.getLogger(__name__)


def _fmt(value) -> str:
    return "—" if value is None else f"{value:.2f}"


class RetrainDialog(QDialog):
    """One button to learn from the decisions; `modelsChanged` tells the desk to reload its models."""

    modelsChanged = Signal()

    def __init__(
        self,
        project,
        parent=None,
        *,
        max_seconds: float = 240.0,
        epochs: int = 4,
        held_out_fraction: float = HELD_OUT_FRACTION,
        device: str = "auto",
    ):
        # matplotlib loads here, not when the main window builds its menus (seconds of start-up)
        from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg
        from matplotlib.figure import Figure

        super().__init__(parent)
        self.setWindowTitle("Retrain from curator decisions")
        self.project = project
        self.epochs = epochs
        self.held_out_fraction = held_out_fraction
        self.device = device
        self.job: Job | None = None
        self.report: RetrainReport | None = None

        self.kind_boxes = {kind: QCheckBox(kind) for kind in KINDS}
        for box in self.kind_boxes.values():
            box.setChecked(True)
        self.seconds = QDoubleSpinBox()
        self.seconds.setRange(1, 3600)
        self.seconds.setValue(max_seconds)
        self.seconds.setSuffix(" s per model")
        self.rule = QComboBox()
        self.rule.addItems(PROMOTION_RULES)
        form = QFormLayout()
        kinds_row = QHBoxLayout()
        for box in self.kind_boxes.values():
            kinds_row.addWidget(box)
        form.addRow("Models", kinds_row)
        form.addRow("Training budget", self.seconds)
        form.addRow("Promote", self.rule)

        self.start_button = QPushButton("Start retraining")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.status = QLabel(
            "Learns from accepted and corrected links; judged on a held-out slice of documents."
        )
        self.status.setWordWrap(True)

        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["model", "metric (held-out)", "in force", "new"])
        self.table.verticalHeader().setVisible(False)
        self.figure = Figure(figsize=(4.5, 2.2), dpi=90)
        self.canvas = FigureCanvasQTAgg(self.figure)

        self.promote_button = QPushButton("Promote new")
        self.keep_button = QPushButton("Keep current")
        self.rollback_button = QPushButton("Roll back")
        for button in (self.promote_button, self.keep_button, self.rollback_button):
            button.setEnabled(False)

        top = QHBoxLayout()
        top.addWidget(self.start_button)
        top.addWidget(self.cancel_button)
        bottom = QHBoxLayout()
        for button in (self.promote_button, self.keep_button, self.rollback_button):
            bottom.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(top)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addWidget(self.table)
        layout.addWidget(self.canvas)
        layout.addLayout(bottom)

        self.start_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        self.promote_button.clicked.connect(self.promote_new)
        self.keep_button.clicked.connect(self.keep_current)
        self.rollback_button.clicked.connect(self.roll_back)
        self.rollback_button.setEnabled(any(self.project.active_model(k) for k in KINDS))
        self.resize(560, 620)

    # --- running ---------------------------------------------------------------------------------

    def selected_kinds(self) -> tuple[str, ...]:
        return tuple(kind for kind, box in self.kind_boxes.items() if box.isChecked())

    def start(self) -> Job | None:
        kinds = self.selected_kinds()
        if not kinds:
            self.status.setText("Choose at least one model to retrain.")
            return None
        options = {
            "kinds": kinds,
            "max_seconds": self.seconds.value(),
            "epochs": self.epochs,
            "promote": self.rule.currentText(),
            "held_out_fraction": self.held_out_fraction,
            "device": self.device,
        }

        def work(progress, cancel):
            return retrain(self.project, progress=progress, cancel=cancel, **options)

        self.report = None
        self.table.setRowCount(0)
        self.start_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        for button in (self.promote_button, self.keep_button, self.rollback_button):
            button.setEnabled(False)
        self.progress.setRange(0, 0)
        self.status.setText("Retraining…")
        self.job = run_in_thread(work, "retrain")
        self.job.signals.progress.connect(self._on_progress)
        self.job.signals.finished.connect(self._on_finished)
        self.job.signals.failed.connect(self._on_failed)
        self.job.signals.cancelled.connect(self._on_cancelled)
        return self.job

    def cancel(self) -> None:
        if self.job is not None:
            self.job.cancel()
            self.status.setText("Cancelling… the models in force stay as they are.")

    def _on_progress(self, done: int, total: int, message: str) -> None:
        if total > 0:
            self.progress.setRange(0, total)
            self.progress.setValue(min(done, total))
        self.status.setText(message or "Retraining…")

    def _idle(self) -> None:
        self.start_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.rollback_button.setEnabled(any(self.project.active_model(k) for k in KINDS))

    def _on_cancelled(self) -> None:
        self._idle()
        self.status.setText("Cancelled: the models in force are unchanged.")

    def _on_failed(self, exc: BaseException) -> None:
        self._idle()
        self.status.setText(f"Retraining failed: {exc}")
        log.error("retraining failed: %s", exc)

    def _on_finished(self, report: RetrainReport) -> None:
        self._idle()
        self.progress.setRange(0, 1)
        self.progress.setValue(1)
        self.report = report
        self.show_report(report)
        waiting = any(not r.promoted for r in report.kinds.values())
        self.promote_button.setEnabled(waiting)
        self.keep_button.setEnabled(True)
        if any(r.promoted for r in report.kinds.values()):
            self.modelsChanged.emit()

    # --- results -----------------------------------------------------------------------------------

    def show_report(self, report: RetrainReport) -> None:
        rows = report.table()
        self.table.setRowCount(len(rows))
        for row, (kind, metric, old, new) in enumerate(rows):
            for column, text in enumerate((kind, metric, _fmt(old), _fmt(new))):
                self.table.setItem(row, column, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()
        lines = [
            f"{kind} {r.version} ({'promoted' if r.promoted else 'not promoted'}): {r.reason}"
            for kind, r in report.kinds.items()
        ]
        counts = report.training
        lines.append(
            f"trained on {counts.get('pairs', 0)} links ({counts.get('accepted', 0)} accepted, "
            f"{counts.get('corrected', 0)} corrected, {counts.get('imported_gold', 0)} imported gold), "
            f"{counts.get('not_in_kb', 0)} not-in-KB kept out; judged on {counts.get('held_out_mentions', 0)} "
            f"held-out mentions in {report.seconds:.0f} s"
        )
        self.status.setText("\n".join(lines))
        self.plot(report)

    def plot(self, report: RetrainReport) -> None:
        """Accuracy by epoch where the training reported it; old vs new acc@1 bars otherwise."""
        self.figure.clear()
        axes = self.figure.add_subplot()
        plotted = False
        for kind, r in report.kinds.items():
            key = next((k for k in ("acc@1", "train acc@1") if r.history and k in r.history[0]), None)
            if key:
                axes.plot(
                    [h["epoch"] for h in r.history],
                    [h[key] for h in r.history],
                    marker="o",
                    label=f"{kind} {key}",
                )
                plotted = True
        if plotted:
            axes.set_xlabel("epoch")
            axes.set_ylabel("accuracy (%)")
            axes.legend(fontsize=7)
        else:
            kinds = list(report.kinds)
            olds = [report.kinds[k].old.get("acc@1", 0.0) for k in kinds]
            news = [report.kinds[k].new.get("acc@1", 0.0) for k in kinds]
            positions = range(len(kinds))
            axes.bar([p - 0.2 for p in positions], olds, width=0.4, label="in force")
            axes.bar([p + 0.2 for p in positions], news, width=0.4, label="new")
            axes.set_xticks(list(positions), kinds)
            axes.set_ylabel("held-out acc@1 (%)")
            axes.legend(fontsize=7)
        axes.grid(alpha=0.3)
        self.figure.tight_layout()
        self.canvas.draw_idle()

    def promote_new(self) -> None:
        if self.report is None:
            return
        for kind, r in self.report.kinds.items():
            if not r.promoted:
                self.project.promote_model(kind, r.version)
                r.promoted, r.reason = True, "promoted by the curator"
        self.promote_button.setEnabled(False)
        self.status.setText("The new versions are in force.")
        self.modelsChanged.emit()

    def keep_current(self) -> None:
        """Keep what is in force now (a version the rule already promoted stays; roll back to undo it)."""
        self.accept()

    def roll_back(self) -> None:
        """Re-activate, for each kind, the version in force before the active one."""
        kinds = list(self.report.kinds) if self.report else [k for k in KINDS if self.project.active_model(k)]
        lines = []
        rolled = []
        for kind in kinds:
            try:
                lines.append(f"{kind} rolled back to {rollback(self.project, kind)}")
                rolled.append(kind)
            except CuralinkError as exc:
                lines.append(f"{kind}: {exc}")
        self.status.setText("\n".join(lines))
        if rolled:
            if self.report:
                for kind in rolled:
                    self.report.kinds[kind].promoted = False
                self.promote_button.setEnabled(True)
            self.modelsChanged.emit()


def open_retrain(window) -> RetrainDialog:
    """The Curate ▸ Retrain action: the dialog on the window's project; promotions reload the desk's models."""
    dialog = RetrainDialog(window.project, window, device=window.settings.device)

    def reload_models() -> None:
        window.service.reset()
        window._update_models_label()

    dialog.modelsChanged.connect(reload_models)
    window.menu_dialog = dialog
    dialog.open()
    return dialog
