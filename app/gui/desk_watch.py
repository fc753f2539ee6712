"""The desk notices what another process wrote to its project (a CLI link, import, bulk accept, promotion).

Every few seconds it reads the project's change marks (a few indexed reads); when they moved it re-reads
the queue rows of the documents touched, the open document when it is one of them, and drops its loaded
models when the active ones changed, so the screen never shows a state the store no longer has. Nothing
is re-read while one of the desk's own changes waits to be saved, or while the curator is selecting
text in the abstract (that would cancel the selection); the next tick catches up.

When the project's database can no longer be found where the desk opened it (the folder was moved, renamed
or unmounted), the desk says so once, stops looking, and keeps what is on screen, the changes not yet saved
included; the curator can point it at the folder's new place, where those changes are then written.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QFileDialog, QMessageBox
from shiboken6 import isValid

from app.gui.abstract_view import AbstractView
from app.gui.desk_document import settle_memory
from app.gui.desk_host import DeskHost
from app.gui.desk_linking import BackgroundLinking
from app.gui.desk_model import DeskModel
from app.gui.desk_writer import DeskWriter
from app.gui.document_queue import DocumentQueue
from app.gui.settings import AppSettings
from app.gui.workers import MODELS_LOADING, Job, LinkService, run_in_thread
from core.errors import CuralinkError
from core.store.change_marks import ChangeMarks
from core.store.project import DB_NAME

log = logging.getLogger(__name__)

WATCH_INTERVAL_MS = 2000


class WatchHost(DeskHost, Protocol):
    """The window as the watch sees it: it retitles itself and closes."""

    def setWindowTitle(self, title: str) -> None: ...

    def close(self) -> bool: ...


class ProjectWatch:
    """Watching the project for the window (`host`): re-reads its queue and open document (`model`)
    when another process wrote, and says when the project's folder went away; `writer` holds the
    desk's changes not yet saved (nothing is re-read while some wait)."""

    def __init__(
        self,
        host: WatchHost,
        model: DeskModel,
        settings: AppSettings,
        service: LinkService,
        links: BackgroundLinking,
        *,
        queue: DocumentQueue,
        abstract: AbstractView,
        writer: DeskWriter,
    ):
        self.host, self.model, self.settings, self.service, self.links = host, model, settings, service, links
        self.project, self.queue, self.abstract, self.writer = model.project, queue, abstract, writer
        self.seen_marks: ChangeMarks | None = None
        self.lost_dialog: QMessageBox | None = None  # shown once when the project cannot be reached
        self.watch_timer: QTimer | None = None
        self.queue_generation = 0  # a queue read under way is dropped when this moves on
        self.queue_jobs: list[Job] = []

    def start_watching(self, interval_ms: int = WATCH_INTERVAL_MS) -> None:
        self.seen_marks = self.project.changes.marks()
        self.lost_dialog = None
        self.watch_timer = QTimer(self.host)
        self.watch_timer.setInterval(interval_ms)
        self.watch_timer.timeout.connect(self.check_project_changes)
        self.watch_timer.start()

    def stop_watching(self) -> None:
        self.watch_timer.stop()

    def check_project_changes(self) -> bool:
        """Re-read what changed on disk since the last look; True when something was re-read."""
        if not self.project_reachable():
            self.project_lost()
            return False
        if self.writer.pending or self.abstract.textCursor().hasSelection():
            return False
        try:
            return self._reread_changes()
        except Exception as exc:  # noqa: BLE001 - never out of a timer into the event loop
            if not self.project_reachable():  # gone between the look above and the reads
                self.project_lost()
            else:  # locked or unreadable for a moment: look again next tick
                log.info("could not read the project's changes: %s", exc)
            return False

    def _reread_changes(self) -> bool:
        try:
            marks = self.project.changes.marks()
        except CuralinkError as exc:  # locked or unreadable for a moment: look again next tick
            log.info("could not read the project's change marks: %s", exc)
            return False
        before = self.seen_marks
        if marks == before:
            return False
        touched = None if before is None else self.project.changes.changed_documents(before, marks)
        self.seen_marks = marks
        if before is not None and marks.models != before.models:
            self.service.reset()
            self.links.update_models_label()
        if touched is None or (
            touched and not self.queue.update_entries(self.project.desk.queue(doc_ids=sorted(touched)))
        ):
            # A wide change (documents added or removed, suggestions replaced): the whole queue is read
            # in the background (~1 s at 20,000 documents, which froze the window on the UI thread).
            self.reload_queue_in_background(then=lambda: self._check_open_document(None))
            return True
        self._check_open_document(touched)
        return True

    # --- the project folder went away ---------------------------------------------------------------

    def project_reachable(self) -> bool:
        """The project's database is still where the desk opened it (one stat, no SQLite call: a
        connection already open goes on working on a moved file, so asking SQLite would not tell)."""
        try:
            return (self.project.path / DB_NAME).is_file()
        except OSError:
            return False

    def project_lost(self) -> QMessageBox:
        """Say once that the project cannot be reached, stop looking, keep the screen (and the changes
        waiting to be saved) as they are, and offer to reopen it where it is now."""
        if self.lost_dialog is not None:
            return self.lost_dialog
        self.stop_watching()
        waiting = len(self.writer.pending)
        kept = (
            f"The {waiting} change{'s' if waiting != 1 else ''} not saved yet stay{'s' if waiting == 1 else ''} "
            "in the bar above the abstract and are saved once the project is reopened."
            if waiting
            else "Everything you did is saved; the screen stays as it was."
        )
        message = (
            f"The project folder {self.project.path} can no longer be reached: it was moved, renamed or "
            f"unmounted. {kept}"
        )
        log.warning("%s", message)
        self.host.statusBar().showMessage("the project cannot be reached: reopen it where it is now")
        box = QMessageBox(
            QMessageBox.Icon.Warning, "The project cannot be reached", message, parent=self.host
        )
        self.reopen_button = box.addButton("Reopen where it is now…", QMessageBox.ButtonRole.AcceptRole)
        box.addButton("Close the desk", QMessageBox.ButtonRole.DestructiveRole)
        box.buttonClicked.connect(self._lost_choice)
        self.lost_dialog = box
        box.open()  # window-modal: the screen stays visible, keys wait for the curator's choice
        return box

    def _lost_choice(self, button) -> None:
        if button is self.reopen_button:
            self.choose_new_place()
        else:
            QTimer.singleShot(0, self.host.close)

    def choose_new_place(self) -> QFileDialog:
        """A folder chooser for the project's new place (not blocking: tests and the event loop go on)."""
        start = next((str(p) for p in self.project.path.parents if p.is_dir()), "")
        dialog = QFileDialog(self.host, "Where is the project now?", start)
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)  # the same on every desktop
        dialog.fileSelected.connect(lambda folder: self.reopen_project_at(Path(folder)))
        dialog.rejected.connect(lambda: self.lost_dialog.open() if self.lost_dialog is not None else None)
        self.host.menu_dialog = dialog
        dialog.open()
        return dialog

    def reopen_project_at(self, folder: Path) -> bool:
        """Go on with the project at `folder`: the open Project follows it (the writer's waiting changes
        are written there), the linking process starts again from there, and the screen is re-read."""
        from app.console import log_to_project
        from app.gui.dialogs import show_error

        waiting = bool(self.writer.pending)
        try:
            if waiting:  # the waiting changes must land in this project, not in another one
                from core.store import Project

                with Project.open(folder) as candidate:
                    if not _same_project(self.seen_marks, candidate.changes.marks()):
                        raise CuralinkError(
                            f"{folder}: not the project this desk had open (its contents differ), so the "
                            "changes not yet saved are not written there; choose the moved project folder"
                        )
            self.project.reopen_at(folder)
            log_to_project(self.project.path)
        except Exception as exc:  # noqa: BLE001 - shown to the curator, who may choose again
            show_error(self.host, exc, context="reopening the project")
            if self.lost_dialog is not None:
                self.lost_dialog.open()
            return False
        if self.lost_dialog is not None:
            self.lost_dialog.done(0)
            self.lost_dialog = None
        self.settings.last_project = self.project.path
        self.host.setWindowTitle(f"Curalink — {self.project.path.name}")
        self.service.reset()  # its process opened the old place: a new one starts from the new place
        if self.host.background:  # and loads now: waiting for a job to ask left the desk without models
            # (no identical mention suggested again) until a span edit, about 20 s later (issue 31)
            self.links.device_label.setText(MODELS_LOADING)
            self.service.preload()
        self.host.statusBar().showMessage(f"reopened the project at {self.project.path}", 6000)
        self.seen_marks = self.project.changes.marks()
        self.watch_timer.start()
        if waiting:
            self.writer.retry()
        self.reload_queue_in_background(then=lambda: self._check_open_document(None))
        return True

    def _check_open_document(self, touched: set[str] | None) -> None:
        """Show the open document again when another process changed it; open another when it is gone."""
        if self.model.doc is not None and (touched is None or self.model.doc.doc_id in touched):
            if self.queue.entry(self.model.doc.doc_id) is None:  # deleted by the other process
                self.model.doc = None
                first = self.queue.visible_ids()
                if first:
                    self.host.document.open_document(first[0])
            elif self._screen_is_stale():
                self.host.document.open_document(
                    self.model.doc.doc_id, mention_id=self.model.current_mention_id()
                )

    def reload_queue_in_background(self, then: Callable[[], None] | None = None) -> Job:
        """Read every queue row in a worker thread and show them when read; rows the desk changed while
        the read ran are read again (the background read may predate them). A later call supersedes it."""
        self.queue_generation += 1
        generation = self.queue_generation
        self.queue.take_changed()
        project = self.project

        def work(_progress, _cancel):
            return project.desk.queue(), project.desk.document_facets()

        def show(result) -> None:
            if generation != self.queue_generation or not isValid(self.queue):
                return  # a newer read is on its way, or the window closed meanwhile
            entries, facets = result
            changed = self.queue.take_changed()
            self.queue.set_entries(entries, facets)
            settle_memory()
            if changed:
                self.queue.update_entries(self.project.desk.queue(doc_ids=sorted(changed)))
            if then is not None:
                then()

        job = run_in_thread(work, "re-reading the queue")
        job.signals.returned.connect(show)
        job.signals.errored.connect(lambda exc: log.warning("could not re-read the queue: %s", exc))
        self.queue_jobs = [j for j in self.queue_jobs if not j.done.is_set()] + [job]
        return job

    def _screen_is_stale(self) -> bool:
        """Whether the open document's mentions, decisions or suggestions differ from the store's: the
        desk's own writes are already on screen, and re-showing them would reset the candidate row the
        curator has moved to."""
        found = list(self.project.documents.documents_with_mention_ids(ids=[self.model.doc.doc_id]))
        if (
            not found
            or found[0][0].mentions != self.model.doc.mentions
            or found[0][1] != self.model.mention_ids
        ):
            return True
        stored = self.project.curation.current_decisions(mention_ids=self.model.mention_ids)
        if {m: d.id for m, d in stored.items()} != {m: d.id for m, d in self.model.decisions.items()}:
            return True
        sets = self.project.curation.suggestion_sets(self.model.mention_ids)
        shown = {m: [_shown(c) for c in ranked] for m, ranked in self.model.suggestions.items() if ranked}
        # suggestions held back for the selected mention are the desk's already (DeskModel.deferred)
        shown.update({m: [_shown(c) for c in entry.candidates] for m, entry in self.model.deferred.items()})
        return shown != {m: [_shown(c) for c in entry.candidates] for m, entry in sets.items()}


def _same_project(seen: ChangeMarks | None, found: ChangeMarks) -> bool:
    """Whether `found` can be the project last seen as `seen`: the same documents, concepts and models,
    and no fewer decisions, suggestions or mentions (the desk's own writes since only add to them)."""
    if seen is None:
        return False
    same = (seen.documents, seen.concepts, seen.models) == (found.documents, found.concepts, found.models)
    return (
        same
        and found.decision >= seen.decision
        and found.suggestion >= seen.suggestion
        and (found.mention >= seen.mention)
    )


def _shown(candidate) -> tuple:
    """What the candidate list shows of a candidate (a relink may keep the order but change scores)."""
    return (candidate.concept_id, candidate.retriever_score, candidate.reranker_score)
