"""Background work off the UI thread on superqt's worker API (`superqt.utils.FunctionWorker`, as napari
uses): a job calls one `core` function, turns its progress callback into Qt signals, and cancelling sets
the CancelToken the core function checks between batches.

superqt's signals keep their meaning: `returned(result)` when the work completes, `errored(exc)` when it
raises, `finished()` after either and after a cancel. This module adds `progress`, `partial` (a piece of
the result while the job goes on) and `cancelled`. Two things stay ours: cancellation is the core's
CancelToken (superqt's `quit()` only sets a flag the core cannot see, so it is routed to the token), and
the link service starts its jobs on its own one-thread pool with priorities (superqt's `start()` always
uses the global pool, in order). One superqt habit does not fit jobs that overlap (a retrain beside the
link service): its `run` wraps the work in `warnings.catch_warnings`, which is process-wide in Python
3.11, so the job that ends last can leave its own `showwarning` in place; every job routes `warned` to
the log, so a warning still reaches logs/curalink.log whichever job catches it."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QThreadPool, Signal
from superqt.utils import FunctionWorker, create_worker
from superqt.utils._qthreading import WorkerBaseSignals  # not re-exported; extended, not copied

from core.errors import Cancelled
from core.kb.concept import Concept
from core.progress import CancelToken
from core.store.curation_log import SuggestionSet
from core.store.project import QueueEntry

if TYPE_CHECKING:
    from core.store.project import Project

log = logging.getLogger(__name__)

# The status bar's model label before the linker is loaded and while it loads.
MODELS_NOT_LOADED = "models: load on first use"
MODELS_LOADING = "models: loading…"

Work = Callable[[Callable[[int, int | None, str], None], CancelToken], object]


@dataclass
class LinkedChunk:
    """What the window needs after the worker linked a few documents, read by the worker itself so
    the UI thread makes no database query while linking runs."""

    doc_ids: list[str]
    queue: list[QueueEntry]  # the queue rows of these documents
    # Each suggested mention's candidates with the span and type they were computed for.
    suggestions: dict[int, SuggestionSet] = field(default_factory=dict)
    concepts: dict[str, Concept | None] = field(default_factory=dict)


class JobSignals(WorkerBaseSignals):
    progress = Signal(int, int, str)  # done, total (-1 when unknown), message
    partial = Signal(object)  # a piece of the result, delivered while the job goes on
    cancelled = Signal()


def _log_warning(args: tuple) -> None:
    """Warnings raised inside a job reach the log (superqt routes them to `warned`)."""
    message, category, filename, lineno, *_rest = args
    log.warning("%s: %s (%s:%s)", category.__name__, message, filename, lineno)


class Job(FunctionWorker):
    """One unit of background work; signals arrive on the UI thread (queued connections).

    `work(progress, cancel)` is called in the worker; `Cancelled` raised by it becomes `cancelled`."""

    def __init__(self, work: Work, name: str = "job"):
        super().__init__(work)
        self.signals = JobSignals()  # superqt's FunctionWorker takes no SignalsClass
        self.setAutoDelete(False)  # the service and the window hold it; `done` is read after it ran
        self.name = name
        self.cancel_token = CancelToken()
        self.done = threading.Event()
        self.signals.warned.connect(_log_warning)

    def cancel(self) -> None:
        self.cancel_token.cancel()

    def quit(self) -> None:
        """superqt's way to ask a worker to stop: the core work sees it through the token."""
        self.cancel()

    def _progress(self, done: int, total: int | None, message: str = "") -> None:
        self.signals.progress.emit(int(done), -1 if total is None else int(total), message)

    def work(self):
        try:
            return self._func(self._progress, self.cancel_token)
        except Cancelled:
            log.info("%s cancelled", self.name)
            self._abort_requested = True  # superqt then emits no `returned`
            self.signals.cancelled.emit()
            return None
        except Exception:
            log.exception("%s failed", self.name)  # `errored` takes it to the window as a dialog
            raise

    def run(self) -> None:
        try:
            super().run()
        finally:
            self.done.set()


