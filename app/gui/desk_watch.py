"""The desk notices what another process wrote to its project (a CLI link, import, bulk accept, promotion).

Every few seconds it reads the project's change marks (a few indexed reads); when they moved it re-reads
the queue rows of the documents touched, the open document when it is one of them, and drops its loaded
models when the active ones changed, so the screen never shows a state the store no longer has. Nothing
is re-read while one of the desk's own changes waits to be saved, or while the curator is selecting
text in the abstract (that would cancel the selection); the next tick catches up.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QTimer

from core.errors import CuralinkError
from core.store.change_marks import ChangeMarks

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
        if touched is None:
            self.reload_queue()
        elif touched and not self.queue.update_entries(self.project.queue(doc_ids=sorted(touched))):
            self.reload_queue()
        if self.doc is not None and (touched is None or self.doc.doc_id in touched):
            if self.queue.entry(self.doc.doc_id) is None:  # deleted by the other process
                self.doc = None
                first = self.queue.visible_ids()
                if first:
                    self.open_document(first[0])
            elif self._screen_is_stale():
                self.open_document(self.doc.doc_id, mention_id=self.current_mention_id())
        return True

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
