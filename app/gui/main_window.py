"""The curator's desk: queue on the left, the abstract in the middle, candidates and concept on the right."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QLabel,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.gui.abstract_view import AbstractView
from app.gui.candidate_panel import CandidatePanel
from app.gui.concept_pane import ConceptPane
from app.gui.curator_identity import install_curator
from app.gui.desk_changes import DeskChanges
from app.gui.desk_curation import Curation
from app.gui.desk_detect import FindMentions
from app.gui.desk_document import DocumentView
from app.gui.desk_extras import CuratorExtras
from app.gui.desk_files import ProjectFiles
from app.gui.desk_history import DeskHistory
from app.gui.desk_identical import ApplyToIdentical
from app.gui.desk_keys import DeskKeys
from app.gui.desk_learnt import install_learnt
from app.gui.desk_linking import BackgroundLinking
from app.gui.desk_marks import CurationMarks
from app.gui.desk_model import DeskModel
from app.gui.desk_occurrences import AnnotateOccurrences
from app.gui.desk_retrain import BackgroundRetrain
from app.gui.desk_saving import DeskSaving
from app.gui.desk_view import DeskView
from app.gui.desk_watch import ProjectWatch
from app.gui.dialogs import KeyHelpOverlay, show_error
from app.gui.document_queue import DocumentQueue
from app.gui.fetch_pubmed_dialog import install_fetch_pubmed
from app.gui.menu_actions import MenuActions
from app.gui.settings import AppSettings
from app.gui.states import (
    legend_html,
)
from app.gui.window_state import remember_window, restore_panes, restore_window
from app.gui.workers import MODELS_LOADING, MODELS_NOT_LOADED, Job, LinkService
from core.errors import CuralinkError
from core.store.write_faults import StoreWriteError, WriteFault

if TYPE_CHECKING:
    from core.store.project import Project

log = logging.getLogger(__name__)

OPEN_WINDOWS: list[MainWindow] = []
# Splitter shares of the window width: queue, abstract, candidates.
PANE_SHARES = (0.26, 0.31, 0.43)


class MainWindow(QMainWindow):
    """The window: its widgets, keys and menus, and the parts it holds. The open document's state and the
    operations the keys trigger are `model` (no Qt); `document` draws it, `curation` has the curation
    keys, `saving` the writes, `links` and `detect` background linking, `retrain` retraining, `watch`
    what other processes wrote, `files` the File menu, `view` the View menu, `menus` the actions other
    modules install (app/gui/menu_actions.py); each operation's changes reach the parts through one
    signal, `changes` (app/gui/desk_changes.py; docs/architecture.md)."""

    def __init__(self, project: Project, settings: AppSettings | None = None, *, background: bool = True):
        super().__init__()
        self.project = project
        self.settings = settings or AppSettings()
        self.background = background
        self.model = DeskModel(project, curator=lambda: self.settings.curator)  # the open document's state
        self.undo_stack = DeskHistory(self)  # the project's undo history as the store last reported it
        self.changes = DeskChanges(self)  # each operation's OpChanges, once (app/gui/desk_changes.py)
        self.service = LinkService(
            project,
            device=self.settings.device,
            candidates=self.settings.candidates,
            use_reranker=self.settings.use_reranker,
        )
        if self.service.in_thread:  # the linker shares this process: import its stack before input
            from core.jobs.linking.suggestions import warm_imports

            warm_imports()
        self.service.failed.connect(lambda exc: show_error(self, exc, context="background linking"))
        self.report_dialog = None  # an import's or export's summary, or its bad items
        self.menu_job: Job | None = None
        self._menu_dialog: QWidget | None = None

        self.setWindowTitle(f"Curalink — {project.path.name}")
        self._build_widgets()
        restore_window(self, self.settings)  # the size and place the desk was last closed at
        self._build_parts()
        self._build_actions()
        self._build_menus()
        self.links.update_models_label()
        self.document.reload_queue()
        self.view.restore_view()  # the filters, order and document last left in this project
        self._import_reranker_code()
        self.watch.start_watching()
        if self.background and not self.service.busy():
            self.device_label.setText(MODELS_LOADING)
            self.service.preload()  # the KB search index is built once it is ready (desk_linking)
        OPEN_WINDOWS.append(self)

    @property
    def menu_dialog(self) -> QWidget | None:
        """The dialog a menu or key opened last (kept alive; tests reach it)."""
        return self._menu_dialog

    @menu_dialog.setter
    def menu_dialog(self, dialog: QWidget | None) -> None:
        self._menu_dialog = dialog
        if isinstance(dialog, QDialog):
            self.keys_back(dialog)

    def keys_back(self, dialog: QDialog) -> None:
        """The desk's keys work again, on the desk, as soon as `dialog` closes (app/gui/desk_keys.py)."""
        self.keys.keys_back(dialog)

    def keyPressEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """A key no widget used, which Qt did not take as a shortcut (this window not counted active):
        the desk action it names, or a status line saying it names none."""
        if not self.keys.dispatch(event):
            super().keyPressEvent(event)

    def _import_reranker_code(self) -> None:
        """Import the reranker's model code now, before the window takes input: done in the worker, the
        import froze the event loop for 266-314 ms (it holds the GIL); the weights then load in the
        background with stalls under 10 ms. Costs ~2 s of start-up, once per process and architecture."""
        ranked = self.project.models.active_model("reranker") if self.settings.use_reranker else None
        if ranked is None or not self.service.in_thread:  # a linking process imports it there
            return
        from core.jobs.linking.suggestions import preload_architecture

        try:
            preload_architecture(ranked.path)
        except CuralinkError as exc:  # the worker reports the broken model properly when it loads it
            log.warning("reranker %s: %s", ranked.version, exc)

    def _build_parts(self) -> None:
        """The parts the window holds, each given what it works on; `self` is their `DeskHost`."""
        self.links = BackgroundLinking(
            self,
            self.model,
            self.settings,
            self.service,
            queue=self.queue,
            background=self.background,
            labels=(self.device_label, self.models_label, self.kb_label),
            progress=self.job_progress,
            cancel=self.job_cancel,
        )
        self.detect = FindMentions(self, self.model, self.service, self.queue, self.links)
        self.curation = Curation(
            self,
            self.model,
            self.saving,
            candidates=self.candidates,
            abstract=self.abstract,
            teaching_off=lambda: self.menus.learnt.no_teach.isChecked(),
        )
        self.marks = CurationMarks(self, self.model, self.saving)
        self.identical = ApplyToIdentical(self, self.model, self.saving)
        self.occurrences = AnnotateOccurrences(self, self.model, self.saving, self.service, self.abstract)
        self.extras = CuratorExtras(
            self,
            self.model,
            self.settings,
            self.undo_stack,
            self.saving,
            legend=self.legend,
            marks=self.marks,
            identical=self.identical,
            occurrences=self.occurrences,
        )
        self.retrain = BackgroundRetrain(self, self.model, self.service, self.links)
        self.watch = ProjectWatch(
            self,
            self.model,
            self.settings,
            self.service,
            self.links,
            queue=self.queue,
            abstract=self.abstract,
            writer=self.saving.writer,
        )
        self.files = ProjectFiles(
            self,
            self.model,
            self.settings,
            self.service,
            self.links,
            open_window=lambda project: MainWindow(project, self.settings, background=self.background),
        )
        self.document = DocumentView(
            self.model,
            self.settings,
            queue=self.queue,
            abstract=self.abstract,
            candidates=self.candidates,
            concept=self.concept,
            doc_meta=self.doc_meta,
            marks=self.marks,
            links=self.links,
            undo_stack=self.undo_stack,
            on_selected=lambda: self.view.remember_view(),
        )
        # One operation, one signal: its parts take in what it changed, in this order (the linker learns
        # once the document shows an edited mention's new span).
        self.changes.applied.connect(lambda shown: self.undo_stack.set(shown.changes.history))
        self.changes.applied.connect(self.document.take)
        self.changes.applied.connect(self.saving.learn)
        self.view = DeskView(
            self,
            self.model,
            self.settings,
            queue=self.queue,
            abstract=self.abstract,
            legend=self.legend,
            candidates=self.candidates,
        )

    # --- layout ----------------------------------------------------------------------------------

    def _build_widgets(self) -> None:
        self.queue = DocumentQueue()
        self.abstract = AbstractView()
        self.doc_meta = QLabel()
        self.doc_meta.setObjectName("docMeta")
        # One rich-text label: the chips wrap like words when the pane is narrow, never overlap or clip.
        self.legend = QLabel(legend_html())
        self.legend.setObjectName("legend")
        self.legend.setWordWrap(True)
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        middle = QWidget()
        middle_layout = QVBoxLayout(middle)
        middle_layout.setContentsMargins(0, 0, 0, 0)
        middle_layout.addWidget(self.doc_meta)
        middle_layout.addWidget(self.legend)
        middle_layout.addWidget(self.abstract, 1)

        self.candidates = CandidatePanel()
        self.candidates.candidateActivated.connect(lambda row: self.curation.accept_rank(row + 1))
        self.candidates.markToggled.connect(lambda row: self.curation.toggle_mark(row + 1))
        self.concept = ConceptPane(names=self.model.concept_name)
        concept_box = QWidget()
        concept_layout = QVBoxLayout(concept_box)
        concept_layout.setContentsMargins(0, 0, 0, 0)
        concept_title = QLabel("Concept")
        concept_title.setObjectName("paneTitle")
        concept_layout.addWidget(concept_title)
        concept_layout.addWidget(self.concept, 1)
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.candidates)
        right.addWidget(concept_box)
        right.setSizes([380, 300])

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.queue)
        self.splitter.addWidget(middle)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 3)
        self.splitter.setStretchFactor(2, 2)
        self.splitter.setSizes([int(1476 * share) for share in PANE_SHARES])
        self.splitter.setContentsMargins(8, 8, 8, 4)
        self.saving = DeskSaving(self, self.model, self.settings, self.service, self.undo_stack, self.changes)
        self.setCentralWidget(self.saving.with_save_bar(self.splitter))
        self.help_overlay = KeyHelpOverlay(self)
        self.keys = DeskKeys(self, self)  # the desk's keys wherever the focus is (issue 31)
        self.keys.install(self.queue.view, self.candidates.view, self.concept)
        # Nothing holds the focus at the start (the concept pane took it, unseen): keys go to the window.
        self.concept.setFocusPolicy(Qt.FocusPolicy.ClickFocus)

        bar = self.statusBar()
        self.device_label = QLabel(MODELS_NOT_LOADED)
        self.models_label = QLabel()
        self.kb_label = QLabel()
        self.job_progress = QProgressBar()
        self.job_progress.setMaximumWidth(220)
        self.job_progress.setTextVisible(True)
        self.job_cancel = QPushButton("Cancel")
        self.job_cancel.setFlat(True)
        for widget in (self.job_progress, self.job_cancel):
            widget.hide()
        for widget in (self.device_label, self.models_label, self.kb_label):
            bar.addPermanentWidget(widget)
        bar.addWidget(self.job_progress)
        bar.addWidget(self.job_cancel)
        self.resize(QSize(1500, 880))

    def key_action(self, text: str, keys: list, slot, *, menu=None, tip: str = "") -> QAction:
        action = QAction(text, self)
        action.setShortcuts([QKeySequence(k) for k in keys])
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.triggered.connect(lambda _checked=False: self._run_key(slot))
        if tip:
            action.setStatusTip(tip)
        self.addAction(action)
        return action

    def _run_key(self, slot) -> None:
        """A key's work. The project's folder going away under it (moved, unmounted) is said once, with a
        way to reopen it (ProjectWatch), never raised into the event loop."""
        try:
            slot()
        except StoreWriteError as exc:
            if exc.fault is not WriteFault.GONE:
                raise
            self.watch.project_lost()

    def _build_actions(self) -> None:
        K = Qt.Key
        M = Qt.KeyboardModifier
        self.act_accept = self.key_action(
            "Accept top (or marked) candidates", [K.Key_Return, K.Key_Enter], self.curation.accept_top
        )
        self.act_rank = [
            self.key_action(
                f"Accept candidate {n}", [getattr(K, f"Key_{n}")], lambda n=n: self.curation.accept_rank(n)
            )
            for n in range(1, 10)
        ]
        self.act_mark = [
            self.key_action(f"Mark candidate {n}", [f"Ctrl+{n}"], lambda n=n: self.curation.toggle_mark(n))
            for n in range(1, 10)
        ]
        self.act_clear_marks = self.key_action("Clear marks", [K.Key_Escape], self._escape)
        self.act_type = self.key_action("Change type…", [K.Key_T], self.curation.change_type)
        self.act_reject = self.key_action("Reject", [K.Key_R], lambda: self.curation.decide("reject"))
        self.act_nil = self.key_action("Not in KB", [K.Key_N], lambda: self.curation.decide("nil"))
        self.act_ambiguous = self.key_action(
            "Ambiguous", [K.Key_A], lambda: self.curation.decide("ambiguous")
        )
        self.act_search = self.key_action(
            "Search the KB…", ["Ctrl+F", K.Key_Slash], self.curation.open_kb_search
        )
        self.act_add = self.key_action(
            "Add mention from selection", [K.Key_M, K.Key_Insert], self.curation.add_mention
        )
        self.act_delete = self.key_action("Delete mention", [K.Key_Delete], self.curation.delete_mention)
        self.act_end_left = self.key_action(
            "Shrink end", [M.ShiftModifier | K.Key_Left], lambda: self.curation.adjust(0, -1)
        )
        self.act_end_right = self.key_action(
            "Extend end", [M.ShiftModifier | K.Key_Right], lambda: self.curation.adjust(0, 1)
        )
        self.act_start_left = self.key_action(
            "Extend start",
            [M.ControlModifier | M.ShiftModifier | K.Key_Left],
            lambda: self.curation.adjust(-1, 0),
        )
        self.act_start_right = self.key_action(
            "Shrink start",
            [M.ControlModifier | M.ShiftModifier | K.Key_Right],
            lambda: self.curation.adjust(1, 0),
        )
        self.act_next = self.key_action(
            "Next mention", [K.Key_Tab, K.Key_J], lambda: self.document.step_mention(1)
        )
        self.act_prev = self.key_action(
            "Previous mention", [K.Key_Backtab, K.Key_K], lambda: self.document.step_mention(-1)
        )
        self.act_next_doc = self.key_action(
            "Next document", ["Ctrl+Down", K.Key_PageDown], lambda: self._step_document(1)
        )
        self.act_prev_doc = self.key_action(
            "Previous document", ["Ctrl+Up", K.Key_PageUp], lambda: self._step_document(-1)
        )
        self.act_undo = self.key_action("Undo", ["Ctrl+Z"], self.saving.undo)
        self.act_redo = self.key_action("Redo", ["Ctrl+Shift+Z", "Ctrl+Y"], self.saving.redo)
        self.undo_stack.canUndoChanged.connect(self.act_undo.setEnabled)
        self.undo_stack.canRedoChanged.connect(self.act_redo.setEnabled)
        self.undo_stack.undoTextChanged.connect(lambda t: self._history_text(self.act_undo, "Undo", t))
        self.undo_stack.redoTextChanged.connect(lambda t: self._history_text(self.act_redo, "Redo", t))
        self.act_undo.setEnabled(False)
        self.act_redo.setEnabled(False)
        self.act_bulk = self.key_action("Bulk accept…", ["Ctrl+B"], self.curation.bulk_accept_dialog)
        self.act_help = self.key_action("Keyboard help", [K.Key_F1, K.Key_Question], self.help_overlay.toggle)
        self.act_link = self.key_action(
            "Link unsuggested documents", ["Ctrl+L"], self.links.link_all_unsuggested
        )
        self.act_find = self.key_action(
            "Find mentions in this document", ["Ctrl+Shift+M"], self.detect.find_mentions_here
        )
        self.act_find_raw = self.key_action(
            "Find mentions in every document without any", [], self.detect.find_mentions_in_raw
        )

    def _step_document(self, offset: int) -> None:
        """Ctrl+Down / Ctrl+Up; at either end of the queue the status bar says so (a key never does
        nothing unseen)."""
        if not self.document.step_document(offset):
            where = "last" if offset > 0 else "first"
            self.statusBar().showMessage(f"this is the {where} document the queue shows", 4000)

    @staticmethod
    def _history_text(action: QAction, verb: str, label: str) -> None:
        """“Undo accept “HD” → D006816 Huntington Disease in 123”: the menu says what the key will do (a
        long label is cut in the menu, whole in the tip and the status bar)."""
        shown = label if len(label) <= 80 else label[:79] + "…"
        action.setText(f"{verb} {shown}".strip())
        action.setStatusTip(f"{verb} {label}".strip() if label else f"nothing to {verb.lower()}")
        action.setToolTip(action.statusTip())

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        self.files.build_menu(file_menu)
        fetch_pubmed = install_fetch_pubmed(self, file_menu)  # abstracts by PMID (issue 23)
        edit = bar.addMenu("&Edit")
        edit.addActions([self.act_undo, self.act_redo])
        edit.addSeparator()
        edit.addAction(self.act_bulk)
        self.act_settings = self.key_action("Settings…", ["Ctrl+,"], self.files.open_settings)
        edit.addAction(self.act_settings)
        curate = bar.addMenu("&Curate")
        curate.addActions(
            [self.act_accept, self.act_reject, self.act_nil, self.act_ambiguous, self.act_search]
        )
        curate.addSeparator()
        curate.addActions([self.act_mark[0], self.act_clear_marks])
        curate.addSeparator()
        curate.addActions(
            [self.act_add, self.act_delete, self.act_type, self.act_end_left, self.act_end_right]
        )
        curate.addActions([self.act_start_left, self.act_start_right])
        curate.addSeparator()
        curate.addActions([self.act_next, self.act_prev, self.act_next_doc, self.act_prev_doc, self.act_link])
        curate.addActions([self.act_find, self.act_find_raw])
        self.extras.install(curate)  # notes, flags, identical mentions, word edges, undo history
        from app.gui.adjudication import open_adjudication  # learning from curators (issue 6)
        from app.gui.retrain_dialog import open_retrain

        curate.addSeparator()
        curate.addAction(self.key_action("Retrain…", [], lambda: open_retrain(self)))
        curate.addAction(self.key_action("Adjudicate…", [], lambda: open_adjudication(self)))
        curator = install_curator(self, curate)  # who decides (issue 23)
        learnt = install_learnt(self, curate)  # what it learnt from curators (issue 23)
        self.menus = MenuActions(fetch_pubmed, curator, learnt)
        self.view.build_menu(bar.addMenu("&View"))
        help_menu = bar.addMenu("&Help")
        help_menu.addAction(self.act_help)

    def theme_changed(self) -> None:
        """app.gui.theme's hook on each top-level window: redraw what the old theme's colours painted."""
        self.view.theme_changed()

    def _escape(self) -> None:
        """Esc closes the key help when it is open (the window shortcut sees the key first), else
        clears the marked candidates."""
        if self.help_overlay.isVisible():
            self.help_overlay.hide()
        else:
            self.curation.clear_marks()

    # --- lifecycle -------------------------------------------------------------------------------

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not getattr(self, "_sized", False):
            self._sized = True
            width = max(self.width() - 24, 900)
            self.splitter.setSizes([int(width * share) for share in PANE_SHARES])
            restore_panes(self.splitter, self.settings)  # as the curator last left them, if ever

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.help_overlay.fit()  # shown or not: its sheet wraps to the window's width

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.saving.close_guard(event):
            return
        remember_window(self, self.splitter, self.settings)
        self.retrain.stop_retrain()
        self.watch.stop_watching()  # a closed desk no longer looks at the project (it may be moved next)
        self.service.shutdown()
        self.watch.queue_generation += 1  # a queue read under way is dropped
        if self in OPEN_WINDOWS:
            QTimer.singleShot(0, lambda: OPEN_WINDOWS.remove(self) if self in OPEN_WINDOWS else None)
        super().closeEvent(event)
