"""The curator's desk: queue on the left, the abstract in the middle, candidates and concept on the right."""

from __future__ import annotations

import html
import logging
from collections import Counter
from pathlib import Path

from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QUndoStack
from PySide6.QtWidgets import (
    QFileDialog,
    QLabel,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.gui.abstract_view import AbstractView, MentionMark
from app.gui.actions import (
    AddMentionCommand,
    AdjustSpanCommand,
    BulkAcceptCommand,
    DecisionCommand,
    DeleteMentionCommand,
    DeskContext,
)
from app.gui.candidate_panel import CandidatePanel
from app.gui.concept_pane import ConceptPane
from app.gui.dialogs import (
    BulkAcceptDialog,
    ExportDialog,
    ImportCorpusDialog,
    ImportKbDialog,
    KeyHelpOverlay,
    SettingsDialog,
    progress_for,
    show_error,
)
from app.gui.document_queue import DocumentQueue
from app.gui.kb_search import KbSearchDialog
from app.gui.settings import AppSettings
from app.gui.states import STATE_COLOURS, STATE_LABELS, mention_state
from app.gui.workers import Job, LinkedChunk, LinkService, run_in_thread, warm_imports
from core.documents import Candidate, Document
from core.errors import CuralinkError
from core.kb.concept import Concept

log = logging.getLogger(__name__)

OPEN_WINDOWS: list[MainWindow] = []
MODELS_NOT_LOADED = "models: load on first use"
MODELS_LOADING = "models: loading…"
LEGEND_STATES = ("suggested", "accepted", "corrected", "rejected", "nil", "ambiguous", "unsuggested")
# Splitter shares of the window width: queue, abstract, candidates.
PANE_SHARES = (0.26, 0.31, 0.43)


def legend_html() -> str:
    """State chips as non-breaking coloured spans, so the label wraps between chips, not inside one."""
    chips = []
    for state in LEGEND_STATES:
        fill, strong = STATE_COLOURS[state]
        label = html.escape(STATE_LABELS[state]).replace(" ", "&nbsp;")
        chips.append(
            f"<span style='background-color:{fill}; color:#1d2430'>&nbsp;"
            f"<span style='color:{strong}'>&#9632;</span>&nbsp;{label}&nbsp;</span>"
        )
    chips.append(
        "<span style='color:#5f6b7a'><u>underlined</u>&nbsp;=&nbsp;nested&nbsp;/&nbsp;overlapping</span>"
    )
    return " &nbsp; ".join(chips)


class MainWindow(QMainWindow):
    def __init__(self, project, settings: AppSettings | None = None, *, background: bool = True):
        super().__init__()
        warm_imports()
        self.project = project
        self.settings = settings or AppSettings()
        self.background = background
        self.undo_stack = QUndoStack(self)
        self.context = DeskContext(project, lambda: self.settings.curator, self.refresh)
        self.service = LinkService(
            project,
            device=self.settings.device,
            candidates=self.settings.candidates,
            use_reranker=self.settings.use_reranker,
        )
        self.service.chunkLinked.connect(self._on_chunk)
        self.service.linkerReady.connect(self._on_linker_ready)
        self.service.failed.connect(lambda exc: show_error(self, exc, context="background linking"))
        self.doc: Document | None = None
        self.mention_ids: list[int] = []
        self.suggestions: dict[int, list[Candidate]] = {}
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

        self.setWindowTitle(f"Curalink — {project.path.name}")
        self._build_widgets()
        self._build_actions()
        self._build_menus()
        self._update_models_label()
        self.reload_queue()
        first = self.queue.visible_ids()
        if first:
            self.open_document(first[0])
        self._import_reranker_code()
        if self.background and not self.service.busy():
            self.device_label.setText(MODELS_LOADING)
            self.service.preload()
        OPEN_WINDOWS.append(self)

    def _import_reranker_code(self) -> None:
        """Import the reranker's model code now, before the window takes input: done in the worker, the
        import froze the event loop for 266-314 ms (it holds the GIL); the weights then load in the
        background with stalls under 10 ms. Costs ~2 s of start-up, once per process and architecture."""
        ranked = self.project.active_model("reranker") if self.settings.use_reranker else None
        if ranked is None:
            return
        from core.rerank.cross_encoder import preload_architecture

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
        self.candidates.candidateSelected.connect(self._show_candidate_concept)
        self.concept = ConceptPane()
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
        self.setCentralWidget(self.splitter)
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
        action.triggered.connect(lambda _checked=False: slot())
        if tip:
            action.setStatusTip(tip)
        self.addAction(action)
        return action

    def _build_actions(self) -> None:
        K = Qt.Key
        M = Qt.KeyboardModifier
        self.act_accept = self._action(
            "Accept top candidate", [K.Key_Return, K.Key_Enter], lambda: self.accept_rank(1)
        )
        self.act_rank = [
            self._action(f"Accept candidate {n}", [getattr(K, f"Key_{n}")], lambda n=n: self.accept_rank(n))
            for n in range(1, 10)
        ]
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
        self.act_undo = self._action("Undo", ["Ctrl+Z"], self.undo_stack.undo)
        self.act_redo = self._action("Redo", ["Ctrl+Shift+Z", "Ctrl+Y"], self.undo_stack.redo)
        self.undo_stack.canUndoChanged.connect(self.act_undo.setEnabled)
        self.undo_stack.canRedoChanged.connect(self.act_redo.setEnabled)
        self.undo_stack.undoTextChanged.connect(lambda t: self.act_undo.setText(f"Undo {t}".strip()))
        self.undo_stack.redoTextChanged.connect(lambda t: self.act_redo.setText(f"Redo {t}".strip()))
        self.act_undo.setEnabled(False)
        self.act_redo.setEnabled(False)
        self.act_bulk = self._action("Bulk accept…", ["Ctrl+B"], self.bulk_accept_dialog)
        self.act_help = self._action("Keyboard help", [K.Key_F1, K.Key_Question], self.help_overlay.toggle)
        self.act_link = self._action("Link unsuggested documents", ["Ctrl+L"], self.link_all_unsuggested)

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addAction(self._action("New project…", ["Ctrl+N"], self.new_project))
        file_menu.addAction(self._action("Open project…", ["Ctrl+O"], self.open_project))
        file_menu.addSeparator()
        self.act_import_corpus = self._action("Import corpus…", ["Ctrl+I"], self.import_corpus)
        self.act_import_kb = self._action("Import knowledge base…", ["Ctrl+Shift+I"], self.import_kb)
        self.act_export = self._action("Export…", ["Ctrl+E"], self.export)
        file_menu.addActions([self.act_import_corpus, self.act_import_kb, self.act_export])
        file_menu.addSeparator()
        file_menu.addAction(self._action("Quit", ["Ctrl+Q"], self.close))
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
        curate.addActions([self.act_add, self.act_delete, self.act_end_left, self.act_end_right])
        curate.addActions([self.act_start_left, self.act_start_right])
        curate.addSeparator()
        curate.addActions([self.act_next, self.act_prev, self.act_next_doc, self.act_prev_doc, self.act_link])
        from app.gui.adjudication import open_adjudication  # learning from curators (issue 6)
        from app.gui.retrain_dialog import open_retrain

        curate.addSeparator()
        curate.addAction(self._action("Retrain…", [], lambda: open_retrain(self)))
        curate.addAction(self._action("Adjudicate…", [], lambda: open_adjudication(self)))
        help_menu = bar.addMenu("&Help")
        help_menu.addAction(self.act_help)

    # --- loading ---------------------------------------------------------------------------------

    def reload_queue(self) -> None:
        self.queue.set_entries(self.project.queue())

    def open_document(self, doc_id: str, *, mention_id: int | None = None) -> None:
        found = list(self.project.documents_with_mention_ids(ids=[doc_id]))
        if not found:
            return
        self.doc, self.mention_ids = found[0]
        self.suggestions = self.project.suggestions_for(self.mention_ids)
        self.decisions = self.project.current_decisions(mention_ids=self.mention_ids)
        self.abstract.set_document(self.doc, self._marks())
        self.queue.select(doc_id, emit=False)
        entry = self.queue.entry(doc_id)
        self._update_doc_meta(entry)
        if mention_id in self.mention_ids:
            self.select_mention(self.mention_ids.index(mention_id))
        else:
            self.select_mention(self._first_open_mention())
        self.prefetch()

    def _update_doc_meta(self, entry) -> None:
        if self.doc is None:
            return
        reviewed = sum(1 for m in self.mention_ids if m in self.decisions)
        waiting = sum(1 for m in self.mention_ids if not self.suggestions.get(m))
        text = f"{self.doc.doc_id} · {len(self.mention_ids)} mentions · {reviewed} reviewed"
        if waiting:
            text += f" · {waiting} waiting for suggestions"
        self.doc_meta.setText(text)

    def _first_open_mention(self) -> int | None:
        for index, mention_id in enumerate(self.mention_ids):
            if mention_id not in self.decisions:
                return index
        return 0 if self.mention_ids else None

    def _marks(self) -> list[MentionMark]:
        assert self.doc is not None
        marks = []
        for mention, mention_id in zip(self.doc.mentions, self.mention_ids, strict=True):
            decision = self.decisions.get(mention_id)
            ranked = self.suggestions.get(mention_id, [])
            state = mention_state(decision.action if decision else None, bool(ranked))
            concept = ""
            if decision is not None and decision.concept_id:
                concept = f"{decision.concept_id} {self._concept_name(decision.concept_id)}"
            elif ranked:
                concept = f"top: {ranked[0].concept_id} {ranked[0].name}"
            marks.append(MentionMark(mention.start, mention.end, mention.text, mention.type, state, concept))
        return marks

    def refresh(self, mention_id: int | None = None) -> None:
        """Re-read the current document's state after a write; keep (or move to) the given mention."""
        keep = mention_id if mention_id is not None else self.current_mention_id()
        self.reload_queue()
        if self.doc is not None:
            self.open_document(self.doc.doc_id, mention_id=keep)

    def _concept(self, concept_id: str) -> Concept | None:
        if concept_id not in self.concepts:
            self.concepts[concept_id] = self.project.concept(concept_id)
        return self.concepts[concept_id]

    def _concept_name(self, concept_id: str) -> str:
        concept = self._concept(concept_id)
        return concept.preferred_name if concept else ""

    # --- selection -------------------------------------------------------------------------------

    def current_mention_id(self) -> int | None:
        if self.current is None or not 0 <= self.current < len(self.mention_ids):
            return None
        return self.mention_ids[self.current]

    def select_mention(self, index: int | None) -> None:
        if self.doc is None or index is None or not self.mention_ids:
            self.current = None
            self.abstract.select_mention(None)
            self.candidates.clear("This document has no mentions. Select text and press M to add one.")
            self.concept.show_concept(None)
            return
        index = max(0, min(index, len(self.mention_ids) - 1))
        self.current = index
        self.abstract.select_mention(index)
        mention = self.doc.mentions[index]
        mention_id = self.mention_ids[index]
        ranked = self.suggestions.get(mention_id, [])
        decision = self.decisions.get(mention_id)
        state = mention_state(decision.action if decision else None, bool(ranked))
        concepts = {c.concept_id: self._concept(c.concept_id) for c in ranked}
        chosen = decision.concept_id if decision is not None else ""
        label = (
            f"<b>{html.escape(mention.text)}</b> &nbsp;<span style='color:#666'>{html.escape(mention.type)}"
            f" · mention {index + 1} of {len(self.mention_ids)} · "
            f"<span style='color:{STATE_COLOURS[state][1]}'>{STATE_LABELS[state]}</span>"
        )
        if decision is not None and decision.concept_id:
            label += f" → {html.escape(decision.concept_id)} {html.escape(self._concept_name(decision.concept_id))}"
        label += "</span>"
        if not ranked:
            label += "<br><i>suggestions are being computed in the background…</i>" if self.background else ""
        reranker_trained = bool(self.reranker_version) and self.settings.use_reranker
        self.candidates.show_candidates(
            label, ranked, {k: v for k, v in concepts.items() if v}, chosen, reranker_trained
        )
        if not ranked and chosen:
            self.concept.show_concept(self._concept(chosen))

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

    # --- decisions -------------------------------------------------------------------------------

    def decide(self, action: str, concept_id: str = "", *, detail: dict | None = None) -> bool:
        mention_id = self.current_mention_id()
        if mention_id is None:
            self.statusBar().showMessage("no mention selected", 3000)
            return False
        version = self.project.suggestion_version(mention_id)
        text = f"{action} “{self.doc.mentions[self.current].text}”" + (
            f" → {concept_id}" if concept_id else ""
        )
        self.undo_stack.push(
            DecisionCommand(
                self.context,
                mention_id,
                action,
                concept_id=concept_id,
                model_version=version,
                detail=detail,
                text=text,
            )
        )
        self.statusBar().showMessage(f"saved: {text}", 4000)
        self._advance_after(mention_id)
        return True

    def _advance_after(self, mention_id: int) -> None:
        if mention_id in self.mention_ids:
            index = self.mention_ids.index(mention_id)
            for later in range(index + 1, len(self.mention_ids)):
                if self.mention_ids[later] not in self.decisions:
                    self.select_mention(later)
                    return
            self.select_mention(min(index + 1, len(self.mention_ids) - 1))

    def accept_rank(self, rank: int) -> bool:
        mention_id = self.current_mention_id()
        ranked = self.suggestions.get(mention_id, []) if mention_id is not None else []
        if not 1 <= rank <= len(ranked):
            self.statusBar().showMessage(f"no candidate {rank} for this mention", 3000)
            return False
        chosen = ranked[rank - 1]
        return self.decide(
            "accept", chosen.concept_id, detail={"rank": rank, "score": round(chosen.score, 4)}
        )

    def open_kb_search(self) -> KbSearchDialog | None:
        if self.current_mention_id() is None:
            self.statusBar().showMessage("select a mention first", 3000)
            return None
        assert self.doc is not None and self.current is not None
        mention_id = self.current_mention_id()
        self.kb_dialog = KbSearchDialog(self.project, self, initial=self.doc.mentions[self.current].text)
        self.kb_dialog.accepted.connect(lambda: self._kb_picked(mention_id))
        self.kb_dialog.open()
        return self.kb_dialog

    def _kb_picked(self, mention_id: int | None) -> None:
        if self.kb_dialog is None or not self.kb_dialog.chosen or mention_id not in self.mention_ids:
            return
        self.current = self.mention_ids.index(mention_id)
        self.decide("correct", self.kb_dialog.chosen, detail={"via": "kb search"})

    def add_mention(self) -> bool:
        span = self.abstract.selection_span()
        if self.doc is None or span is None:
            self.statusBar().showMessage("select some text first, then press M", 3000)
            return False
        types = Counter(m.type for m in self.doc.mentions if m.type)
        kind = types.most_common(1)[0][0] if types else ""
        command = AddMentionCommand(self.context, self.doc.doc_id, span[0], span[1], kind)
        self.undo_stack.push(command)
        self.abstract.select_text(span[1], span[1])
        self.statusBar().showMessage(f"added mention “{self.doc.text[span[0] : span[1]]}”", 4000)
        if command.mention_id is not None:
            self.prefetch(force=[self.doc.doc_id])
        return True

    def delete_mention(self) -> bool:
        mention_id = self.current_mention_id()
        if mention_id is None or self.doc is None or self.current is None:
            return False
        self.undo_stack.push(
            DeleteMentionCommand(self.context, mention_id, self.doc.mentions[self.current].text)
        )
        return True

    def adjust(self, start_delta: int, end_delta: int) -> bool:
        mention_id = self.current_mention_id()
        if mention_id is None or self.doc is None or self.current is None:
            return False
        mention = self.doc.mentions[self.current]
        new = (mention.start + start_delta, mention.end + end_delta)
        if not 0 <= new[0] < new[1] <= len(self.doc.text):
            return False
        self.undo_stack.push(AdjustSpanCommand(self.context, mention_id, (mention.start, mention.end), new))
        return True

    def bulk_accept(self, threshold: float, *, whole_queue: bool = False) -> int:
        """Accept the top suggestion of every undecided mention whose score reaches `threshold`."""
        if whole_queue:
            pairs = list(self.project.documents_with_mention_ids())
            ids = [m for _, mention_ids in pairs for m in mention_ids]
            ranked_by_id = self.project.suggestions_for(ids)
            decided = self.project.current_decisions(mention_ids=ids)
        else:
            ids, ranked_by_id, decided = self.mention_ids, self.suggestions, self.decisions
        accepts = []
        for mention_id in ids:
            ranked = ranked_by_id.get(mention_id) or []
            if mention_id in decided or not ranked or ranked[0].score < threshold:
                continue
            version = self.project.suggestion_version(mention_id)
            accepts.append((mention_id, ranked[0].concept_id, version, ranked[0].score))
        if accepts:
            self.undo_stack.push(BulkAcceptCommand(self.context, accepts, threshold))
        self.statusBar().showMessage(f"bulk-accepted {len(accepts)} suggestion(s) ≥ {threshold:.2f}", 5000)
        return len(accepts)

    def bulk_accept_dialog(self) -> None:
        dialog = BulkAcceptDialog(self)
        dialog.accepted.connect(
            lambda: self.bulk_accept(dialog.threshold.value(), whole_queue=dialog.whole_queue)
        )
        dialog.open()

    # --- background linking ----------------------------------------------------------------------

    def prefetch(self, *, force: list[str] | None = None) -> Job | None:
        """Link the current document and the next few in the queue that still lack suggestions."""
        if not self.background and not force:
            return None
        wanted: list[str] = list(force or [])
        ids = self.queue.visible_ids()
        current = self.doc.doc_id if self.doc else None
        start = ids.index(current) if current in ids else 0
        for doc_id in ids[start : start + 1 + self.settings.prefetch]:
            entry = self.queue.entry(doc_id)
            if entry is not None and entry.unsuggested and doc_id not in wanted:
                wanted.append(doc_id)
        wanted = [d for d in wanted if d not in self.linking]
        if not wanted:
            return None
        return self.link_documents(wanted)

    def link_documents(self, doc_ids: list[str]) -> Job:
        if self.device_label.text() == MODELS_NOT_LOADED:
            self.device_label.setText(MODELS_LOADING)
        self.linking.update(doc_ids)
        job = self.service.link(doc_ids, name=f"linking {len(doc_ids)} document(s)")
        self._track(job, f"linking {len(doc_ids)} document(s)")
        for signal in (job.signals.finished, job.signals.failed, job.signals.cancelled):
            signal.connect(lambda *_args, ids=tuple(doc_ids): self.linking.difference_update(ids))
        return job

    def link_all_unsuggested(self) -> Job | None:
        ids = [e.doc_id for e in self.queue.model.entries if e.unsuggested]
        return self.link_documents(ids) if ids else None

    def _on_chunk(self, chunk: LinkedChunk) -> None:
        """Show newly linked documents from what the worker read: no database query on the UI thread."""
        self.queue.set_entries(chunk.queue)
        for concept_id, concept in chunk.concepts.items():
            self.concepts.setdefault(concept_id, concept)
        if self.doc is None or self.doc.doc_id not in chunk.doc_ids:
            return
        fresh = {m: chunk.suggestions[m] for m in self.mention_ids if m in chunk.suggestions}
        if not fresh:
            return
        self.suggestions.update(fresh)
        keep = self.current
        self.abstract.set_marks(self._marks())
        self._update_doc_meta(None)
        self.select_mention(keep if keep is not None else self._first_open_mention())

    def _on_linker_ready(self, description: str) -> None:
        self.device_label.setText(description)

    def _update_models_label(self) -> None:
        retriever = self.project.active_model("retriever")
        reranker = self.project.active_model("reranker")
        self.retriever_version = retriever.version if retriever else ""
        self.reranker_version = reranker.version if reranker else ""
        self.models_label.setText(
            f"retriever {self.retriever_version or 'not trained'} · reranker {self.reranker_version or 'not trained'}"
        )
        stats = self.project.stats()
        self.kb_label.setText(f"KB {stats['concepts']:,} concepts / {stats['names']:,} names")

    def _track(self, job: Job, title: str) -> None:
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
        for signal in (job.signals.finished, job.signals.failed, job.signals.cancelled):
            signal.connect(on_end)

    def cancel_job(self) -> None:
        if self.active_job is not None:
            self.active_job.cancel()

    # --- menus -----------------------------------------------------------------------------------

    def _run_dialog_job(self, title: str, work, on_done) -> Job:
        job = run_in_thread(work, title)
        dialog = progress_for(self, job, title)
        job.signals.finished.connect(on_done)
        job.signals.failed.connect(lambda exc: show_error(self, exc, context=title))
        dialog.show()
        self.menu_job = job  # kept alive (and visible to tests) until the next menu job
        return job

    def import_corpus(self) -> ImportCorpusDialog:
        """File > Import corpus: the dialog asks for the file, `import_corpus_from` does the work."""
        dialog = ImportCorpusDialog(self)
        dialog.accepted.connect(
            lambda: self.import_corpus_from(dialog.path, dialog.fmt, dialog.split_box.currentText())
        )
        self.menu_dialog = dialog
        dialog.open()
        return dialog

    def import_corpus_from(self, path: Path, fmt: str, split: str = "") -> Job:
        def work(progress, cancel):
            from core.formats import read_corpus

            return self.project.import_documents(
                read_corpus(path, fmt),
                source=str(path),
                fmt=fmt,
                split=split,
                progress=progress,
                cancel=cancel,
            )

        def done(summary) -> None:
            self.statusBar().showMessage(
                f"{path.name}: {summary.added} documents added, {summary.skipped} skipped"
            )
            self.reload_queue()
            self.prefetch()

        return self._run_dialog_job(f"importing {path.name}", work, done)

    def import_kb(self) -> ImportKbDialog:
        dialog = ImportKbDialog(self)
        dialog.accepted.connect(lambda: self.import_kb_from(dialog.path, dialog.fmt))
        self.menu_dialog = dialog
        dialog.open()
        return dialog

    def import_kb_from(self, path: Path, fmt: str) -> Job:
        def work(progress, cancel):
            from core.kb import load_kb

            concepts = load_kb(path, fmt, progress=progress, cancel=cancel)
            return self.project.import_concepts(
                concepts, source=str(path), fmt=fmt, progress=progress, cancel=cancel
            )

        def done(summary) -> None:
            self.statusBar().showMessage(
                f"{path.name}: {summary.added} concepts, {summary.names} names added"
            )
            self.service.reset()
            self.device_label.setText(MODELS_NOT_LOADED)
            self.concepts.clear()
            self._update_models_label()

        return self._run_dialog_job(f"importing {path.name}", work, done)

    def export(self) -> ExportDialog:
        dialog = ExportDialog(self)
        dialog.accepted.connect(
            lambda: self.export_to(dialog.path, dialog.fmt, accepted_only=dialog.accepted_only.isChecked())
        )
        self.menu_dialog = dialog
        dialog.open()
        return dialog

    def export_to(self, path: Path, fmt: str, *, accepted_only: bool) -> Job:
        def work(progress, cancel):
            from core.formats import write_corpus
            from core.store.curation import curated_documents

            return write_corpus(curated_documents(self.project, accepted_only=accepted_only), path, fmt)

        return self._run_dialog_job(
            f"exporting {path.name}",
            work,
            lambda count: self.statusBar().showMessage(f"exported {count} documents to {path}", 6000),
        )

    def open_settings(self) -> SettingsDialog:
        dialog = SettingsDialog(self.settings, self)
        dialog.accepted.connect(lambda: self.apply_settings(dialog))
        self.menu_dialog = dialog
        dialog.open()
        return dialog

    def apply_settings(self, dialog: SettingsDialog) -> None:
        """Persist the dialog's values and reconfigure the linker (models reload on next use)."""
        dialog.save()
        before = (self.service.device, self.service.candidates, self.service.use_reranker)
        self.service.configure(
            device=self.settings.device,
            candidates=self.settings.candidates,
            use_reranker=self.settings.use_reranker,
        )
        if before != (self.service.device, self.service.candidates, self.service.use_reranker):
            self.device_label.setText(MODELS_NOT_LOADED)
        self.refresh()

    def new_project(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Folder for the new project")
        if folder:
            from core.store import Project

            try:
                self.switch_project(Project.create(Path(folder)))
            except Exception as exc:  # noqa: BLE001 - shown to the curator
                show_error(self, exc, context="new project")

    def open_project(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Open a Curalink project")
        if folder:
            from core.store import Project

            try:
                self.switch_project(Project.open(Path(folder)))
            except Exception as exc:  # noqa: BLE001 - shown to the curator
                show_error(self, exc, context="open project")

    def switch_project(self, project) -> MainWindow:
        from app.console import log_to_project

        log_to_project(project.path)
        self.settings.last_project = project.path
        window = MainWindow(project, self.settings, background=self.background)
        window.show()
        self.close()
        return window

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
        self.service.shutdown()
        if self in OPEN_WINDOWS:
            QTimer.singleShot(0, lambda: OPEN_WINDOWS.remove(self) if self in OPEN_WINDOWS else None)
        super().closeEvent(event)
