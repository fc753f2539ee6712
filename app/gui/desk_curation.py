"""The desk's curation keys: decisions (one or several concepts per link), KB-search corrections, mention
edits that re-suggest at once, and bulk accept. Every write is an undoable command (app/gui/actions.py)
made through the desk's writer (`perform`, app/gui/desk_saving.py): the undo stack shows it once stored.

A mention naming several concepts ("colorectal, endometrial, and ovarian cancers") is linked by marking
candidates (Ctrl+1-9, or the check boxes) and pressing Enter, or by adding KB-search hits to its link
(Ctrl+Enter in the search). The mention keeps its one gold span: splitting it would break the span
that NCBI-disease-style corpora annotate and evaluate (one composite mention, `A|B|C`).
"""

from __future__ import annotations

from collections import Counter

from PySide6.QtWidgets import QInputDialog

from app.gui.actions import (
    AddMentionCommand,
    AdjustSpanCommand,
    BulkAcceptCommand,
    ChangeTypeCommand,
    DecisionCommand,
    DeleteMentionCommand,
)
from app.gui.desk_extras import DeskExtrasMixin
from app.gui.dialogs import BulkAcceptDialog
from app.gui.kb_search import KbSearchDialog
from app.gui.workers import MODELS_LOADING, MODELS_NOT_LOADED
from core.store.curation import COMPOSITE_SEPARATOR, LINKING_ACTIONS
from core.store.curation_log import concept_parts
from core.text.words import snap_to_words

# Decisions that act on the suggestions shown: the store refuses them once the mention has changed.
ON_SUGGESTIONS = ("accept", "reject")


