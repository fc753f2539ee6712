"""The desk's background linking: suggestions for the open document and the next few in the queue,
shown as each document is stored, with progress and a cancel button in the status bar."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton

from app.gui import kb_search
from app.gui.desk_host import DeskHost
from app.gui.desk_model import DeskModel
from app.gui.document_queue import DocumentQueue
from app.gui.settings import AppSettings
from app.gui.workers import MODELS_LOADING, MODELS_NOT_LOADED, Job, LinkedChunk, LinkService

IDLE_CHECK_MS = 250  # how often a deferred start-up task looks whether the link service is idle


class BackgroundLinking:
    """Background linking for the window (`host`): the link service's jobs, the queue rows and open
    document they update (in `model`), and the status bar's model labels and job progress."""

    def __init__(
        self,
        host: DeskHost,
        model: DeskModel,
        settings: AppSettings,
        service: LinkService,
        *,
        queue: DocumentQueue,
        background: bool,
        labels: tuple[QLabel, QLabel, QLabel],
        progress: QProgressBar,
        cancel: QPushButton,
    ):
        self.host, self.model, self.settings, self.service = host, model, settings, service
        self.project, self.queue, self.background = model.project, queue, background
        self.device_label, self.models_label, self.kb_label = labels
        self.job_progress, self.job_cancel = progress, cancel
        self.active_job: Job | None = None
        self.retriever_version = self.reranker_version = self.ranker_version = ""
        self._search_warmed = False  # the KB search index is built once, after the first suggestions
        service.chunkLinked.connect(self.on_chunk)
        service.linkerReady.connect(self.on_linker_ready)
        cancel.clicked.connect(self.cancel_job)

    def models_loading(self) -> None:
        """Say the models are loading when they are not loaded yet (a job will load them)."""
        if self.device_label.text() == MODELS_NOT_LOADED:
            self.device_label.setText(MODELS_LOADING)

    def prefetch(self, *, force: list[str] | None = None) -> Job | None:
        """Link the current document and the next few in the queue that still lack suggestions."""
        if not self.background and not force:
            return None
        wanted: list[str] = list(force or [])
        current = self.model.doc.doc_id if self.model.doc else None
        for doc_id in self.queue.visible_from(current, 1 + self.settings.prefetch):
            entry = self.queue.entry(doc_id)
            if entry is not None and entry.unsuggested and doc_id not in wanted:
                wanted.append(doc_id)
        wanted = [d for d in wanted if d not in self.model.linking]
        if not wanted:
            return None
        return self.link_documents(wanted)

    def resuggest(self, mention_id: int) -> None:
        """Ask for suggestions for an edited mention at once (the store already dropped its old ones)."""
        self.model.resuggesting.add(mention_id)
        self.models_loading()
        self.service.resuggest([mention_id])

    def link_documents(self, doc_ids: list[str]) -> Job:
        self.models_loading()
        self.model.linking.update(doc_ids)
        job = self.service.link(doc_ids, name=f"linking {len(doc_ids)} document(s)")
        self.track(job, f"linking {len(doc_ids)} document(s)")
        for signal in (job.signals.returned, job.signals.errored, job.signals.cancelled):  # not `finished`:
            # these come first, so whoever waits for one of them sees the window already updated
            signal.connect(lambda *_args, ids=tuple(doc_ids): self.model.linking.difference_update(ids))
        return job

    def link_all_unsuggested(self) -> Job | None:
        ids = [e.doc_id for e in self.queue.model.entries if e.unsuggested]
        return self.link_documents(ids) if ids else None

    def on_chunk(self, chunk: LinkedChunk) -> None:
        """Show newly linked documents from what the worker read: no database query on the UI thread."""
        if not self.queue.update_entries(chunk.queue):  # a document new to the queue: read it whole
            self.host.document.reload_queue()
        for concept_id, concept in chunk.concepts.items():
            self.model.concepts.setdefault(concept_id, concept)
        if self.model.doc is None or self.model.doc.doc_id not in chunk.doc_ids:
            return
        held = set(self.model.deferred)
        updated = self.model.install(chunk.suggestions, keep_selected=True)
        if set(self.model.deferred) - held and not updated:  # said under the mention (DocumentView)
            self.host.document.select_mention(self.model.current)
        if not updated:
            return
        if self.model.current_mention_id() in updated:
            self.model.marked = []  # marks name candidates of the list just replaced
        keep = self.model.current
        self.host.document.redraw_document(keep if keep is not None else self.model.first_open_mention())

    def on_linker_ready(self, description: str) -> None:
        self.device_label.setText(description)
        if self.background and not self._search_warmed:
            self._search_warmed = True
            self._warm_search_when_idle()

    def _warm_search_when_idle(self) -> None:
        """Build the KB search index once the link service has nothing to do (the first suggestions are
        shown), not at start-up: its 0.5 s of Python (MEDIC) in a thread of the desk made the window's
        paints wait for the interpreter lock (the first paint 30 → 57 ms, over 100 ms on a busy machine)
        and took CPU from the loading linker. A Ctrl+F before that builds it itself."""
        if not self.host.isVisible():  # closed meanwhile: its project may be open in another window
            return
        if self.service.busy():
            QTimer.singleShot(IDLE_CHECK_MS, self.host, self._warm_search_when_idle)  # not after a close
        else:
            kb_search.warm_search_index(self.project)

    def update_models_label(self) -> None:
        retriever = self.project.models.active_model("retriever")
        reranker = self.project.models.active_model("reranker")
        ranker = self.project.models.active_model("ranker")
        self.retriever_version = retriever.version if retriever else ""
        self.reranker_version = reranker.version if reranker else ""
        self.ranker_version = ranker.version if ranker else ""
        self.models_label.setText(
            f"retriever {self.retriever_version or 'not trained'} · ranker {self.ranker_version or 'not trained'}"
            f" · cross-encoder {self.reranker_version or 'not trained'}"
        )
        concepts, names = self.project.desk.kb_size()
        self.kb_label.setText(f"KB {concepts:,} concepts / {names:,} names")

    def track(self, job: Job, title: str) -> None:
        """Show a background job in the status bar with its own cancel button."""
        self.active_job = job
        self.job_progress.setRange(0, 0)
        self.job_progress.setFormat(title)
        self.job_progress.show()
        self.job_cancel.show()

        def on_progress(done: int, total: int, message: str) -> None:
            if total > 0:
                self.job_progress.setRange(0, total)
                self.job_progress.setValue(done)
            self.job_progress.setFormat(f"{message or title} %v/%m" if total > 0 else message or title)

        def on_end(*_args) -> None:
            if self.active_job is job:
                self.job_progress.hide()
                self.job_cancel.hide()
                self.active_job = None

        job.signals.progress.connect(on_progress)
        for signal in (job.signals.returned, job.signals.errored, job.signals.cancelled):
            signal.connect(on_end)

    def cancel_job(self) -> None:
        if self.active_job is not None:
            self.active_job.cancel()
