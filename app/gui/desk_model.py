"""The desk's model, without Qt: the open document's state (its mentions, suggestions, decisions, the
selected mention, the candidates marked for a link to several concepts, the concepts read so far) and the
curation operations the keys trigger.

Each operation is a `DeskOp`: a label and a call of `core.jobs` that takes the curator's name and returns
the `OpChanges` it made. The window runs it through its writer (app/gui/desk_writer.py: tried at once with
a short lock wait, retried in a background thread while another program holds the lock) and then
`apply`s what it returned; `run` does both at once, for a caller without a window (tests, scripts). The window reads this state and draws it; nothing here imports
PySide6, so the state and the operations can be driven and checked without a display.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.documents import Candidate, Document, Mention
from core.jobs.curation import operations as curation
from core.jobs.curation.bulk_accept import (
    BulkScale,
    QueueScope,
    queue_top_suggestions,
    read_scale,
    undecided_top_suggestions,
)
from core.jobs.curation.occurrences import annotate_occurrences
from core.kb.concept import Concept
from core.store.curation import COMPOSITE_SEPARATOR, LINKING_ACTIONS, shown_link
from core.store.curation_log import MentionKey, SuggestionSet, concept_parts, mention_key
from core.store.op_changes import OpChanges

if TYPE_CHECKING:
    from core.store.project import Project

# Decisions that act on the suggestions shown: the store refuses them once the mention has changed.
ON_SUGGESTIONS = ("accept", "reject")


@dataclass(frozen=True)
class DeskOp:
    """One undoable curation step: what the save bar and the history call it, and the store call."""

    label: str
    run: Callable[[str], OpChanges]  # the curator's name -> what the operation changed


@dataclass(frozen=True)
class Redraw:
    """What the screen must show after `DeskModel.apply`: a document opened (read again) at a mention,
    or the open one's highlights (`reread_marks`: its notes and flags too) with a mention selected."""

    open: tuple[str, int | None] | None = None
    select: int | None = None
    reread_marks: bool = False
    changed: bool = False  # the open document's state changed (else nothing to draw)


