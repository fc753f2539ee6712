"""The desk notices what another process wrote to its project (a CLI link, import, bulk accept, promotion).

Every few seconds it reads the project's change marks (a few indexed reads); when they moved it re-reads
the queue rows of the documents touched, the open document when it is one of them, and drops its loaded
models when the active ones changed, so the screen never shows a state the store no longer has. Nothing
is re-read while one of the desk's own changes waits to be saved, or while the curator is selecting
text in the abstract (that would cancel the selection); the next tick catches up.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QTimer
from shiboken6 import isValid

from app.gui.desk_document import settle_memory
from app.gui.workers import Job, run_in_thread
from core.errors import CuralinkError
from core.store.change_marks import ChangeMarks
from core.store.desk_lookup import document_facets

log = logging.getLogger(__name__)

WATCH_INTERVAL_MS = 2000


class ProjectWatchMixin:
    """Mixed into the main window: needs `project`, `writer`, `queue`, `abstract`, `doc`, `service`."""

    def start_watching(self, interval_ms: int = WATCH_INTERVAL_MS) -> None:
        self.seen_marks: ChangeMarks | None = self.project.marks()
        self.watch_timer = QTimer(self)
        self.watch_timer.setInterval(interval_ms)
        self.watch_timer.timeout.connect(self.check_project_changes)
        self.watch_timer.start()

    def check_project_changes(self) -> bool:
        """Re-read what changed on disk since the last look; True when something was re-read."""
        if self.writer.pending or self.abstract.textCursor().hasSelection():
            return False
        try:
            marks = self.project.marks()
        except CuralinkError as exc:  # locked or unreadable for a moment: look again next tick
            log.info("could not read the project's change marks: %s", exc)
            return False
        before = self.seen_marks
        if marks == before:
            return False
        touched = None if before is None else self.project.changed_documents(before, marks)
        self.seen_marks = marks
        if before is not None and marks.models != before.models:
            self.service.reset()
            self._update_models_label()
        if touched is None or (
            touched and not self.queue.update_entries(self.project.queue(doc_ids=sorted(touched)))
        ):
            # A wide change (documents added or removed, suggestions replaced): the whole queue is read
            # in the background (~1 s at 20,000 documents, which froze the window on the UI thread).
            self.reload_queue_in_background(then=lambda: self._check_open_document(None))
            return True
        self._check_open_document(touched)
        return True

    def _check_open_document(self, touched: set[str] | None) -> None:
        """Show the open document again when another process changed it; open another when it is gone."""
        if self.doc is not None and (touched is None or self.doc.doc_id in touched):
            if self.queue.entry(self.doc.doc_id) is None:  # deleted by the other process
                self.doc = None
                first = self.queue.visible_ids()
                if first:
                    self.open_document(first[0])
            elif self._screen_is_stale():
                self.open_document(self.doc.doc_id, mention_id=self.current_mention_id())

    def reload_queue_in_background(self, then: Callable[[], None] | None = None) -> Job:
        """Read every queue row in a worker thread and show them when read; rows the desk changed while
        the read ran are read again (the background read may predate them). A later call supersedes it."""
        self.queue_generation = getattr(self, "queue_generation", 0) + 1
        generation = self.queue_generation
        self.queue.take_changed()
        project = self.project

        def work(_progress, _cancel):
            return project.queue(), document_facets(project)

        def show(result) -> None:
            if generation != self.queue_generation or not isValid(self.queue):
                return  # a newer read is on its way, or the window closed meanwhile
            entries, facets = result
            changed = self.queue.take_changed()
            self.queue.set_entries(entries, facets)
            settle_memory()
            if changed:
                self.queue.update_entries(self.project.queue(doc_ids=sorted(changed)))
            if then is not None:
                then()

        job = run_in_thread(work, "re-reading the queue")
        job.signals.returned.connect(show)
        job.signals.errored.connect(lambda exc: log.warning("could not re-read the queue: %s", exc))
        self.queue_jobs = [j for j in getattr(self, "queue_jobs", []) if not j.done.is_set()] + [job]
        return job

    def _screen_is_stale(self) -> bool:
        """Whether the open document's mentions, decisions or suggestions differ from the store's: the
        desk's own writes are already on screen, and re-showing them would reset the candidate row the
        curator has moved to."""
        found = list(self.project.documents_with_mention_ids(ids=[self.doc.doc_id]))
        if not found or found[0][0].mentions != self.doc.mentions or found[0][1] != self.mention_ids:
            return True
        stored = self.project.current_decisions(mention_ids=self.mention_ids)
        if {m: d.id for m, d in stored.items()} != {m: d.id for m, d in self.decisions.items()}:
            return True
        sets = self.project.suggestion_sets(self.mention_ids)
        shown = {m: [_shown(c) for c in ranked] for m, ranked in self.suggestions.items() if ranked}
        return shown != {m: [_shown(c) for c in entry.candidates] for m, entry in sets.items()}


def _shown(candidate) -> tuple:
    """What the candidate list shows of a candidate (a relink may keep the order but change scores)."""
    return (candidate.concept_id, candidate.retriever_score, candidate.reranker_score)