class CurationMixin(DeskExtrasMixin):
    """Mixed into `MainWindow`: needs its project, document state, undo stack, panels and service. The
    curator extras of issue 12 (notes and flags, identical mentions, word edges, statistics, undo across
    restarts) come with it from `DeskExtrasMixin`."""

    # --- decisions -------------------------------------------------------------------------------

    def decide(self, action: str, concept_id: str = "", *, detail: dict | None = None) -> bool:
        mention_id = self.current_mention_id()
        if mention_id is None:
            self.statusBar().showMessage("no mention selected", 3000)
            return False
        suggested_for = None
        if action in ON_SUGGESTIONS and self.suggestions.get(mention_id):
            suggested_for = self.suggested_for.get(mention_id)
        version = self.project.suggestion_version(mention_id)
        text = f"{action} “{self.doc.mentions[self.current].text}”" + (
            f" → {concept_id}" if concept_id else ""
        )
        command = DecisionCommand(
            self.context,
            mention_id,
            action,
            concept_id=concept_id,
            model_version=version,
            detail=detail,
            text=text,
            suggested_for=suggested_for,
        )
        outcome = self.perform(command)
        if outcome == "refused":
            return False
        if outcome == "saved":
            self.statusBar().showMessage(f"saved: {text}", 4000)
        else:  # the save bar shows it until the store has it
            self.statusBar().showMessage(f"waiting to save: {text}", 4000)
        self._advance_after(mention_id)
        return outcome == "saved"

    def _advance_after(self, mention_id: int) -> None:
        if mention_id in self.mention_ids:
            index = self.mention_ids.index(mention_id)
            for later in range(index + 1, len(self.mention_ids)):
                if self.mention_ids[later] not in self.decisions:
                    self.select_mention(later)
                    return
            self.select_mention(min(index + 1, len(self.mention_ids) - 1))

    def report_refusal(self, exc: Exception) -> None:
        """A write the store refused: say why in the status bar (it is also in the log)."""
        self.statusBar().showMessage(f"not saved: {exc}", 10000)

    def accept_rank(self, rank: int) -> bool:
        mention_id = self.current_mention_id()
        ranked = self.suggestions.get(mention_id, []) if mention_id is not None else []
        if not 1 <= rank <= len(ranked):
            waiting = mention_id in self.resuggesting
            self.statusBar().showMessage(
                "suggestions for the new span are on their way"
                if waiting
                else f"no candidate {rank} for this mention",
                3000,
            )
            return False
        chosen = ranked[rank - 1]
        return self.decide(
            "accept", chosen.concept_id, detail={"rank": rank, "score": round(chosen.score, 4)}
        )

    def accept_top(self) -> bool:
        """Enter: the marked candidates as one link when some are marked, else the top one."""
        return self.accept_marked() if self.marked else self.accept_rank(1)

    def toggle_mark(self, rank: int) -> bool:
        """Ctrl+n: mark or unmark candidate n for a link naming several concepts."""
        mention_id = self.current_mention_id()
        ranked = self.suggestions.get(mention_id, []) if mention_id is not None else []
        if not 1 <= rank <= len(ranked):
            self.statusBar().showMessage(f"no candidate {rank} for this mention", 3000)
            return False
        concept_id = ranked[rank - 1].concept_id
        if concept_id in self.marked:
            self.marked.remove(concept_id)
        else:
            self.marked.append(concept_id)
        self.candidates.set_marked(self.marked)
        if self.marked:
            self.statusBar().showMessage(
                f"marked {' | '.join(self.marked)}: Enter links the mention to all of them, Esc clears", 6000
            )
        else:
            self.statusBar().clearMessage()
        return True

    def clear_marks(self) -> None:
        self.marked = []
        self.candidates.set_marked([])

    def accept_marked(self) -> bool:
        """Accept every marked candidate as one decision (`A|B|C`, in the order they were marked)."""
        mention_id = self.current_mention_id()
        ranked = self.suggestions.get(mention_id, []) if mention_id is not None else []
        order = [c.concept_id for c in ranked]
        chosen = [c for c in self.marked if c in order]
        if not chosen:
            self.clear_marks()
            return False
        detail = {"ranks": [order.index(c) + 1 for c in chosen]}
        self.marked = []
        return self.decide("accept", COMPOSITE_SEPARATOR.join(chosen), detail=detail)

    def linked_ids(self, mention_id: int | None) -> list[str]:
        """The concepts the mention is linked to now (several for a composite link)."""
        decision = self.decisions.get(mention_id)
        if decision is None or decision.action not in LINKING_ACTIONS:
            return []
        return concept_parts(decision.concept_id)

    def open_kb_search(self) -> KbSearchDialog | None:
        if self.current_mention_id() is None:
            self.statusBar().showMessage("select a mention first", 3000)
            return None
        assert self.doc is not None and self.current is not None
        mention_id = self.current_mention_id()
        self.kb_dialog = KbSearchDialog(self.project, self, initial=self.doc.mentions[self.current].text)
        self.kb_dialog.accepted.connect(lambda: self._kb_picked(mention_id))
        self.kb_dialog.finished.connect(lambda _result: self.activateWindow())  # keys go to the desk again
        self.kb_dialog.open()
        self.kb_dialog.keep_in_view(self.abstract.mention_rect(self.current))  # the mention stays in view
        return self.kb_dialog

    def _kb_picked(self, mention_id: int | None) -> None:
        """Enter links the chosen concept alone; Ctrl+Enter adds it to the marked or linked ones."""
        if self.kb_dialog is None or not self.kb_dialog.chosen or mention_id not in self.mention_ids:
            return
        self.current = self.mention_ids.index(mention_id)
        chosen = self.kb_dialog.chosen
        if not self.kb_dialog.add:
            self.decide("correct", chosen, detail={"via": "kb search"})
            return
        base = list(self.marked) or self.linked_ids(mention_id)
        self.marked = []
        concepts = [*base, *([chosen] if chosen not in base else [])]
        self.decide(
            "correct", COMPOSITE_SEPARATOR.join(concepts), detail={"via": "kb search", "added": chosen}
        )

    # --- mention edits ---------------------------------------------------------------------------

    def add_mention(self) -> bool:
        """M: the selection, snapped to whole words (an edge inside a word moves out to its edge)."""
        span = self.abstract.selection_span()
        if span is not None and self.doc is not None:
            span = snap_to_words(self.doc.text, *span)
        if self.doc is None or span is None:
            self.statusBar().showMessage("select some text first, then press M", 3000)
            return False
        types = Counter(m.type for m in self.doc.mentions if m.type)
        kind = types.most_common(1)[0][0] if types else ""
        if self.waiting_for_writes("adding a mention"):
            return False
        command = AddMentionCommand(self.context, self.doc.doc_id, span[0], span[1], kind)
        if self.perform(command) == "refused":
            return False
        self.abstract.select_text(span[1], span[1])
        self.statusBar().showMessage(f"added mention “{self.doc.text[span[0] : span[1]]}”", 4000)
        return True

    def delete_mention(self) -> bool:
        mention_id = self.current_mention_id()
        if mention_id is None or self.doc is None or self.current is None:
            return False
        if self.waiting_for_writes("deleting a mention"):
            return False
        command = DeleteMentionCommand(self.context, mention_id, self.doc.mentions[self.current].text)
        return self.perform(command) != "refused"

    def adjust(self, start_delta: int, end_delta: int) -> bool:
        mention_id = self.current_mention_id()
        if mention_id is None or self.doc is None or self.current is None:
            return False
        mention = self.doc.mentions[self.current]
        new = (mention.start + start_delta, mention.end + end_delta)
        if not 0 <= new[0] < new[1] <= len(self.doc.text) or self.waiting_for_writes("a span edit"):
            return False
        command = AdjustSpanCommand(self.context, mention_id, (mention.start, mention.end), new)
        return self.perform(command) != "refused"

    def change_type(self, new_type: str | None = None) -> QInputDialog | bool:
        """T: pick a type (those in use, or a new one); with `new_type`, set it directly."""
        mention_id = self.current_mention_id()
        if mention_id is None or self.doc is None or self.current is None:
            return False
        old = self.doc.mentions[self.current].type
        if new_type is not None:
            if new_type == old or self.waiting_for_writes("a type change"):
                return False
            return self.perform(ChangeTypeCommand(self.context, mention_id, old, new_type)) != "refused"
        types = self.project.mention_types()
        dialog = QInputDialog(self)
        dialog.setWindowTitle("Mention type")
        dialog.setLabelText(f"Type of “{self.doc.mentions[self.current].text}”")
        dialog.setComboBoxItems([old, *[t for t in types if t != old]] if old else types)
        dialog.setComboBoxEditable(True)
        dialog.textValueSelected.connect(
            lambda text: self._type_chosen(mention_id, old, text.strip()) if text.strip() != old else None
        )
        self.menu_dialog = dialog
        dialog.open()
        return dialog

    def _type_chosen(self, mention_id: int, old: str, new: str) -> None:
        if mention_id in self.mention_ids and not self.waiting_for_writes("a type change"):
            self.perform(ChangeTypeCommand(self.context, mention_id, old, new))

    def resuggest(self, mention_id: int) -> None:
        """Ask for suggestions for an edited mention at once (the store already dropped its old ones)."""
        self.resuggesting.add(mention_id)
        if self.device_label.text() == MODELS_NOT_LOADED:
            self.device_label.setText(MODELS_LOADING)
        self.service.resuggest([mention_id])

    # --- bulk accept -----------------------------------------------------------------------------

    def bulk_accept(self, threshold: float, *, whole_queue: bool = False) -> int:
        """Accept the top suggestion of every undecided mention whose score reaches `threshold`."""
        if whole_queue:
            pairs = list(self.project.documents_with_mention_ids())
            ids = [m for _, mention_ids in pairs for m in mention_ids]
            found = self.project.suggestion_sets(ids)
            ranked_by_id = {m: s.candidates for m, s in found.items()}
            keys = {m: s.key for m, s in found.items()}
            decided = self.project.current_decisions(mention_ids=ids)
        else:
            ids, ranked_by_id, decided = self.mention_ids, self.suggestions, self.decisions
            keys = self.suggested_for
        accepts = []
        for mention_id in ids:
            ranked = ranked_by_id.get(mention_id) or []
            if mention_id in decided or not ranked or ranked[0].score < threshold:
                continue
            version = self.project.suggestion_version(mention_id)
            accepts.append((mention_id, ranked[0].concept_id, version, ranked[0].score, keys[mention_id]))
        if accepts:
            outcome = self.perform(BulkAcceptCommand(self.context, accepts, threshold))
            if outcome != "saved":  # refused (status bar), or waiting in the save bar
                return 0
        self.statusBar().showMessage(f"bulk-accepted {len(accepts)} suggestion(s) ≥ {threshold:.2f}", 5000)
        return len(accepts)

    def bulk_accept_dialog(self) -> None:
        dialog = BulkAcceptDialog(self)
        dialog.accepted.connect(
            lambda: self.bulk_accept(dialog.threshold.value(), whole_queue=dialog.whole_queue)
        )
        dialog.open()