class DeskModel:
    """The open document and the curator's work on it; `curator` gives the name decisions are made in."""

    def __init__(self, project: Project, curator: Callable[[], str] = lambda: ""):
        self.project = project
        self.curator = curator
        self.doc: Document | None = None
        self.mention_ids: list[int] = []
        self.suggestions: dict[int, list[Candidate]] = {}
        self.suggested_for: dict[int, MentionKey] = {}  # the span and type the suggestions are for
        self.resuggesting: set[int] = set()  # edited mentions waiting for new suggestions
        # New suggestions for the selected mention, shown once the curator leaves it: a list replaced
        # under the curator's eyes made a number key pick another concept than the one read (issue 31).
        self.deferred: dict[int, SuggestionSet] = {}
        self.released: list[int] = []  # deferred suggestions `select` just put in force
        self.marked: list[str] = []  # candidates marked for one link to several concepts
        self.marked_mention: int | None = None
        self.searched_marks: set[str] = set()  # marked from the KB search (Ctrl+Enter), not candidates
        self.decisions: dict = {}
        self.current: int | None = None
        self.concepts: dict[str, Concept | None] = {}
        self.linking: set[str] = set()  # documents being linked in the background

    # --- reading -----------------------------------------------------------------------------------

    def open(self, doc_id: str) -> bool:
        """Read a document, its suggestions, decisions and every concept they name (moving on after a
        decision then reads nothing); False when the project has no such document."""
        found = list(self.project.documents.documents_with_mention_ids(ids=[doc_id]))
        if not found:
            return False
        self.doc, self.mention_ids = found[0]
        self.suggestions = {m: [] for m in self.mention_ids}
        self.suggested_for = {}
        self.deferred = {}
        self.install(self.project.curation.suggestion_sets(self.mention_ids))
        self.decisions = self.project.curation.current_decisions(mention_ids=self.mention_ids)
        wanted = {c.concept_id for ranked in self.suggestions.values() for c in ranked}
        wanted |= {p for d in self.decisions.values() for p in concept_parts(d.concept_id)}
        missing = sorted(wanted - set(self.concepts))
        if missing:
            self.concepts.update(self.project.kb.concepts(missing))
        return True

    def install(self, found: dict[int, SuggestionSet], *, keep_selected: bool = False) -> list[int]:
        """Take the suggestions computed for a mention's current span and type, drop any others (a
        late answer for an edited span); returns the mentions updated. `keep_selected`: a new list for
        the selected mention that ranks other concepts waits in `deferred` until the curator leaves it."""
        if self.doc is None:
            return []
        updated = []
        selected = self.current_mention_id() if keep_selected else None
        for mention, mention_id in zip(self.doc.mentions, self.mention_ids, strict=True):
            entry = found.get(mention_id)
            if entry is None or entry.key != mention_key(mention):
                continue
            shown = [c.concept_id for c in self.suggestions.get(mention_id, [])]
            if mention_id == selected and shown and shown != [c.concept_id for c in entry.candidates]:
                self.deferred[mention_id] = entry
                continue
            self.deferred.pop(mention_id, None)
            self.suggestions[mention_id] = entry.candidates
            self.suggested_for[mention_id] = entry.key
            if entry.candidates:
                self.resuggesting.discard(mention_id)
            updated.append(mention_id)
        return updated

    def current_mention_id(self) -> int | None:
        if self.current is None or not 0 <= self.current < len(self.mention_ids):
            return None
        return self.mention_ids[self.current]

    def current_mention(self) -> Mention | None:
        if self.doc is None or self.current_mention_id() is None:
            return None
        return self.doc.mentions[self.current]

    def first_open_mention(self) -> int | None:
        for index, mention_id in enumerate(self.mention_ids):
            if mention_id not in self.decisions:
                return index
        return 0 if self.mention_ids else None

    def select(self, index: int | None) -> int | None:
        """Select a mention (clamped; None when there is none): marks made on another mention go, and
        so do marked candidates no longer among its suggestions; its candidates' concepts are read."""
        if self.doc is None or index is None or not self.mention_ids:
            self.current = None
            self.clear_marks()
            return None
        index = max(0, min(index, len(self.mention_ids) - 1))
        self.current = index
        mention_id = self.mention_ids[index]
        waiting = {m: entry for m, entry in self.deferred.items() if m != mention_id}
        self.released = self.install(waiting) if waiting else []
        if mention_id != self.marked_mention:
            self.marked, self.marked_mention, self.searched_marks = [], mention_id, set()
        ranked = self.suggestions.get(mention_id, [])
        self.marked = [
            c for c in self.marked if c in self.searched_marks or any(r.concept_id == c for r in ranked)
        ]
        missing = [c.concept_id for c in ranked if c.concept_id not in self.concepts]
        if missing:
            self.concepts.update(self.project.kb.concepts(missing))
        return index

    def next_after(self, mention_id: int) -> int | None:
        """The mention to go to after deciding `mention_id`: the next undecided one, else the next."""
        if mention_id not in self.mention_ids:
            return None
        index = self.mention_ids.index(mention_id)
        for later in range(index + 1, len(self.mention_ids)):
            if self.mention_ids[later] not in self.decisions:
                return later
        return min(index + 1, len(self.mention_ids) - 1)

    def next_undecided(self, mention_id: int) -> int | None:
        """The first undecided mention after `mention_id`, else before it (None when every one is)."""
        if mention_id not in self.mention_ids:
            return None
        index = self.mention_ids.index(mention_id)
        order = [*range(index + 1, len(self.mention_ids)), *range(index)]
        return next((i for i in order if self.mention_ids[i] not in self.decisions), None)

    def repeats_decision(
        self, mention_id: int, action: str, concept_id: str, curator: str, detail: dict | None
    ) -> bool:
        """Whether the decision is the one in force already (the store would not write it again)."""
        return curation.repeats(self.decisions.get(mention_id), action, concept_id, curator, detail)

    def concept(self, concept_id: str) -> Concept | None:
        if concept_id not in self.concepts:
            self.concepts[concept_id] = self.project.kb.concept(concept_id)
        return self.concepts[concept_id]

    def concept_name(self, concept_id: str) -> str:
        concept = self.concept(concept_id)
        return concept.preferred_name if concept else ""

    def link_text(self, concept_id: str) -> str:
        """“D1 Name 1 | D2 Name 2” for a link naming one or several concepts: “|” as stored and exported,
        since in NCBI-disease and MEDIC “+” is part of some concepts' names (combination concepts)."""
        return " | ".join(f"{part} {self.concept_name(part)}".strip() for part in concept_parts(concept_id))

    def linked_ids(self, mention_id: int | None) -> list[str]:
        """The concepts the mention is linked to now (several for a composite link)."""
        decision = self.decisions.get(mention_id)
        if decision is None or decision.action not in LINKING_ACTIONS:
            return []
        return concept_parts(decision.concept_id)

    # --- marked candidates ---------------------------------------------------------------------------

    def ranked(self) -> list[Candidate]:
        mention_id = self.current_mention_id()
        return self.suggestions.get(mention_id, []) if mention_id is not None else []

    def toggle_mark(self, rank: int) -> bool:
        """Mark or unmark candidate `rank` for a link naming several concepts; False when there is none."""
        ranked = self.ranked()
        if not 1 <= rank <= len(ranked):
            return False
        concept_id = ranked[rank - 1].concept_id
        if concept_id in self.marked:
            self.marked.remove(concept_id)
        else:
            self.marked.append(concept_id)
        return True

    def clear_marks(self) -> None:
        self.marked = []
        self.searched_marks = set()

    def add_searched(self, mention_id: int, concept_id: str) -> None:
        """A KB-search pick added to the link being built (nothing is stored until it is complete)."""
        base = list(self.marked) or self.linked_ids(mention_id)
        self.marked = [*base, *([concept_id] if concept_id not in base else [])]
        self.marked_mention = mention_id
        self.searched_marks.update(self.marked)

    def marked_decision(self) -> tuple[str, str, dict] | None:
        """The marked candidates as one decision (`A|B|C`, in the order marked): action, concept and
        detail; a correction when some came from the KB search. The marks are cleared."""
        order = [c.concept_id for c in self.ranked()]
        chosen = [c for c in self.marked if c in order or c in self.searched_marks]
        searched = [c for c in chosen if c in self.searched_marks]
        self.clear_marks()
        if not chosen:
            return None
        detail: dict = {"ranks": [order.index(c) + 1 if c in order else None for c in chosen]}
        if searched:  # concepts found in the KB search: a correction, as Enter there makes
            return "correct", COMPOSITE_SEPARATOR.join(chosen), {**detail, "via": "kb search"}
        return "accept", COMPOSITE_SEPARATOR.join(chosen), detail

    # --- operations (core.jobs.curation.operations) ----------------------------------------------------------------

    def decide(self, action: str, concept_id: str = "", *, detail: dict | None = None) -> DeskOp | None:
        """A decision on the selected mention (None when none is selected); an accept or reject names the
        suggestions it was made on, so the store refuses it once the mention has changed."""
        mention_id = self.current_mention_id()
        mention = self.current_mention()
        if mention_id is None or mention is None:
            return None
        suggested_for = None
        if action in ON_SUGGESTIONS and self.suggestions.get(mention_id):
            suggested_for = self.suggested_for.get(mention_id)
        names = {p: self.concept_name(p) for p in concept_parts(concept_id)} if shown_link(action, concept_id) else {}
        taught = (detail or {}).get("teach", True) is not False
        text = curation.decision_label(
            (self.doc.doc_id, mention.text, mention.origin), action, concept_id, names, taught=taught
        )
        project = self.project
        return DeskOp(
            text,
            lambda curator: curation.decide(
                project,
                mention_id,
                action,
                concept_id=concept_id,
                curator=curator,
                detail=detail,
                suggested_for=suggested_for,
            ),
        )

    def accept_rank(self, rank: int) -> DeskOp | None:
        """Accept candidate `rank` of the selected mention (None when it has no such candidate)."""
        ranked = self.ranked()
        if not 1 <= rank <= len(ranked):
            return None
        chosen = ranked[rank - 1]
        return self.decide(
            "accept", chosen.concept_id, detail={"rank": rank, "score": round(chosen.score, 4)}
        )

    def undo(self, text: str = "") -> DeskOp:
        """The newest step of the curator's history, whatever it was (core.jobs.curation.undo)."""
        project = self.project
        return DeskOp(f"undo {text}".strip(), lambda curator: curation.undo(project, curator))

    def redo(self, text: str = "") -> DeskOp:
        project = self.project
        return DeskOp(f"redo {text}".strip(), lambda curator: curation.redo(project, curator))

    def add_mention(self, start: int, end: int) -> DeskOp | None:
        """A mention over [start, end) of the open document, typed as most of its mentions are."""
        if self.doc is None:
            return None
        types = Counter(m.type for m in self.doc.mentions if m.type)
        kind = types.most_common(1)[0][0] if types else ""
        project, doc_id = self.project, self.doc.doc_id
        return DeskOp(
            f"add mention [{start}, {end})",
            lambda curator: curation.add_mention(project, doc_id, start, end, type=kind, curator=curator),
        )

    def delete_mention(self) -> DeskOp | None:
        mention_id, mention = self.current_mention_id(), self.current_mention()
        if mention_id is None or mention is None:
            return None
        project = self.project
        return DeskOp(
            f"delete mention {mention.text}",
            lambda curator: curation.delete_mention(project, mention_id, curator=curator),
        )

    def edit_span(self, mention_id: int, new: tuple[int, int], *, merge: bool, label: str = "") -> DeskOp:
        """One span edit; `merge`: nudges of the same mention in a row are one undo step."""
        project = self.project
        return DeskOp(
            label or "adjust boundaries",
            lambda curator: curation.edit_span(project, mention_id, *new, curator=curator, merge=merge),
        )

    def change_type(self, mention_id: int, old: str, new: str) -> DeskOp:
        project = self.project
        return DeskOp(
            f"type {old or '(none)'} → {new or '(none)'}",
            lambda curator: curation.change_type(project, mention_id, new, curator=curator),
        )

    def set_mark(self, kind: str, value: str, label: str, *, mention_id: int | None) -> DeskOp | None:
        """A note, flag or done mark on the selected mention (or, with no `mention_id`, the document)."""
        if self.doc is None:
            return None
        project, doc_id = self.project, self.doc.doc_id
        return DeskOp(
            label,
            lambda curator: curation.set_mark(
                project, kind, value, document=doc_id, mention_id=mention_id, curator=curator
            ),
        )

    def bulk_accept(
        self, threshold: float, *, scale: BulkScale | None = None, queue: QueueScope | None = None
    ) -> tuple[int, DeskOp | None]:
        """The top suggestion of every undecided mention (of the open document, or with `queue` the
        documents and type the queue shows) whose score reaches `threshold`, with a ranker in force only
        those it scored: how many, and the operation accepting them (None when there are none)."""
        scale = scale or read_scale(self.project)
        if queue is not None:
            tops = queue_top_suggestions(self.project, queue)
        else:
            tops = undecided_top_suggestions(self.project, self.mention_ids)
        accepts = [
            curation.BulkAccept(t.mention_id, t.concept_id, t.version, t.score, t.key)
            for t in scale.eligible(tops)
            if t.score >= threshold
        ]
        if not accepts:
            return 0, None
        project = self.project
        return len(accepts), DeskOp(
            f"bulk-accept {len(accepts)} suggestion(s) ≥ {threshold:.2f}",
            lambda curator: curation.bulk_accept(project, accepts, threshold, curator=curator),
        )

    def apply_to_identical(self, mention_id: int, targets: list[int], label: str) -> DeskOp:
        """`mention_id`'s decision on each of `targets` (identical mentions without one): one step."""
        project = self.project
        return DeskOp(
            label, lambda curator: curation.apply_to_identical(project, mention_id, targets, curator=curator)
        )

    def annotate_occurrences(
        self, text: str, *, document: str | None, kind: str, source: int | None, label: str
    ) -> DeskOp:
        """Every word-bounded occurrence of `text` (in `document`, or the project) a mention of `kind`,
        decided as `source` is when given: one step."""
        project = self.project
        return DeskOp(
            label,
            lambda curator: annotate_occurrences(
                project, text, document=document, type=kind, source=source, curator=curator
            ),
        )

    # --- what an operation changed ------------------------------------------------------------------

    def apply(
        self, changes: OpChanges, *, navigate: bool = False, follow: bool = True, advance: bool = False
    ) -> Redraw:
        """Take one operation's `OpChanges` into the open document's state (nothing is read for a
        decision) and say what to redraw: an edit of the open document's mentions, or a mention new
        there, means reading it again. `navigate` (an undo or redo) goes to the document and mention it
        changed; `follow` is False for a change saved late, which must not pull the selection from where
        the curator has moved on to; `advance` (a decision): select the mention to go to next
        (`next_after`), so moving on is part of the same redraw."""
        document, mention_id = changes.focus or (None, None)
        if navigate and document and (self.doc is None or self.doc.doc_id != document):
            return Redraw(open=(document, mention_id))
        if self.doc is None:
            return Redraw()
        keep = mention_id if (navigate or follow) and mention_id in self.mention_ids else None
        keep = keep if keep is not None else self.current_mention_id()
        new_here = (
            document == self.doc.doc_id and mention_id is not None and mention_id not in self.mention_ids
        )
        if new_here or set(changes.edited) & set(self.mention_ids):
            return Redraw(open=(self.doc.doc_id, mention_id if new_here else keep))
        for changed, decision in changes.decisions.items():
            if changed not in self.mention_ids:
                continue
            if decision is None:
                self.decisions.pop(changed, None)
            else:
                self.decisions[changed] = decision
        select = self.mention_ids.index(keep) if keep in self.mention_ids else self.current
        if advance and follow and mention_id in self.mention_ids:
            select = self.next_after(mention_id)
        return Redraw(select=select, reread_marks=self.doc.doc_id in changes.marks, changed=True)

    def run(self, op: DeskOp, *, navigate: bool = False, advance: bool = False) -> OpChanges:
        """Run an operation here and now, in the curator's name, and take in what it changed (a caller
        without a window: the desk runs `op.run` through its writer and calls `apply` itself)."""
        changes = op.run(self.curator())
        redraw = self.apply(changes, navigate=navigate, advance=advance)
        if redraw.open is not None and self.open(redraw.open[0]):
            keep = redraw.open[1]
            self.select(
                self.mention_ids.index(keep) if keep in self.mention_ids else self.first_open_mention()
            )
        elif redraw.changed:
            self.select(redraw.select)
        return changes
