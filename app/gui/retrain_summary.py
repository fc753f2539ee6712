"""What a finished retrain learnt, shown beside the desk (not modal): old vs new on the held-out slice,
accuracy over every epoch the training evaluated, and the choice to promote, keep or roll back.

The dialog decides nothing itself: its buttons ask the desk (`promoteRequested`, `rollbackRequested`),
which changes the models in force and relinks the unreviewed documents in the background."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from core.jobs.models.retrain import RetrainReport


def _fmt(value) -> str:
    return "—" if value is None else f"{value:.2f}"


def history_series(report: RetrainReport, keys=("acc@1", "train acc@1")) -> dict[str, tuple[list, list]]:
    """Per model, every recorded epoch and its value for the first of `keys` it has (the retriever's
    held-out acc@1 from epoch 0, the reranker's accuracy on its training documents, or the training
    loss); models without one are left out."""
    series = {}
    for kind, r in report.kinds.items():
        key = next((k for k in keys if any(k in h for h in r.history)), None)
        if key:
            points = [(h["epoch"], h[key]) for h in r.history if key in h]
            series[f"{kind} {key}"] = ([p[0] for p in points], [p[1] for p in points])
    return series


def history_figure(report: RetrainReport):
    """Accuracy over every evaluated epoch; for a model evaluated only at the end (a retriever on a
    large KB) its training loss per epoch on a second axis; old vs new acc@1 bars with neither. Plain
    matplotlib (no Qt): it may be drawn in a worker thread, each call on its own figure."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(4.5, 2.2), dpi=90)
    axes = figure.add_subplot()
    accuracy = history_series(report)
    losses = {
        label: points
        for label, points in history_series(report, ("loss",)).items()
        if label.split()[0] not in {a.split()[0] for a in accuracy}
    }
    for label, (epochs, values) in accuracy.items():
        axes.plot(epochs, values, marker="o", label=label)
    if accuracy:
        axes.set_ylabel("accuracy (%)")
    if losses:
        loss_axes = axes.twinx() if accuracy else axes
        for label, (epochs, values) in losses.items():
            loss_axes.plot(epochs, values, marker="s", linestyle="--", color="tab:red", label=label)
        loss_axes.set_ylabel("training loss")
        if loss_axes is not axes:
            loss_axes.legend(fontsize=7, loc="lower right")
    if accuracy or losses:
        axes.set_xlabel("epoch")
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
    figure.tight_layout()
    FigureCanvasAgg(figure).draw()  # rendered here; the desk's canvas then only shows it
    return figure


class RetrainSummary(QDialog):
    """Before / after table and the plot of one retrain; Promote asks the desk to put it in force."""

    promoteRequested = Signal(dict)  # kind -> version
    rollbackRequested = Signal(list)  # kinds

    def __init__(self, report: RetrainReport, parent=None, *, figure=None):
        """`figure`: the plot already drawn by `history_figure` off the UI thread (the desk does that in
        the retrain's job); without it the plot is drawn here."""
        from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg

        super().__init__(parent)
        self.setModal(False)
        self.setWindowTitle("Retraining finished")
        self.report = report
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["model", "metric (held-out)", "in force", "new"])
        self.table.verticalHeader().setVisible(False)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.figure = figure if figure is not None else history_figure(report)
        self.canvas = FigureCanvasQTAgg(self.figure)
        self.promote_button = QPushButton("Promote new")
        self.keep_button = QPushButton("Keep current")
        self.rollback_button = QPushButton("Roll back")
        buttons = QHBoxLayout()
        for button in (self.promote_button, self.keep_button, self.rollback_button):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.status)
        layout.addWidget(self.table)
        layout.addWidget(self.canvas)
        layout.addLayout(buttons)
        self.promote_button.clicked.connect(self.promote_new)
        self.keep_button.clicked.connect(self.close)
        self.rollback_button.clicked.connect(self.roll_back)
        self.show_report()
        self.resize(560, 560)

    def waiting(self) -> dict[str, str]:
        """The new versions not in force yet."""
        return {kind: r.version for kind, r in self.report.kinds.items() if r.version and not r.promoted}

    def show_report(self) -> None:
        report = self.report
        rows = report.table()
        self.table.setRowCount(len(rows))
        for row, (kind, metric, old, new) in enumerate(rows):
            for column, text in enumerate((kind, metric, _fmt(old), _fmt(new))):
                self.table.setItem(row, column, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()
        lines = [
            f"{kind} {r.version} ({'in force' if r.promoted else 'not in force'}): {r.reason}"
            if r.version
            else f"{kind}: {r.reason}"
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
        self.promote_button.setEnabled(bool(self.waiting()))
        self.rollback_button.setEnabled(any(r.promoted for r in report.kinds.values()))

    def promote_new(self) -> None:
        versions = self.waiting()
        if not versions:
            return
        for kind in versions:
            self.report.kinds[kind].promoted = True
            self.report.kinds[kind].reason = "promoted by the curator"
        self.show_report()
        self.status.setText(self.status.text() + "\nRelinking the unreviewed documents in the background…")
        self.promoteRequested.emit(versions)

    def roll_back(self) -> None:
        kinds = [kind for kind, r in self.report.kinds.items() if r.promoted]
        for kind in kinds:
            self.report.kinds[kind].promoted = False
            self.report.kinds[kind].reason = "rolled back by the curator"
        self.show_report()
        self.rollbackRequested.emit(kinds)