class LinkService(QObject):
    """Runs the project's Linker in the background, loading it once and keeping it warm.

    By default the linker lives in a child process (core.jobs.linking.linker_process): a linker loading or running in
    a thread of the desk held the interpreter lock in long stretches and froze the window for up to
    seconds. One worker thread drives it, so jobs run one at a time, in the order they were asked for,
    except re-suggesting edited mentions: it jumps the queue, and a long linking job serves it between
    two documents. `in_thread=True` (or CURALINK_LINK_IN_THREAD=1) keeps the old in-thread linker.
    The retriever runs on the CPU; the reranker goes where `device` says (auto picks the GPU when there
    is one).
    """

    suggestionsReady = Signal(list)  # every document of a finished job
    chunkLinked = Signal(object)  # LinkedChunk, one per document as soon as it is stored
    linkerReady = Signal(str)
    failed = Signal(object)
    mentionsFound = Signal(object)  # (DetectSummary, the asked ids), before their linking starts
    learned = Signal(object)  # (LearnedNow, how many identical mentions were suggested again)

    def __init__(
        self,
        project: Project,
        *,
        device: str = "auto",
        candidates: int = 16,
        use_reranker: bool = True,
        in_thread: bool | None = None,
    ):
        super().__init__()
        self.project = project
        self.device = device
        self.candidates = candidates
        self.use_reranker = use_reranker
        self.in_thread = os.environ.get("CURALINK_LINK_IN_THREAD") == "1" if in_thread is None else in_thread
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(1)
        self._linker = None
        self._spare = None  # a linking process whose models are out of date: reloaded, not restarted
        self._lock = threading.Lock()  # held by the worker for a whole load: never taken on the UI thread
        self._loading = False  # the worker is loading models now (read without the lock)
        self._stale = 0  # bumped by `reset`/`configure` on the UI thread; the worker reloads when it moved
        self._loaded_for = 0  # `_stale` as it was when the linker in force was loaded
        self._urgent: dict[int, None] = {}  # mention ids to re-suggest, in the order asked
        self._urgent_lock = threading.Lock()
        self._to_learn: dict[int, None] = {}  # decided mentions the loaded linker has not learnt yet
        self.jobs: list[Job] = []

    def _options(self) -> tuple:
        return (self.device, self.candidates, self.use_reranker)

    def configure(self, *, device: str, candidates: int, use_reranker: bool) -> None:
        """New settings: the next job reloads the models with them. Never waits for a load under way
        (the UI thread calls it): the worker sees the change before its next job."""
        if (device, candidates, use_reranker) != self._options():
            self.device, self.candidates, self.use_reranker = device, candidates, use_reranker
            self._stale += 1

    def reset(self) -> None:
        """Forget the loaded models (after a KB import or a retrain); the next job loads them again.
        Like `configure`, it returns at once even while models load."""
        self._stale += 1

    @property
    def models_loaded(self) -> bool:
        """Models are loaded (and not reset since), or loading now: a decision then reaches them by
        `learn`; otherwise the next load reads it from the store."""
        return self._loading or (self._linker is not None and self._loaded_for == self._stale)

    def _retire(self) -> None:
        """Drop the linker in force (under `_lock`); a linking process is kept to reload its models."""
        if self._linker is not None and not self.in_thread:
            if self._spare is None:
                self._spare = self._linker
            else:  # one spare is enough; ending a child waits for it, so not on the UI thread
                threading.Thread(
                    target=self._linker.close, name="closing a linking process", daemon=True
                ).start()
        self._linker = None

    def linker(self, progress=None, cancel: CancelToken | None = None):
        """The loaded linker (loading it first when needed). Called in the worker: it may hold `_lock`
        for a whole load (minutes when a name index is built), so the UI thread never calls it."""
        with self._lock:
            if self._linker is not None and self._loaded_for != self._stale:
                self._retire()
            if self._linker is not None and not self.in_thread and not self._linker.alive():
                log.warning("the linking process has stopped; starting a new one")
                self._linker = None
            if self._linker is None:
                wanted = self._stale
                self._loading = True
                try:
                    self._linker = self._load(progress or (lambda *_args: None), cancel or CancelToken())
                finally:
                    self._loading = False
                self._loaded_for = wanted
                self.linkerReady.emit(self._linker.device_description)
            return self._linker

    def _load(self, progress, cancel: CancelToken):
        if self.in_thread:
            import torch

            from core.jobs.linking.suggestions import ProjectLinker

            # One intra-op thread: the UI thread keeps a core, and a 2-core laptop stays responsive
            # (the retriever's per-document batches are too small to gain from more threads).
            torch.set_num_threads(1)
            return ProjectLinker.for_project(
                self.project,
                device=self.device,
                candidates=self.candidates,
                use_reranker=self.use_reranker,
                progress=progress,
                cancel=cancel,
            )
        from core.jobs.linking.linker_process import LinkerProcess

        spare, self._spare = self._spare, None
        same = spare is not None and spare.project_path == self.project.path  # not moved since
        if same and spare.alive() and spare.options == self._options():
            spare.reload(progress=progress, cancel=cancel)
            return spare
        if spare is not None:
            spare.close()
        return LinkerProcess(
            self.project.path,
            device=self.device,
            candidates=self.candidates,
            use_reranker=self.use_reranker,
            progress=progress,
            cancel=cancel,
        )

    def preload(self) -> Job:
        """Load the models in the background before the first link is asked for (the status bar then
        names the device at once, and the first abstract without suggestions waits less)."""

        def work(progress, cancel: CancelToken) -> None:
            self.linker(progress, cancel)

        job = Job(work, "loading models")
        job.signals.errored.connect(self.failed.emit)
        return self.submit(job)

    def link(self, doc_ids: Sequence[str], *, name: str = "linking") -> Job:
        ids = list(doc_ids)

        def work(progress, cancel: CancelToken) -> list[str]:
            self._link_each(self.linker(progress, cancel), job, ids, None, progress, cancel)
            return ids

        job = Job(work, name)
        job.signals.partial.connect(self.chunkLinked.emit)
        job.signals.returned.connect(self.suggestionsReady.emit)
        job.signals.errored.connect(self.failed.emit)
        return self.submit(job)

    def find_mentions(self, doc_ids: Sequence[str], *, name: str = "finding mentions") -> Job:
        """Tag mentions in the documents' raw text (the project's span model, else the dictionary), tell
        the window (`mentionsFound`: it shows them at once, unsuggested), then link each tagged document
        as `link` does. Returns the DetectSummary."""
        ids = list(doc_ids)

        def work(progress, cancel: CancelToken):
            from core.jobs.linking.link import Detect

            detect = Detect(only_tagged=True)
            return self._link_each(self.linker(progress, cancel), job, ids, detect, progress, cancel).found

        job = Job(work, name)
        job.signals.partial.connect(self.chunkLinked.emit)
        job.signals.errored.connect(self.failed.emit)
        return self.submit(job)

    def _link_each(self, linker, job: Job, ids: list[str], detect, progress, cancel: CancelToken):
        """core.jobs.linking.link one document at a time (after finding mentions, with `detect`): each is
        stored and shown as soon as it is linked (the open abstract comes first in `ids`), edited mentions
        are served in between, and the GIL is handed back between small pieces."""
        from core.jobs.linking.link import link

        return link(
            self.project,
            linker,
            detect=detect,
            ids=ids,
            batch_documents=1,
            on_found=lambda found: self.mentionsFound.emit((found, ids)),
            on_linked=lambda doc_ids: job.signals.partial.emit(self.chunk(doc_ids)),
            between=lambda: self._resuggest_waiting(linker, job, cancel),
            progress=progress,
            cancel=cancel,
        )

    def resuggest(self, mention_ids: Sequence[int]) -> Job:
        """Suggest again for mentions whose span or type changed: retriever candidates first (shown at
        once), reranked ones after. Ahead of queued jobs; a running link job serves it between documents."""
        with self._urgent_lock:
            self._urgent.update(dict.fromkeys(mention_ids))

        def work(progress, cancel: CancelToken) -> None:
            self._resuggest_waiting(self.linker(progress, cancel), job, cancel)

        job = Job(work, "re-suggesting edited mentions")
        job.signals.partial.connect(self.chunkLinked.emit)
        job.signals.errored.connect(self.failed.emit)
        return self.submit(job, priority=1)

    def learn(self, mention_ids: Sequence[int]) -> Job | None:
        """A decision was stored, undone or redone: the loaded linker learns it (core.learn.live), then
        the undecided mentions with the same text anywhere in the project are suggested again, so none
        keeps a suggestion the decision contradicts. Nothing happens while no models are loaded: loading
        reads every decision from the store. While they load, the job waits in the worker (the UI thread
        never waits for a load) and learns what the load may have read too, which changes nothing.
        Decisions taken while a learning job waits join it."""
        if not self.models_loaded:  # read without `_lock`: a load holds it for minutes
            return None
        with self._urgent_lock:
            waiting = bool(self._to_learn)
            self._to_learn.update(dict.fromkeys(mention_ids))
        if waiting:
            return None

        def work(progress, cancel: CancelToken):
            with self._urgent_lock:
                ids = list(self._to_learn)
                self._to_learn.clear()
            linker = self.linker(progress, cancel)
            found = linker.learn(self.project, ids)
            if found.identical:  # directly: edited mentions waiting for suggestions stay with their own job
                linker.resuggest(
                    self.project,
                    found.identical,
                    on_stored=lambda doc_ids: job.signals.partial.emit(self.chunk(doc_ids)),
                    cancel=cancel,
                )
            self.learned.emit((found, len(found.identical)))
            return found

        job = Job(work, "learning from decisions")
        job.signals.partial.connect(self.chunkLinked.emit)
        job.signals.errored.connect(self.failed.emit)
        return self.submit(job, priority=1)

    def change_models(self, change: Callable[[], object] | None, *, first: Sequence[str] = ()) -> Job:
        """Put other models in force and relink the unreviewed mentions with them (the core jobs the CLI
        runs too): `change` (a promotion or a rollback) runs in the worker, after any link job already
        queued; then the models load again and each document is shown as it is stored, `first` (the open
        document) first. Edited mentions waiting for suggestions are served between documents."""
        from core.jobs.models.relinking import relink_unreviewed

        def work(progress, cancel: CancelToken):
            changed = change() if change is not None else None
            self.reset()
            linker = self.linker(progress, cancel)
            summary = relink_unreviewed(
                self.project,
                linker,
                first=first,
                batch_documents=1,
                on_linked=lambda doc_ids: job.signals.partial.emit(self.chunk(doc_ids)),
                between=lambda: self._resuggest_waiting(linker, job, cancel),
                progress=progress,
                cancel=cancel,
            )
            return changed, summary

        job = Job(work, "relinking the unreviewed documents")
        job.signals.partial.connect(self.chunkLinked.emit)
        job.signals.errored.connect(self.failed.emit)
        return self.submit(job)

    def _resuggest_waiting(self, linker, job: Job, cancel: CancelToken) -> None:
        """Re-suggest every mention waiting for it (in the worker), handing each stage to the window."""
        while True:
            with self._urgent_lock:
                ids = list(self._urgent)
                self._urgent.clear()
            if not ids:
                return
            linker.resuggest(
                self.project,
                ids,
                on_stored=lambda doc_ids: job.signals.partial.emit(self.chunk(doc_ids)),
                cancel=cancel,
            )

    def chunk(self, doc_ids: list[str]) -> LinkedChunk:
        """Read (in the worker) the queue, the new suggestions and their concepts for the window."""
        mention_ids = [m for _, ids in self.project.documents.documents_with_mention_ids(ids=doc_ids) for m in ids]
        suggestions = self.project.curation.suggestion_sets(mention_ids)
        wanted = {c.concept_id for found in suggestions.values() for c in found.candidates}
        concepts = self.project.kb.concepts(sorted(wanted))
        return LinkedChunk(list(doc_ids), self.project.desk.queue(doc_ids=doc_ids), suggestions, concepts)

    def submit(self, job: Job, *, priority: int = 0) -> Job:
        self.jobs = [j for j in self.jobs if not j.done.is_set()] + [job]
        self.pool.start(job, priority)
        return job

    def busy(self) -> bool:
        return any(not job.done.is_set() for job in self.jobs)

    def shutdown(self, timeout_ms: int = 10000) -> None:
        for job in self.jobs:
            job.cancel()
        self.pool.waitForDone(timeout_ms)
        with self._lock:
            for process in (self._linker, self._spare):
                if process is not None and not self.in_thread:
                    process.close()
            self._linker = self._spare = None


def run_in_thread(work: Work, name: str, pool: QThreadPool | None = None) -> Job:
    """One-off background job (imports, exports, building the demo, retraining): superqt's
    `create_worker` builds it and starts it on the global pool; errors go to `errored`, not re-raised."""
    job = create_worker(work, name, _worker_class=Job, _start_thread=pool is None, _ignore_errors=True)
    if pool is not None:
        pool.start(job)
    return job
