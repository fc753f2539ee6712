"""The desk's curation keys: decisions (one or several concepts per link), KB-search corrections, mention
edits that re-suggest at once, and bulk accept. Every write is one core curation operation
(core.jobs.curation.operations: one undoable step in the project's history) run through the desk's writer (`perform`,
app/gui/desk_saving.py); the window redraws from the OpChanges it returns.

A mention naming several concepts ("colorectal, endometrial, and ovarian cancers") is linked by marking
candidates (Ctrl+1-9, or the check boxes) or adding KB-search hits (Ctrl+Enter in the search), then
pressing Enter: nothing is stored while the link is being built. The mention keeps its one gold span: splitting it would break the span
that NCBI-disease-style corpora annotate and evaluate (one composite mention, `A|B|C`).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QInputDialog

from app.gui.abstract_view import AbstractView
from app.gui.bulk_accept_dialog import BulkAcceptDialog
from app.gui.candidate_panel import CandidatePanel
from app.gui.desk_host import DeskHost
from app.gui.desk_learnt import teaching_detail
from app.gui.desk_model import DeskModel
from app.gui.desk_saving import DeskSaving
from app.gui.kb_search import KbSearchDialog
from app.gui.queue_model import ALL
from core.jobs.curation.bulk_accept import BulkScale, QueueScope
from core.text.words import snap_to_words

# Decisions that act on the suggestions shown: the store refuses them once the mention has changed.
ON_SUGGESTIONS = ("accept", "reject")


class Curation:
    """The curation keys of the window (`host`): decisions and edits of the open document in `model`,
    built there and written through `saving`; the candidates pane shows the marks, the abstract the
    selection a new mention comes from. The curator extras of issue 12 are `CuratorExtras`."""

    def __init__(
        self,
        host: DeskHost,
        model: DeskModel,
        saving: DeskSaving,
        *,
        candidates: CandidatePanel,
        abstract: AbstractView,
        teaching_off: Callable[[], bool] = lambda: False,
    ):
        self.host, self.model, self.saving = host, model, saving
        self.teaching_off = teaching_off  # Curate ▸ Decide without teaching is checked
        self.project, self.candidates, self.abstract = model.project, candidates, abstract
        self.kb_dialog: KbSearchDialog | None = None

    # --- decisions -------------------------------------------------------------------------------

    def decide(
        self, action: str, concept_id: str = "", *, detail: dict | None = None, teach: bool = True
    ) -> bool:
        """One decision on the selected mention (DeskModel.decide), then on to the next undecided one, in
        the same redraw. `teach` False (Alt+Enter), or Curate ▸ Decide without teaching checked: the
        linker learns nothing from it."""
        mention_id = self.model.current_mention_id()
        if mention_id is None:
            self.host.statusBar().showMessage("no mention selected", 3000)
            return False
        detail = teaching_detail(detail, teach=teach and not self.teaching_off())
        if self.model.repeats_decision(mention_id, action, concept_id, self.model.curator(), detail):
            self.host.statusBar().showMessage(
                f"already decided: {self._decided_text(mention_id)}; nothing stored", 5000
            )
            following = self.model.next_after(mention_id)
            if following is not None:
                self.host.document.select_mention(following)
            return False
        op = self.model.decide(action, concept_id, detail=detail)
        outcome = self.saving.perform(op.label, op.run, advance=True)  # saved: redrawn at the next mention
        if outcome == "refused":
            return False
        if outcome == "saved":
            self.host.statusBar().showMessage(f"saved: {op.label}", 4000)
            return True
        # The save bar shows it until the store has it; the curator moves on meanwhile.
        self.host.statusBar().showMessage(f"waiting to save: {op.label}", 4000)
        following = self.model.next_after(mention_id)
        if following is not None:
            self.host.document.select_mention(following)
        return False

    def accept_rank(self, rank: int, *, teach: bool = True) -> bool:
        mention_id = self.model.current_mention_id()
        chosen = self.model.ranked()
        if not 1 <= rank <= len(chosen):
            waiting = mention_id in self.model.resuggesting
            self.host.statusBar().showMessage(
                "suggestions for the new span are on their way"
                if waiting
                else f"no candidate {rank} for this mention",
                3000,
            )
            return False
        candidate = chosen[rank - 1]
        return self.decide(
            "accept",
            candidate.concept_id,
            detail={"rank": rank, "score": round(candidate.score, 4)},
            teach=teach,
        )

    def accept_top(self, *, teach: bool = True) -> bool:
        """Enter: the marked candidates as one link when some are marked, else the top one. On a mention
        already decided Enter stores nothing: it moves to the next undecided one (a number key, R, N, A
        or Ctrl+F changes a decision, deliberately). `teach` False: Alt+Enter."""
        if self.model.marked:
            return self.accept_marked(teach=teach)
        mention_id = self.model.current_mention_id()
        if mention_id is not None and mention_id in self.model.decisions:
            self.skip_decided(mention_id)
            return False
        return self.accept_rank(1, teach=teach)

    def _decided_text(self, mention_id: int) -> str:
        """“HD” accept → D006816 Huntington Disease, as the status bar names a decision in force."""
        decision = self.model.decisions[mention_id]
        mention = self.model.doc.mentions[self.model.mention_ids.index(mention_id)]
        link = f" → {self.model.link_text(decision.concept_id)}" if decision.concept_id else ""
        return f"“{mention.text}” {decision.action}{link}"

    def skip_decided(self, mention_id: int) -> int | None:
        """Enter on a decided mention: on to the next undecided one (after it, else before it), said in
        the status bar; where none is left the selection stays and the status bar says how to go on."""
        following = self.model.next_undecided(mention_id)
        decided = self._decided_text(mention_id)
        if following is None:
            self.host.statusBar().showMessage(
                f"{decided} is decided, and so is every mention here: nothing stored. Ctrl+Down opens "
                "the next document; 1-9, R, N, A or Ctrl+F change this decision",
                8000,
            )
            return None
        self.host.document.select_mention(following)
        self.host.statusBar().showMessage(
            f"{decided} is already decided: nothing stored; Enter moved to the next undecided mention "
            "(1-9, R, N, A or Ctrl+F change a decision)",
            8000,
        )
        return following

    def toggle_mark(self, rank: int) -> bool:
        """Ctrl+n: mark or unmark candidate n for a link naming several concepts."""
        if not self.model.toggle_mark(rank):
            self.host.statusBar().showMessage(f"no candidate {rank} for this mention", 3000)
            return False
        marked = self.model.marked
        self.candidates.set_marked(marked)
        if marked:
            self.host.statusBar().showMessage(
                f"marked {' | '.join(marked)}: Enter links the mention to all of them, Esc clears", 6000
            )
        else:
            self.host.statusBar().clearMessage()
        return True

    def clear_marks(self) -> None:
        self.model.clear_marks()
        self.candidates.set_marked([])

    def accept_marked(self, *, teach: bool = True) -> bool:
        """Accept every marked candidate as one decision (`A|B|C`, in the order they were marked)."""
        chosen = self.model.marked_decision()
        self.candidates.set_marked([])
        if chosen is None:
            return False
        action, concept_id, detail = chosen
        return self.decide(action, concept_id, detail=detail, teach=teach)

    def open_kb_search(self) -> KbSearchDialog | None:
        if self.model.current_mention_id() is None:
            self.host.statusBar().showMessage("select a mention first", 3000)
            return None
        assert self.model.doc is not None and self.model.current is not None
        mention_id = self.model.current_mention_id()
        self.kb_dialog = KbSearchDialog(
            self.project, self.host, initial=self.model.doc.mentions[self.model.current].text
        )
        self.kb_dialog.accepted.connect(lambda: self._kb_picked(mention_id))
        self.host.keys_back(self.kb_dialog)  # keys go to the desk again
        self.kb_dialog.open()
        self.kb_dialog.keep_in_view(
            self.abstract.mention_rect(self.model.current)
        )  # the mention stays in view
        return self.kb_dialog

    def _kb_picked(self, mention_id: int | None) -> None:
        """Enter links the chosen concept alone; Ctrl+Enter adds it to the marked or linked ones."""
        if self.kb_dialog is None or not self.kb_dialog.chosen or mention_id not in self.model.mention_ids:
            return
        self.model.current = self.model.mention_ids.index(mention_id)
        chosen = self.kb_dialog.chosen
        if not self.kb_dialog.add:
            self.decide("correct", chosen, detail={"via": "kb search"})
            return
        # Building a link to several concepts stores nothing until it is complete (Enter), as with
        # Ctrl+1-9: a first pick stored at once was a one-concept correction the linker learnt from.
        self.model.add_searched(mention_id, chosen)
        self.candidates.set_marked(self.model.marked)
        self.host.statusBar().showMessage(
            f"link being built: {' + '.join(self.model.marked)}. Ctrl+F then Ctrl+Enter adds another, "
            "Enter stores it, Esc clears",
            10000,
        )

    # --- mention edits ---------------------------------------------------------------------------

    def add_mention(self) -> bool:
        """M: the selection, snapped to whole words (an edge inside a word moves out to its edge)."""
        span = self.abstract.selection_span()
        if span is not None and self.model.doc is not None:
            span = snap_to_words(self.model.doc.text, *span)
        if self.model.doc is None or span is None:
            self.host.statusBar().showMessage("select some text first, then press M", 3000)
            return False
        if self.saving.waiting_for_writes("adding a mention"):
            return False
        op = self.model.add_mention(*span)
        if self.saving.perform(op.label, op.run) == "refused":
            return False
        self.abstract.select_text(span[1], span[1])
        self.host.statusBar().showMessage(f"added mention “{self.model.doc.text[span[0] : span[1]]}”", 4000)
        return True

    def delete_mention(self) -> bool:
        mention_id = self.model.current_mention_id()
        if mention_id is None or self.model.doc is None or self.model.current is None:
            return False
        if self.saving.waiting_for_writes("deleting a mention"):
            return False
        op = self.model.delete_mention()
        return self.saving.perform(op.label, op.run) != "refused"

    def adjust(self, start_delta: int, end_delta: int) -> bool:
        mention_id = self.model.current_mention_id()
        if mention_id is None or self.model.doc is None or self.model.current is None:
            return False
        mention = self.model.doc.mentions[self.model.current]
        new = (mention.start + start_delta, mention.end + end_delta)
        if not 0 <= new[0] < new[1] <= len(self.model.doc.text) or self.saving.waiting_for_writes(
            "a span edit"
        ):
            return False
        return self.edit_span(mention_id, new, merge=True)

    def edit_span(self, mention_id: int, new: tuple[int, int], *, merge: bool, label: str = "") -> bool:
        """One span edit; `merge`: nudges of the same mention in a row are one undo step."""
        op = self.model.edit_span(mention_id, new, merge=merge, label=label)
        return self.saving.perform(op.label, op.run) != "refused"

    def change_type(self, new_type: str | None = None) -> QInputDialog | bool:
        """T: pick a type (those in use, or a new one); with `new_type`, set it directly."""
        mention_id = self.model.current_mention_id()
        if mention_id is None or self.model.doc is None or self.model.current is None:
            return False
        old = self.model.doc.mentions[self.model.current].type
        if new_type is not None:
            if new_type == old or self.saving.waiting_for_writes("a type change"):
                return False
            return self._change_type(mention_id, old, new_type)
        types = self.project.documents.mention_types()
        dialog = QInputDialog(self.host)
        dialog.setWindowTitle("Mention type")
        dialog.setLabelText(f"Type of “{self.model.doc.mentions[self.model.current].text}”")
        dialog.setComboBoxItems([old, *[t for t in types if t != old]] if old else types)
        dialog.setComboBoxEditable(True)
        dialog.textValueSelected.connect(
            lambda text: self._type_chosen(mention_id, old, text.strip()) if text.strip() != old else None
        )
        self.host.menu_dialog = dialog
        dialog.open()
        return dialog

    def _type_chosen(self, mention_id: int, old: str, new: str) -> None:
        if mention_id in self.model.mention_ids and not self.saving.waiting_for_writes("a type change"):
            self._change_type(mention_id, old, new)

    def _change_type(self, mention_id: int, old: str, new: str) -> bool:
        op = self.model.change_type(mention_id, old, new)
        return self.saving.perform(op.label, op.run) != "refused"

    # --- bulk accept -----------------------------------------------------------------------------

    def bulk_accept(
        self,
        threshold: float,
        *,
        whole_queue: bool = False,
        scale: BulkScale | None = None,
        queue: QueueScope | None = None,
    ) -> int:
        """Accept the top suggestion of every undecided mention whose score reaches `threshold`; with a
        ranker in force only the suggestions it scored (app.gui.bulk_accept_dialog). The whole queue is
        what the queue shows (`queue`, read from it now when not given)."""
        if self.saving.waiting_for_writes("bulk accept"):
            return 0
        if whole_queue and queue is None:
            queue = self.queue_scope()
        count, op = self.model.bulk_accept(threshold, scale=scale, queue=queue if whole_queue else None)
        if op is not None and self.saving.perform(op.label, op.run) != "saved":
            return 0  # refused (status bar), or waiting in the save bar
        self.host.statusBar().showMessage(f"bulk-accepted {count} suggestion(s) ≥ {threshold:.2f}", 5000)
        return count

    def queue_scope(self) -> QueueScope:
        """The documents the queue shows now, and its type filter (what "the whole queue" means)."""
        queue = self.host.queue
        filters = queue.filters()
        said = ", ".join(f"{which} {value}" for which, value in filters.items() if value != ALL)
        kind = filters.get("type", ALL)
        return QueueScope(tuple(queue.visible_ids()), None if kind == ALL else kind, said)

    def bulk_accept_dialog(self) -> BulkAcceptDialog:
        dialog = BulkAcceptDialog(self.host, self.project, self.model.mention_ids, queue=self.queue_scope())
        dialog.accepted.connect(
            lambda: self.bulk_accept(
                dialog.threshold.value(), whole_queue=dialog.whole_queue, scale=dialog.scale, queue=dialog.queue
            )
        )
        self.host.menu_dialog = dialog
        dialog.open()
        return dialog
