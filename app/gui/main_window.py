"""The curator's desk: queue on the left, the abstract in the middle, candidates and concept on the right."""

from __future__ import annotations

import html
import logging

from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
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
from app.gui.actions import DeskHistory
from app.gui.candidate_panel import CandidatePanel, order_source
from app.gui.concept_pane import ConceptPane
from app.gui.desk_curation import CurationMixin
from app.gui.desk_detect import FindMentionsMixin
from app.gui.desk_document import OpenDocumentMixin
from app.gui.desk_files import ProjectFilesMixin
from app.gui.desk_linking import BackgroundLinkingMixin
from app.gui.desk_retrain import BackgroundRetrainMixin
from app.gui.desk_saving import SavingMixin
from app.gui.desk_view import DeskViewMixin
from app.gui.desk_watch import ProjectWatchMixin
from app.gui.dialogs import KeyHelpOverlay, show_error
from app.gui.document_queue import DocumentQueue
from app.gui.kb_search import KbSearchDialog
from app.gui.settings import AppSettings
from app.gui.states import (
    STATE_COLOURS,
    STATE_LABELS,
    detected_probability,
    legend_html,
    mention_state,
    muted,
    uncertain_span,
)
from app.gui.workers import MODELS_LOADING, MODELS_NOT_LOADED, Job, LinkService
from core.documents import Candidate, Document
from core.errors import CuralinkError
from core.kb.concept import Concept
from core.store.curation_log import MentionKey
from core.store.write_faults import StoreWriteError, WriteFault

log = logging.getLogger(__name__)

OPEN_WINDOWS: list[MainWindow] = []
# Splitter shares of the window width: queue, abstract, candidates.
PANE_SHARES = (0.26, 0.31, 0.43)


