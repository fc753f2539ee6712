"""The open document and its queue rows: reading them from the store, and re-reading only what a write
changed (a decision re-reads its mentions' state; other edits the document; the queue its rows)."""

from __future__ import annotations

import gc
import html
import logging
from collections.abc import Callable

from PySide6.QtWidgets import QLabel

from app.gui.abstract_view import AbstractView, MentionMark
from app.gui.candidate_panel import CandidatePanel, order_source
from app.gui.concept_pane import ConceptPane
from app.gui.desk_changes import Shown
from app.gui.desk_history import DeskHistory
from app.gui.desk_linking import BackgroundLinking
from app.gui.desk_marks import CurationMarks
from app.gui.desk_model import DeskModel
from app.gui.document_queue import DocumentQueue
from app.gui.settings import AppSettings
from app.gui.states import (
    STATE_COLOURS,
    STATE_LABELS,
    detected_probability,
    mention_state,
    muted,
    uncertain_span,
)
from core.jobs.curation import operations as curation
from core.store.op_changes import OpChanges

log = logging.getLogger(__name__)

def settle_memory() -> None:
    """Exempt what the desk holds now (every queue row, the loaded modules, Qt's wrappers) from Python's
    cyclic garbage collector: at 20,000 documents each full collection walked them all and froze the
    window, at moments of the collector's choosing (`gc.freeze`; objects are still freed when their last
    reference goes, only cycles among these are never collected). Garbage is collected first, so no dead
    cycle is kept; after the first freeze that collection walks only what is new."""
    gc.collect()
    gc.freeze()


