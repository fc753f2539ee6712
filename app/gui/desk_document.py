"""The open document and its queue rows: reading them from the store, and re-reading only what a write
changed (a decision re-reads its mentions' state; other edits the document; the queue its rows)."""

from __future__ import annotations

import gc

from app.gui.abstract_view import MentionMark
from app.gui.states import detected_probability, mention_state
from core.kb.concept import Concept
from core.store.curation_log import SuggestionSet, concept_parts, mention_key
from core.store.desk_lookup import document_facets


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

    def _marks(self) -> list[MentionMark]:
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
        return self._with_curation_marks(marks)

    def refresh(
        self, mention_id: int | None = None, *, changed: list[int] | None = None, decisions_only: bool = False
    ) -> None:
        """Re-read the current document's state after a write; keep (or move to) the given mention. With
        `changed` (the mentions written) only their documents' queue rows are re-read: reloading the
        whole queue after each decision froze the desk for seconds with 20,000 documents. With
        `decisions_only` (a decision, a bulk accept, their undo: text, mentions and suggestions are as
        shown), the open document re-reads only the changed mentions' decisions instead of itself
        whole (half of a key press's time on NCBI-disease)."""
        keep = mention_id if mention_id is not None else self.current_mention_id()
        if changed is None:
            self.reload_queue()
        else:
            touched = {self.doc.doc_id} if self.doc is not None else set()
            touched |= set(self.project.mention_documents(changed).values()) if changed else set()
            ids = sorted(touched)
            if not self.queue.update_entries(
                self.project.queue(doc_ids=ids), document_facets(self.project, ids)
            ):
                self.reload_queue()
        if self.doc is None:
            return
        if decisions_only and changed is not None and set(changed) <= set(self.mention_ids):
            self._refresh_decisions(changed, keep)
        else:
            self.open_document(self.doc.doc_id, mention_id=keep)

    def _refresh_decisions(self, changed: list[int], keep: int | None) -> None:
        """The open document after decisions on some of its mentions: their decisions re-read, the
        highlights and the counts redrawn, the selection kept (the store's answer, never a guess)."""
        fresh = self.project.current_decisions(mention_ids=changed)
        for mention_id in changed:
            if mention_id in fresh:
                self.decisions[mention_id] = fresh[mention_id]
            else:
                self.decisions.pop(mention_id, None)
        self.abstract.set_marks(self._marks())
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
