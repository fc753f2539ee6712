"""Ctrl+B, bulk accept, as a calibrated tool: the dialog names the score it thresholds (the calibrated
probability of the ranker in force), counts the mentions the chosen threshold accepts in the document or
the whole queue (as Ctrl+D counts), shows the precision and coverage the ranker measured at that
threshold on held-out data (core.jobs.curation.bulk_accept), and starts at the smallest threshold whose held-out
precision reached 98 %. Without a ranker, or a ranker that kept no curve, it starts at 0.90 and says so.

With a ranker in force only suggestions that ranker scored are accepted: a retriever's similarity or an
earlier model's score is not the probability the threshold and the figures are about. "The whole queue" is
the queue as it is shown: the documents its Show, Split and Type filters let through (and, with a type
chosen, that type's mentions), never a document the curator filtered out (issue 31)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QVBoxLayout,
)

from core.jobs.curation.bulk_accept import (
    PROMISE_CONFIDENCE,
    TARGET_PRECISION,
    BulkScale,
    QueueScope,
    TopSuggestion,
    curve_point,
    promise_point,
    queue_top_suggestions,
    read_scale,
    undecided_top_suggestions,
)

if TYPE_CHECKING:
    from core.store.project import Project


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}\u00a0%"  # the figure and its sign stay on one line


class BulkAcceptDialog(QDialog):
    """Threshold and scope, with what they would accept and what the ranker measured, kept up to date."""

    def __init__(
        self,
        parent,
        project: Project,
        mention_ids: list[int],
        scale: BulkScale | None = None,
        queue: QueueScope | None = None,
    ):
        super().__init__(parent)
        self.setWindowTitle("Bulk accept")
        self.setMinimumWidth(620)
        self.project = project
        self.mention_ids = list(mention_ids)
        self.queue = queue
        self.scale = scale or read_scale(project)
        self._tops: dict[bool, list[TopSuggestion]] = {}  # per scope: the undecided top suggestions
        self.threshold = QDoubleSpinBox()
        if self.scale.ranker:
            self.threshold.setRange(0.0, 1.0)
            self.threshold.setDecimals(2)
            self.threshold.setSingleStep(0.01)
        else:
            self.threshold.setRange(-100.0, 100.0)
            self.threshold.setDecimals(3)
            self.threshold.setSingleStep(0.05)
        self.threshold.setValue(self.scale.default)
        self.scope = QComboBox()
        self.scope.addItems(["this document", self._queue_text()])
        self.score_label = self._label("bulkScore")
        self.default_label = self._label("bulkDefault")
        self.count_label = self._label("bulkCount")
        self.held_out_label = self._label("bulkHeldOut")
        self.other_label = self._label("bulkOther")
        form = QFormLayout()
        form.addRow("Score", self.score_label)
        form.addRow("Accept the top suggestion at score ≥", self.threshold)
        form.addRow("", self.default_label)
        form.addRow("In", self.scope)
        note = QLabel("Only mentions without a decision are touched. One Ctrl+Z undoes the lot.")
        note.setObjectName("hint")
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        for widget in (self.count_label, self.held_out_label, self.other_label, note, self.buttons):
            layout.addWidget(widget)
        self._describe_scale()
        self.threshold.valueChanged.connect(self.recount)
        self.scope.currentIndexChanged.connect(self.recount)
        self.recount()

    @staticmethod
    def _label(name: str) -> QLabel:
        label = QLabel()
        label.setObjectName(name)
        label.setWordWrap(True)
        return label

    def _queue_text(self) -> str:
        if self.queue is None:
            return "the whole queue"
        count = len(self.queue.documents)
        shown = f"{count} document{'s' if count != 1 else ''}"
        return f"the whole queue as shown ({shown}{': ' + self.queue.said if self.queue.said else ''})"

    @property
    def whole_queue(self) -> bool:
        return self.scope.currentIndex() == 1

    def tops(self) -> list[TopSuggestion]:
        """The scope's undecided top suggestions (read once per scope while the dialog is open)."""
        if self.whole_queue not in self._tops:
            self._tops[self.whole_queue] = (
                queue_top_suggestions(self.project, self.queue)
                if self.whole_queue
                else undecided_top_suggestions(self.project, self.mention_ids)
            )
        return self._tops[self.whole_queue]

    def selected(self) -> list[TopSuggestion]:
        """What OK would accept at the threshold shown."""
        threshold = self.threshold.value()
        return [t for t in self.scale.eligible(self.tops()) if t.score >= threshold]

    def _describe_scale(self) -> None:
        scale = self.scale
        if scale.ranker:
            self.score_label.setText(
                f"the calibrated probability of ranker {scale.ranker} that the top candidate is right"
            )
        else:
            self.score_label.setText(
                "the top candidate's raw score (cross-encoder or retriever): not a probability"
            )
        if scale.why_fallback:
            self.default_label.setText(
                f"Default {scale.default:.2f}, a fixed fallback: {scale.why_fallback}."
            )
        elif scale.why_raised:
            self.default_label.setText(
                f"Default {scale.default:.2f}: the smallest threshold whose held-out precision vouches for "
                f"{TARGET_PRECISION:g} % and holds on this project's held-out documents ({scale.why_raised})."
            )
        else:
            self.default_label.setText(
                f"Default {scale.default:.2f}: the smallest threshold whose precision on held-out data "
                f"vouches for {TARGET_PRECISION:g} % (its {100 * PROMISE_CONFIDENCE:g} % lower bound)."
            )

    @staticmethod
    def _measured_on(curve: dict) -> str:
        """On what the curve was measured and how it counted, said plainly (issue 31)."""
        said = f"Measured {curve['measured_on']}." if curve.get("measured_on") else ""
        if not curve.get("counted"):
            said += (
                " This curve counted one part of a composite link as right, which curators do not"
                " (retrain the ranker to measure it as they count)."
            )
        return said

    def _checked(self, threshold: float, promised: float | None) -> str:
        """The promise checked on the project's own held-out documents, when they have gold links."""
        check = self.scale.check
        if check is None:
            return ""
        accepted, right = check.at(threshold)
        measured = check.precision(threshold)
        said = (
            f"<br>Checked on {check.describe_where()}: at ≥ {threshold:.2f}, {right} of {accepted} right "
            f"({_percent(measured)}), composites counted as curators count them."
        )
        if measured is not None and promised is not None and measured < promised:
            said += (
                f" <b>The promise does not hold here</b>: {_percent(measured)} measured against "
                f"{_percent(promised)} promised; raise the threshold."
            )
        return said

    def recount(self) -> None:
        threshold = self.threshold.value()
        tops = self.tops()
        eligible = self.scale.eligible(tops)
        chosen = [t for t in eligible if t.score >= threshold]
        where = (
            "in this document"
            if not self.whole_queue
            else "in the whole queue"
            if self.queue is None
            else f"of the {len(self.queue.documents):,} the queue shows"
        )
        documents = len({t.document for t in chosen})
        self.count_label.setText(
            f"<b>Accepts {len(chosen)} mention{'s' if len(chosen) != 1 else ''}</b>"
            + (f" in {documents} document{'s' if documents != 1 else ''}" if self.whole_queue else "")
            + f" {where}, of {len(eligible)} undecided with suggestions."
        )
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(bool(chosen))
        curve = self.scale.curve
        point = curve_point(curve, threshold) if curve else None
        if point is not None:
            precision, coverage = point
            promised = promise_point(curve, threshold)
            self.held_out_label.setText(
                f"Measured on held-out data ({curve['mentions']:,} mentions, ranker {self.scale.ranker}): "
                f"at ≥ {threshold:.2f}, precision <b>at least {_percent(promised)}</b> "
                f"({100 * PROMISE_CONFIDENCE:g} % lower bound; {_percent(precision)} measured), "
                f"coverage {_percent(coverage)} of the mentions. {self._measured_on(curve)}"
                + self._checked(threshold, promised)
            )
        else:
            self.held_out_label.setText(
                "No held-out precision or coverage to show: "
                + (self.scale.why_fallback or "the threshold is off the measured curve")
                + "."
                + self._checked(threshold, None)
            )
        others = len(tops) - len(eligible)
        self.other_label.setVisible(others > 0)
        self.other_label.setText(
            f"{others} undecided mention{'s' if others != 1 else ''} here "
            f"{'have' if others != 1 else 'has'} suggestions ranker {self.scale.ranker} did not score "
            "(retriever only, or an earlier model): never bulk-accepted; link them again first."
        )
        if self.sizeHint().height() > self.height():  # a longer text is shown whole, not cut off
            self.resize(self.width(), self.sizeHint().height())