class DocumentView:
    """The open document of `model` on screen: the queue's rows, the abstract with its highlights (and
    the notes and flags of `marks`), the candidates and concept panes; redrawn from what each operation
    changed. `links` links what is opened; `on_selected` follows every selection (the remembered view)."""

    def __init__(
        self,
        model: DeskModel,
        settings: AppSettings,
        *,
        queue: DocumentQueue,
        abstract: AbstractView,
        candidates: CandidatePanel,
        concept: ConceptPane,
        doc_meta: QLabel,
        marks: CurationMarks,
        links: BackgroundLinking,
        undo_stack: DeskHistory,
        on_selected: Callable[[], None],
    ):
        self.model, self.settings, self.project = model, settings, model.project
        self.queue, self.abstract, self.candidates, self.concept = queue, abstract, candidates, concept
        self.doc_meta, self.marks, self.links, self.undo_stack = doc_meta, marks, links, undo_stack
        self.on_selected = on_selected
        # looked up at each activation (not bound now), as the window's own slot was: tests replace it
        queue.documentActivated.connect(lambda doc_id: self.open_document(doc_id))
        abstract.mentionClicked.connect(self.select_mention)
        candidates.candidateSelected.connect(self._show_candidate_concept)

    def reload_queue(self) -> None:
        self.queue.set_entries(self.project.desk.queue(), self.project.desk.document_facets())
        self.queue.set_marked(self.project.marks.noted_or_flagged())  # the "flagged or noted" filter
        settle_memory()

    def open_document(self, doc_id: str, *, mention_id: int | None = None) -> None:
        """Show a document. The log names each one opened: what a session stored can be checked against
        what the curator had on screen (`curalink bench desk-opened`)."""
        if not self.model.open(doc_id):
            return
        log.info("desk opened document %s", doc_id)
        self.abstract.set_document(self.model.doc, self._marks())
        self.queue.hold(doc_id)  # shown, and kept in its place, while it is open
        self.queue.select(doc_id, emit=False)
        entry = self.queue.entry(doc_id)
        self._update_doc_meta(entry)
        if mention_id in self.model.mention_ids:
            self.select_mention(self.model.mention_ids.index(mention_id))
        else:
            self.select_mention(self.model.first_open_mention())
        self.links.prefetch()

    def _update_doc_meta(self, entry) -> None:
        if self.model.doc is None:
            return
        reviewed = sum(1 for m in self.model.mention_ids if m in self.model.decisions)
        waiting = sum(1 for m in self.model.mention_ids if not self.model.suggestions.get(m))
        text = f"{self.model.doc.doc_id} · {len(self.model.mention_ids)} mentions · {reviewed} reviewed"
        if waiting:
            text += f" · {waiting} waiting for suggestions"
        self.doc_meta.setText(text)

    def _marks(self, *, reread: bool = True) -> list[MentionMark]:
        """The highlights of the open document; `reread` reads its notes and flags again."""
        assert self.model.doc is not None
        marks = []
        for mention, mention_id in zip(self.model.doc.mentions, self.model.mention_ids, strict=True):
            decision = self.model.decisions.get(mention_id)
            ranked = self.model.suggestions.get(mention_id, [])
            state = mention_state(decision.action if decision else None, bool(ranked))
            concept = ""
            if decision is not None and decision.concept_id:
                concept = self.model.link_text(decision.concept_id)
            elif ranked:
                concept = f"top: {ranked[0].concept_id} {ranked[0].name}"
            marks.append(
                MentionMark(
                    mention.start,
                    mention.end,
                    mention.text,
                    mention.type,
                    state,
                    concept,
                    probability=detected_probability(mention, decision is not None),
                )
            )
        return self.marks.put_on(marks, reread=reread)

    def redraw_document(self, select: int | None) -> None:
        """The open document's highlights and counts again (its suggestions changed), then a mention."""
        self.abstract.set_marks(self._marks())
        self._update_doc_meta(None)
        self.select_mention(select)

    def refresh(self, mention_id: int | None = None) -> None:
        """Re-read the whole queue and the open document (after a change from outside the desk's own
        operations: adjudication, a discarded write); keep (or move to) the given mention."""
        keep = mention_id if mention_id is not None else self.model.current_mention_id()
        self.reload_queue()
        self.undo_stack.set(
            curation.history_of(self.project, self.settings.curator)
        )  # the curator may be new
        if self.model.doc is not None:
            self.open_document(self.model.doc.doc_id, mention_id=keep)

    def take(self, shown: Shown) -> None:
        """The desk's change signal (app/gui/desk_changes.py): one redraw per operation."""
        self.show_changes(shown.changes, navigate=shown.navigate, follow=shown.follow, advance=shown.advance)

    def show_changes(
        self, changes: OpChanges, *, navigate: bool = False, follow: bool = True, advance: bool = False
    ) -> None:
        """Redraw what one curation operation changed, from its `OpChanges` alone: the queue rows, and the
        open document's decisions (nothing is read for a decision). An edit of the open document's
        mentions reads that document again; a note or mark re-reads its marks. `navigate` (an undo or
        redo) opens the document and selects the mention it changed; `follow` is False for a change saved
        late, which must not pull the selection from where the curator has moved on to; `advance` (a
        decision) selects the next undecided mention in the same redraw. The undo history is redrawn by
        its own subscriber."""
        if changes.queue and not self.queue.update_entries(list(changes.queue), changes.facets):
            self.reload_queue()
        if changes.marks:  # a note or flag set or cleared: the "flagged or noted" filter follows
            documents = set(changes.marks)
            self.queue.set_marked(self.project.marks.noted_or_flagged(list(documents)), documents)
        redraw = self.model.apply(changes, navigate=navigate, follow=follow, advance=advance)
        if redraw.open is not None:
            self.open_document(redraw.open[0], mention_id=redraw.open[1])
        elif redraw.changed:
            self.abstract.set_marks(self._marks(reread=redraw.reread_marks))
            self._update_doc_meta(self.queue.entry(self.model.doc.doc_id))
            self.select_mention(redraw.select)

    # --- selection -------------------------------------------------------------------------------

    def select_mention(self, index: int | None) -> None:
        index = self.model.select(index)
        if self.model.released:  # suggestions held back while the mention left was selected
            self.abstract.set_marks(self._marks(reread=False))
            self.model.released = []
        if index is None:
            self.candidates.set_marked([])
            self.abstract.select_mention(None)
            self.candidates.clear("This document has no mentions. Select text and press M to add one.")
            self.concept.show_concept(None)
            return
        self.marks.show_strip()
        self.abstract.select_mention(index)
        mention = self.model.doc.mentions[index]
        mention_id = self.model.mention_ids[index]
        ranked = self.model.suggestions.get(mention_id, [])
        decision = self.model.decisions.get(mention_id)
        state = mention_state(decision.action if decision else None, bool(ranked))
        concepts = {c.concept_id: self.model.concept(c.concept_id) for c in ranked}
        linked = self.model.linked_ids(mention_id)
        label = (
            f"<b>{html.escape(mention.text)}</b> &nbsp;<span style='color:{muted()}'>{html.escape(mention.type)}"
            f" · mention {index + 1} of {len(self.model.mention_ids)} · "
            f"<span style='color:{STATE_COLOURS[state][1]}'>{STATE_LABELS[state]}</span>"
        )
        if decision is not None and decision.concept_id:
            label += f" → {html.escape(self.model.link_text(decision.concept_id))}"
        probability = detected_probability(mention, decision is not None)
        if probability is not None:
            label += f" · detected span p {probability:.2f}" + (
                " (uncertain)" if uncertain_span(probability) else ""
            )
        label += "</span>"
        if mention_id in self.model.deferred:  # kept as read: a number key picks what is on screen
            label += "<br><i>new suggestions arrived for this mention: they show once you leave it</i>"
        if not ranked and mention_id in self.model.resuggesting:
            label += "<br><i>computing suggestions for the new span…</i>"
        elif not ranked and self.links.background:
            label += "<br><i>suggestions are being computed in the background…</i>"
        source = order_source(
            bool(self.links.ranker_version), bool(self.links.reranker_version) and self.settings.use_reranker
        )
        self.candidates.show_candidates(
            label, ranked, {k: v for k, v in concepts.items() if v}, linked, source, self.model.marked
        )
        if not ranked:  # no candidate row to follow: the linked concept, or nothing (never a stale one)
            self.concept.show_concept(self.model.concept(linked[0]) if linked else None)
        self.on_selected()

    def _show_candidate_concept(self, row: int) -> None:
        ranked = self.candidates.model.candidates
        if 0 <= row < len(ranked):
            self.concept.show_concept(self.model.concept(ranked[row].concept_id))

    def step_mention(self, offset: int) -> None:
        if self.model.mention_ids:
            start = -1 if self.model.current is None and offset > 0 else (self.model.current or 0)
            self.select_mention(max(0, min(start + offset, len(self.model.mention_ids) - 1)))

    def step_document(self, offset: int) -> bool:
        """The next (previous) document in the order on screen; False at either end of the queue."""
        target = self.queue.step(offset)
        if target:
            self.open_document(target)
        return bool(target)
