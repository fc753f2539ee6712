"""Retraining in the background of the desk (issue 12): the curator goes on curating while the models
learn; a status-bar job shows one bar across all phases, the time left and a cancel button; at the end
a summary beside the desk offers promotion, and a promotion (or a rollback) relinks the unreviewed
documents through the link service, the open document first, so no old suggestion is left behind."""

from __future__ import annotations

import logging

from PySide6.QtCore import QElapsedTimer, QObject, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from app.gui.desk_host import DeskHost
from app.gui.desk_linking import BackgroundLinking
from app.gui.desk_model import DeskModel
from app.gui.dialogs import show_error
from app.gui.retrain_summary import RetrainSummary, history_figure
from app.gui.workers import Job, LinkService, run_in_thread
from core.jobs.models.in_child import run_job_in_child
from core.jobs.models.retrain import RetrainReport
from core.progress import PhasedProgress

log = logging.getLogger(__name__)

MESSAGE_CHARS = 36  # of the current step, beside the bar (the whole of it in the tooltip)
RETRAIN_STOP_WAIT_S = 60.0  # closing the window waits this long for a cancelled retrain to clean up


def time_left_text(seconds: float | None) -> str:
    if seconds is None:
        return "estimating the time left…"
    if seconds >= 90:
        return f"about {round(seconds / 60)} min left"
    return f"about {max(5, round(seconds / 5) * 5)} s left"


