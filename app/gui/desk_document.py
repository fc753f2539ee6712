"""The open document and its queue rows: reading them from the store, and re-reading only what a write
changed (a decision re-reads its mentions' state; other edits the document; the queue its rows)."""

from __future__ import annotations

import gc

from app.gui.abstract_view import MentionMark
from app.gui.states import detected_probability, mention_state
from core.jobs import curation
from core.kb.concept import Concept
from core.store.curation_log import SuggestionSet, concept_parts, mention_key
from core.store.desk_lookup import document_facets
from core.store.op_changes import OpChanges


def settle_memory() -> None:
    """Exempt what the desk holds now (every queue row, the loaded modules, Qt's wrappers) from Python's
    cyclic garbage collector: at 20,000 documents each full collection walked them all and froze the
    window, at moments of the collector's choosing (`gc.freeze`; objects are still freed when their last
    reference goes, only cycles among these are never collected). Garbage is collected first, so no dead
    cycle is kept; after the first freeze that collection walks only what is new."""
    gc.collect()
    gc.freeze()


class OpenDocumentMixin:
    """Mixed into `MainWindow`: needs its project, queue, abstract, document state and selection."""

    def reload_queue(self) -> None:
        self.queue.set_entries(self.project.queue(), document_facets(self.project))
        settle_memory()

    def open_document(self, doc_id: str, *, mention_id: int | None = None) -> None:
        found = list(self.project.documents_with_mention_ids(ids=[doc_id]))
        if not found:
            return
        self.doc, self.mention_ids = found[0]
        self.suggestions = {m: [] for m in self.mention_ids}
        self.suggested_for = {}
        self._install(self.project.suggestion_sets(self.mention_ids))
        self.decisions = self.project.current_decisions(mention_ids=self.mention_ids)
        # every candidate's and link's concept at once: moving on after a decision then reads nothing
        wanted = {c.concept_id for ranked in self.suggestions.values() for c in ranked}
        wanted |= {p for d in self.decisions.values() for p in concept_parts(d.concept_id)}
        missing = sorted(wanted - set(self.concepts))
        if missing:
            self.concepts.update(self.project.concepts(missing))
        self.abstract.set_document(self.doc, self._marks())
        self.queue.select(doc_id, emit=False)
        entry = self.queue.entry(doc_id)
        self._update_doc_meta(entry)
        if mention_id in self.mention_ids:
            self.select_mention(self.mention_ids.index(mention_id))
        else:
            self.select_mention(self._first_open_mention())
        self.prefetch()

    def _install(self, found: dict[int, SuggestionSet]) -> list[int]:
        """Take the suggestions computed for a mention's current span and type, drop any others (a
        late answer for an edited span); returns the mentions updated."""
        assert self.doc is not None
        updated = []
        for mention, mention_id in zip(self.doc.mentions, self.mention_ids, strict=True):
            entry = found.get(mention_id)
            if entry is None or entry.key != mention_key(mention):
                continue
            self.suggestions[mention_id] = entry.candidates
            self.suggested_for[mention_id] = entry.key
            if entry.candidates:
                self.resuggesting.discard(mention_id)
            updated.append(mention_id)
        return updated

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

    def _marks(self, *, reread: bool = True) -> list[MentionMark]:
        """The highlights of the open document; `reread` reads its notes and flags again."""
        assert self.doc is not None
        marks = []
        for mention, mention_id in zip(self.doc.mentions, self.mention_ids, strict=True):
            decision = self.decisions.get(mention_id)
            ranked = self.suggestions.get(mention_id, [])
            state = mention_state(decision.action if decision else None, bool(ranked))
            concept = ""
            if decision is not None and decision.concept_id:
                concept = self._link_text(decision.concept_id)
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
        return self._with_curation_marks(marks, reread=reread)

    def refresh(self, mention_id: int | None = None) -> None:
        """Re-read the whole queue and the open document (after a change from outside the desk's own
        operations: adjudication, a discarded write); keep (or move to) the given mention."""
        keep = mention_id if mention_id is not None else self.current_mention_id()
        self.reload_queue()
        self.undo_stack.set(
            curation.history_of(self.project, self.settings.curator)
        )  # the curator may be new
        if self.doc is not None:
            self.open_document(self.doc.doc_id, mention_id=keep)

    def show_changes(self, changes: OpChanges, *, navigate: bool = False, follow: bool = True) -> None:
        """Redraw what one curation operation changed, from its `OpChanges` alone: the history, the queue
        rows, and the open document's decisions (nothing is read for a decision). An edit of the open
        document's mentions reads that document again; a note or mark re-reads its marks. `navigate`
        (an undo or redo) opens the document and selects the mention it changed; `follow` is False for a
        change saved late, which must not pull the selection from where the curator has moved on to."""
        self.undo_stack.set(changes.history)
        if changes.queue and not self.queue.update_entries(list(changes.queue), changes.facets):
            self.reload_queue()
        document, mention_id = changes.focus or (None, None)
        if navigate and document and (self.doc is None or self.doc.doc_id != document):
            self.open_document(document, mention_id=mention_id)
            return
        if self.doc is None:
            return
        keep = mention_id if (navigate or follow) and mention_id in self.mention_ids else None
        keep = keep if keep is not None else self.current_mention_id()
        new_here = (
            document == self.doc.doc_id and mention_id is not None and mention_id not in self.mention_ids
        )
        if new_here or set(changes.edited) & set(self.mention_ids):
            self.open_document(self.doc.doc_id, mention_id=mention_id if new_here else keep)
            return
        for changed, decision in changes.decisions.items():
            if changed not in self.mention_ids:
                continue
            if decision is None:
                self.decisions.pop(changed, None)
            else:
                self.decisions[changed] = decision
        self.abstract.set_marks(self._marks(reread=self.doc.doc_id in changes.marks))
        self._update_doc_meta(self.queue.entry(self.doc.doc_id))
        self.select_mention(self.mention_ids.index(keep) if keep in self.mention_ids else self.current)

    def _concept(self, concept_id: str) -> Concept | None:
        if concept_id not in self.concepts:
            self.concepts[concept_id] = self.project.concept(concept_id)
        return self.concepts[concept_id]

    def _concept_name(self, concept_id: str) -> str:
        concept = self._concept(concept_id)
        return concept.preferred_name if concept else ""

    def _link_text(self, concept_id: str) -> str:
        """“D1 Name 1 | D2 Name 2” for a link naming one or several concepts: “|” as stored and exported,
        since in NCBI-disease and MEDIC “+” is part of some concepts' names (combination concepts)."""
        return " | ".join(f"{part} {self._concept_name(part)}".strip() for part in concept_parts(concept_id))