class MainWindow(
    QMainWindow,
    OpenDocumentMixin,
    CurationMixin,
    SavingMixin,
    BackgroundLinkingMixin,
    FindMentionsMixin,
    BackgroundRetrainMixin,
    ProjectFilesMixin,
    ProjectWatchMixin,
    DeskViewMixin,
):
    """The window and its reading side (queue, abstract, candidates); the open document's state is read in
    `OpenDocumentMixin`, the curation keys live in `CurationMixin`, writes in `SavingMixin`, background linking in `BackgroundLinkingMixin`, the menus in
    `ProjectFilesMixin`, re-reading what other processes wrote in `ProjectWatchMixin`, the View menu and
    remembered view in `DeskViewMixin`."""

    def __init__(self, project, settings: AppSettings | None = None, *, background: bool = True):
        super().__init__()
        self.project = project
        self.settings = settings or AppSettings()
        self.background = background
        self.undo_stack = DeskHistory(self)  # the project's undo history as the store last reported it
        self.last_changes = None  # the OpChanges of the newest operation the desk saw through
        self.service = LinkService(
            project,
            device=self.settings.device,
            candidates=self.settings.candidates,
            use_reranker=self.settings.use_reranker,
        )
        if self.service.in_thread:  # the linker shares this process: import its stack before input
            from core.jobs.linking import warm_imports

            warm_imports()
        self.service.chunkLinked.connect(self._on_chunk)
        self.service.linkerReady.connect(self._on_linker_ready)
        self.service.learned.connect(self.on_learned)
        self.service.failed.connect(lambda exc: show_error(self, exc, context="background linking"))
        self._connect_find_mentions()
        self.doc: Document | None = None
        self.mention_ids: list[int] = []
        self.suggestions: dict[int, list[Candidate]] = {}
        self.suggested_for: dict[int, MentionKey] = {}  # the span and type the suggestions are for
        self.resuggesting: set[int] = set()  # edited mentions waiting for new suggestions
        self.marked: list[str] = []  # candidates marked for one link to several concepts
        self.marked_mention: int | None = None
        self.searched_marks: set[str] = set()  # marked from the KB search (Ctrl+Enter), not candidates
        self.decisions: dict = {}
        self.current: int | None = None
        self.concepts: dict[str, Concept | None] = {}
        self.linking: set[str] = set()
        self.kb_dialog: KbSearchDialog | None = None
        self.active_job: Job | None = None
        self.menu_job: Job | None = None
        self.menu_dialog = None
        self.reranker_version = ""
        self.retriever_version = ""
        self.ranker_version = ""

        self.setWindowTitle(f"Curalink — {project.path.name}")
        self._build_widgets()
        self._build_actions()
        self._build_menus()
        self._update_models_label()
        self.reload_queue()
        self.restore_view()  # the filters, order and document last left in this project
        self._import_reranker_code()
        self.start_watching()
        if self.background and not self.service.busy():
            self.device_label.setText(MODELS_LOADING)
            self.service.preload()  # the KB search index is built once it is ready (desk_linking)
        OPEN_WINDOWS.append(self)

    def _import_reranker_code(self) -> None:
        """Import the reranker's model code now, before the window takes input: done in the worker, the
        import froze the event loop for 266-314 ms (it holds the GIL); the weights then load in the
        background with stalls under 10 ms. Costs ~2 s of start-up, once per process and architecture."""
        ranked = self.project.active_model("reranker") if self.settings.use_reranker else None
        if ranked is None or not self.service.in_thread:  # a linking process imports it there
            return
        from core.jobs.linking import preload_architecture

        try:
            preload_architecture(ranked.path)
        except CuralinkError as exc:  # the worker reports the broken model properly when it loads it
            log.warning("reranker %s: %s", ranked.version, exc)

    # --- layout ----------------------------------------------------------------------------------

    def _build_widgets(self) -> None:
        self.queue = DocumentQueue()
        self.queue.documentActivated.connect(self.open_document)
        self.abstract = AbstractView()
        self.abstract.mentionClicked.connect(self.select_mention)
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
        self.candidates.candidateActivated.connect(lambda row: self.accept_rank(row + 1))
        self.candidates.markToggled.connect(lambda row: self.toggle_mark(row + 1))
        self.candidates.candidateSelected.connect(self._show_candidate_concept)
        self.concept = ConceptPane(names=self._concept_name)
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
        self.setCentralWidget(self._with_save_bar(self.splitter))
        self.help_overlay = KeyHelpOverlay(self)

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
        self.job_cancel.clicked.connect(self.cancel_job)
        for widget in (self.device_label, self.models_label, self.kb_label):
            bar.addPermanentWidget(widget)
        bar.addWidget(self.job_progress)
        bar.addWidget(self.job_cancel)
        self.resize(QSize(1500, 880))

    def _action(self, text: str, keys: list, slot, *, menu=None, tip: str = "") -> QAction:
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
        way to reopen it (ProjectWatchMixin), never raised into the event loop."""
        try:
            slot()
        except StoreWriteError as exc:
            if exc.fault is not WriteFault.GONE:
                raise
            self.project_lost()

    def _build_actions(self) -> None:
        K = Qt.Key
        M = Qt.KeyboardModifier
        self.act_accept = self._action(
            "Accept top (or marked) candidates", [K.Key_Return, K.Key_Enter], self.accept_top
        )
        self.act_rank = [
            self._action(f"Accept candidate {n}", [getattr(K, f"Key_{n}")], lambda n=n: self.accept_rank(n))
            for n in range(1, 10)
        ]
        self.act_mark = [
            self._action(f"Mark candidate {n}", [f"Ctrl+{n}"], lambda n=n: self.toggle_mark(n))
            for n in range(1, 10)
        ]
        self.act_clear_marks = self._action("Clear marks", [K.Key_Escape], self._escape)
        self.act_type = self._action("Change type…", [K.Key_T], self.change_type)
        self.act_reject = self._action("Reject", [K.Key_R], lambda: self.decide("reject"))
        self.act_nil = self._action("Not in KB", [K.Key_N], lambda: self.decide("nil"))
        self.act_ambiguous = self._action("Ambiguous", [K.Key_A], lambda: self.decide("ambiguous"))
        self.act_search = self._action("Search the KB…", ["Ctrl+F", K.Key_Slash], self.open_kb_search)
        self.act_add = self._action("Add mention from selection", [K.Key_M, K.Key_Insert], self.add_mention)
        self.act_delete = self._action("Delete mention", [K.Key_Delete], self.delete_mention)
        self.act_end_left = self._action(
            "Shrink end", [M.ShiftModifier | K.Key_Left], lambda: self.adjust(0, -1)
        )
        self.act_end_right = self._action(
            "Extend end", [M.ShiftModifier | K.Key_Right], lambda: self.adjust(0, 1)
        )
        self.act_start_left = self._action(
            "Extend start", [M.ControlModifier | M.ShiftModifier | K.Key_Left], lambda: self.adjust(-1, 0)
        )
        self.act_start_right = self._action(
            "Shrink start", [M.ControlModifier | M.ShiftModifier | K.Key_Right], lambda: self.adjust(1, 0)
        )
        self.act_next = self._action("Next mention", [K.Key_Tab, K.Key_J], lambda: self.step_mention(1))
        self.act_prev = self._action(
            "Previous mention", [K.Key_Backtab, K.Key_K], lambda: self.step_mention(-1)
        )
        self.act_next_doc = self._action(
            "Next document", ["Ctrl+Down", K.Key_PageDown], lambda: self.step_document(1)
        )
        self.act_prev_doc = self._action(
            "Previous document", ["Ctrl+Up", K.Key_PageUp], lambda: self.step_document(-1)
        )
        self.act_undo = self._action("Undo", ["Ctrl+Z"], self.undo)
        self.act_redo = self._action("Redo", ["Ctrl+Shift+Z", "Ctrl+Y"], self.redo)
        self.undo_stack.canUndoChanged.connect(self.act_undo.setEnabled)
        self.undo_stack.canRedoChanged.connect(self.act_redo.setEnabled)
        self.undo_stack.undoTextChanged.connect(lambda t: self._history_text(self.act_undo, "Undo", t))
        self.undo_stack.redoTextChanged.connect(lambda t: self._history_text(self.act_redo, "Redo", t))
        self.act_undo.setEnabled(False)
        self.act_redo.setEnabled(False)
        self.act_bulk = self._action("Bulk accept…", ["Ctrl+B"], self.bulk_accept_dialog)
        self.act_help = self._action("Keyboard help", [K.Key_F1, K.Key_Question], self.help_overlay.toggle)
        self.act_link = self._action("Link unsuggested documents", ["Ctrl+L"], self.link_all_unsuggested)
        self.act_find = self._action(
            "Find mentions in this document", ["Ctrl+Shift+M"], self.find_mentions_here
        )
        self.act_find_raw = self._action(
            "Find mentions in every document without any", [], self.find_mentions_in_raw
        )

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
        self._build_file_menu(file_menu)
        from app.gui.fetch_pubmed_dialog import install_fetch_pubmed  # abstracts by PMID (issue 23)

        install_fetch_pubmed(self, file_menu)
        edit = bar.addMenu("&Edit")
        edit.addActions([self.act_undo, self.act_redo])
        edit.addSeparator()
        edit.addAction(self.act_bulk)
        self.act_settings = self._action("Settings…", ["Ctrl+,"], self.open_settings)
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
        self._install_curator_extras(curate)  # notes, flags, identical mentions, word edges, undo history
        from app.gui.adjudication import open_adjudication  # learning from curators (issue 6)
        from app.gui.retrain_dialog import open_retrain

        curate.addSeparator()
        curate.addAction(self._action("Retrain…", [], lambda: open_retrain(self)))
        curate.addAction(self._action("Adjudicate…", [], lambda: open_adjudication(self)))
        from app.gui.curator_identity import install_curator  # who decides (issue 23)

        install_curator(self, curate)
        from app.gui.desk_learnt import install_learnt  # what it learnt from curators (issue 23)

        install_learnt(self, curate)
        self._build_view_menu(bar.addMenu("&View"))
        help_menu = bar.addMenu("&Help")
        help_menu.addAction(self.act_help)

    def _escape(self) -> None:
        """Esc closes the key help when it is open (the window shortcut sees the key first), else
        clears the marked candidates."""
        if self.help_overlay.isVisible():
            self.help_overlay.hide()
        else:
            self.clear_marks()

    # --- selection -------------------------------------------------------------------------------

    def current_mention_id(self) -> int | None:
        if self.current is None or not 0 <= self.current < len(self.mention_ids):
            return None
        return self.mention_ids[self.current]

    def select_mention(self, index: int | None) -> None:
        if self.doc is None or index is None or not self.mention_ids:
            self.current = None
            self.clear_marks()
            self.abstract.select_mention(None)
            self.candidates.clear("This document has no mentions. Select text and press M to add one.")
            self.concept.show_concept(None)
            return
        index = max(0, min(index, len(self.mention_ids) - 1))
        self.current = index
        self._show_marks()
        self.abstract.select_mention(index)
        mention = self.doc.mentions[index]
        mention_id = self.mention_ids[index]
        if mention_id != self.marked_mention:
            self.marked, self.marked_mention, self.searched_marks = [], mention_id, set()
        ranked = self.suggestions.get(mention_id, [])
        self.marked = [
            c for c in self.marked if c in self.searched_marks or any(r.concept_id == c for r in ranked)
        ]
        decision = self.decisions.get(mention_id)
        state = mention_state(decision.action if decision else None, bool(ranked))
        missing = [c.concept_id for c in ranked if c.concept_id not in self.concepts]
        if missing:
            self.concepts.update(self.project.concepts(missing))
        concepts = {c.concept_id: self._concept(c.concept_id) for c in ranked}
        linked = self.linked_ids(mention_id)
        label = (
            f"<b>{html.escape(mention.text)}</b> &nbsp;<span style='color:{muted()}'>{html.escape(mention.type)}"
            f" · mention {index + 1} of {len(self.mention_ids)} · "
            f"<span style='color:{STATE_COLOURS[state][1]}'>{STATE_LABELS[state]}</span>"
        )
        if decision is not None and decision.concept_id:
            label += f" → {html.escape(self._link_text(decision.concept_id))}"
        probability = detected_probability(mention, decision is not None)
        if probability is not None:
            label += f" · detected span p {probability:.2f}" + (
                " (uncertain)" if uncertain_span(probability) else ""
            )
        label += "</span>"
        if not ranked and mention_id in self.resuggesting:
            label += "<br><i>computing suggestions for the new span…</i>"
        elif not ranked and self.background:
            label += "<br><i>suggestions are being computed in the background…</i>"
        source = order_source(
            bool(self.ranker_version), bool(self.reranker_version) and self.settings.use_reranker
        )
        self.candidates.show_candidates(
            label, ranked, {k: v for k, v in concepts.items() if v}, linked, source, self.marked
        )
        if not ranked:  # no candidate row to follow: the linked concept, or nothing (never a stale one)
            self.concept.show_concept(self._concept(linked[0]) if linked else None)
        self.remember_view()

    def _show_candidate_concept(self, row: int) -> None:
        ranked = self.candidates.model.candidates
        if 0 <= row < len(ranked):
            self.concept.show_concept(self._concept(ranked[row].concept_id))

    def step_mention(self, offset: int) -> None:
        if self.mention_ids:
            start = -1 if self.current is None and offset > 0 else (self.current or 0)
            self.select_mention(max(0, min(start + offset, len(self.mention_ids) - 1)))

    def step_document(self, offset: int) -> None:
        target = self.queue.step(offset)
        if target:
            self.open_document(target)

    # --- lifecycle -------------------------------------------------------------------------------

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not getattr(self, "_sized", False):
            self._sized = True
            width = max(self.width() - 24, 900)
            self.splitter.setSizes([int(width * share) for share in PANE_SHARES])

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.help_overlay.isVisible():
            self.help_overlay.setGeometry(self.rect())

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._close_guard(event):
            return
        self.stop_retrain()
        self.stop_watching()  # a closed desk no longer looks at the project (it may be moved next)
        self.service.shutdown()
        self.queue_generation = getattr(self, "queue_generation", 0) + 1  # a queue read under way is dropped
        if self in OPEN_WINDOWS:
            QTimer.singleShot(0, lambda: OPEN_WINDOWS.remove(self) if self in OPEN_WINDOWS else None)
        super().closeEvent(event)