class RetrainStatus(QWidget):
    """The status-bar job of a retrain: one bar (0 to PhasedProgress.SCALE), the phase, the time left
    (from the share done and the time gone, refreshed every second) and Cancel."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.bar = QProgressBar()
        self.bar.setRange(0, PhasedProgress.SCALE)
        self.bar.setFixedWidth(200)
        self.bar.setTextVisible(True)
        self.left = QLabel()
        self.cancel_button = QPushButton("Cancel retrain")
        self.cancel_button.setFlat(True)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in (self.bar, self.left, self.cancel_button):
            layout.addWidget(widget)
        self.clock = QElapsedTimer()
        self.ticker = QTimer(self)
        self.ticker.setInterval(1000)
        self.ticker.timeout.connect(self.refresh)
        self.fraction = 0.0
        self.message = "starting"

    def begin(self) -> None:
        self.fraction, self.message = 0.0, "starting"
        self.bar.setValue(0)
        self.cancel_button.setEnabled(True)
        self.clock.start()
        self.ticker.start()
        self.refresh()
        self.show()

    def on_progress(self, done: int, total: int, message: str) -> None:
        if total > 0:
            self.fraction = min(1.0, done / total)
            self.bar.setValue(round(self.fraction * self.bar.maximum()))
        self.message = message or self.message
        self.refresh()

    def remaining_seconds(self) -> float | None:
        elapsed = self.clock.elapsed() / 1000 if self.clock.isValid() else 0.0
        if self.fraction < 0.01 or elapsed < 2:
            return None
        return elapsed * (1 - self.fraction) / self.fraction

    def refresh(self) -> None:
        self.bar.setFormat("Retraining %p%")
        shown = (
            self.message if len(self.message) <= MESSAGE_CHARS else self.message[: MESSAGE_CHARS - 1] + "…"
        )
        self.left.setText(f"{time_left_text(self.remaining_seconds())} · {shown}")
        self.left.setToolTip(self.message)

    def cancelling(self) -> None:
        self.cancel_button.setEnabled(False)
        self.message = "cancelling; the models in force stay as they are"
        self.refresh()

    def end(self) -> None:
        self.ticker.stop()
        self.hide()


def _retrain_in_child(project, *, progress, cancel, **options) -> RetrainReport:
    """`retrain` in a child process, as the linker: training in a thread of the desk shares its interpreter
    lock (torch's import alone froze the window for seconds)."""
    return run_job_in_child(
        "core.jobs.models.retrain:retrain",
        project.path,
        options,
        what="retraining",
        progress=progress,
        cancel=cancel,
    )


class _Relay(QObject):
    """Carries the retrain thread's request to relink to the UI thread (a queued signal)."""

    relinkRequested = Signal()


class BackgroundRetrain:
    """Retraining for the window (`host`, which shows its status-bar job and summary): the work runs
    beside the link service, and a promotion or rollback relinks through `links`, the open document
    (in `model`) first."""

    def __init__(self, host: DeskHost, model: DeskModel, service: LinkService, links: BackgroundLinking):
        self.host, self.model, self.service, self.links = host, model, service, links
        self.project = model.project
        self.retrain_job: Job | None = None
        self.retrain_status: RetrainStatus | None = None
        self.retrain_summary: RetrainSummary | None = None
        self.relink_job: Job | None = None
        self.relay = _Relay()
        self.relay.relinkRequested.connect(lambda: self._relink(None, "relinking with the retrained models"))

    def start_retrain(self, options: dict) -> Job | None:
        """Run `core.jobs.models.relinking.retrain_and_relink(**options)` in the background: the retrain
        in a child process, the relink through the link service; one retrain at a time."""
        from core.jobs.models.relinking import retrain_and_relink

        if self.retrain_job is not None:
            self.host.statusBar().showMessage("a retrain is already running", 4000)
            return None
        if self.retrain_status is None:
            self.retrain_status = RetrainStatus(self.host)
            self.retrain_status.cancel_button.clicked.connect(self.cancel_retrain)
            self.host.statusBar().addWidget(self.retrain_status)
        status = self.retrain_status

        def work(progress, cancel) -> tuple[RetrainReport, object]:
            outcome = retrain_and_relink(
                self.project,
                retrainer=None if self.service.in_thread else _retrain_in_child,
                relinker=self._relink_when_retrained,
                progress=progress,
                cancel=cancel,
                **options,
            )
            # The summary's plot is drawn here, off the UI thread: importing matplotlib and drawing there
            # froze the window for ~1.5 s when a retrain ended.
            from matplotlib.backends import backend_qtagg  # noqa: F401 - the summary's canvas, imported here

            return outcome.report, history_figure(outcome.report)

        job = run_in_thread(work, "retraining")
        self.retrain_job = job
        status.begin()
        job.signals.progress.connect(status.on_progress)
        job.signals.returned.connect(self._on_retrained)
        job.signals.errored.connect(lambda exc: show_error(self.host, exc, context="retraining"))
        job.signals.cancelled.connect(
            lambda: self.host.statusBar().showMessage(
                "Retraining cancelled: the models in force are unchanged.", 10000
            )
        )
        job.signals.finished.connect(lambda: self._retrain_ended(job))
        log.info("retraining in the background: %s", options)
        return job

    def cancel_retrain(self) -> None:
        if self.retrain_job is not None:
            self.retrain_job.cancel()
            if self.retrain_status is not None:
                self.retrain_status.cancelling()

    def stop_retrain(self) -> None:
        """On close: cancel a running retrain and let it remove its scratch folder before the project
        closes (the models in force are untouched either way), and close its summary, whose Promote and
        Roll back act on this window's project (left open, it outlived the window and took the focus from
        the next desk's, so that desk's keys went nowhere)."""
        if self.retrain_summary is not None:
            self.retrain_summary.close()
            self.retrain_summary = None
        job = self.retrain_job
        if job is not None:
            job.cancel()
            if job.is_running:  # one not started yet sees the token first thing
                job.done.wait(RETRAIN_STOP_WAIT_S)

    def _retrain_ended(self, job: Job) -> None:
        if self.retrain_job is job:
            self.retrain_job = None
            if self.retrain_status is not None:
                self.retrain_status.end()

    def _on_retrained(self, outcome: tuple[RetrainReport, object]) -> None:
        report, figure = outcome
        summary = RetrainSummary(report, self.host, figure=figure)
        summary.promoteRequested.connect(self.promote_versions)
        summary.rollbackRequested.connect(self.roll_back_models)
        self.retrain_summary = summary
        summary.show()

    def _relink_when_retrained(self, _project, _changed, **_options) -> None:
        """`retrain_and_relink`'s relink, in the desk: asked from the retrain's thread, run on the UI
        thread through the link service (its warm linker reloads the models now in force)."""
        self.relay.relinkRequested.emit()

    def promote_versions(self, versions: dict) -> Job:
        from core.jobs.models.promotion import promote_versions

        return self._relink(lambda: promote_versions(self.project, versions), "relinking after the promotion")

    def roll_back_models(self, kinds: list) -> Job:
        from core.jobs.models.retrain import rollback

        return self._relink(
            lambda: {kind: rollback(self.project, kind) for kind in kinds}, "relinking after the rollback"
        )

    def _relink(self, change, title: str) -> Job:
        """The change (in the link service's worker), then the unreviewed documents relinked."""
        first = [self.model.doc.doc_id] if self.model.doc is not None else []
        job = self.service.change_models(change, first=first)
        self.relink_job = job
        self.links.track(job, title)
        job.signals.returned.connect(lambda _result: self.links.update_models_label())
        return job
