"""What a store operation changed, so a front end refreshes only that (Anki's `OpChanges` idea).

A decision, an undo, a bulk accept, a span or type edit and a relink each return one: the decisions they
wrote, the mentions whose state, span or suggestions changed, the documents (external ids) those belong
to, and how many mentions became decided or undecided (the queue's reviewed counts move by that).

The curation operations (core.jobs.curation.operations) fill in the rest, read once after their write, so a desk
redraws from the value alone: the decision now in force on each changed mention (None: undecided), the
queue rows and facets of the documents touched, the mentions whose span, type or presence changed (their
document is read again and they are suggested again), the documents whose notes or marks changed, what the
operation did (`label`), where it happened (`focus`: document and mention), and the curator's undo history
after it (`history`).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class History:
    """A curator's undo history as a desk shows it: one label per step, oldest first; the first `done`
    steps can be undone (newest last), the others redone (next first)."""

    labels: tuple[str, ...] = ()
    done: int = 0

    @property
    def undo_text(self) -> str:
        return self.labels[self.done - 1] if self.done else ""

    @property
    def redo_text(self) -> str:
        return self.labels[self.done] if self.done < len(self.labels) else ""


@dataclass(frozen=True, eq=False)
class OpChanges:
    decision_ids: tuple[int, ...] = ()
    mentions: frozenset[int] = field(default_factory=frozenset)
    documents: frozenset[str] = field(default_factory=frozenset)
    newly_decided: int = 0
    undecided: int = 0
    # Filled by core.jobs.curation.operations (see the module text); empty from the bare store calls.
    decisions: dict = field(default_factory=dict)  # mention id -> Decision in force, or None
    queue: tuple = ()  # QueueEntry of each touched document
    facets: dict = field(default_factory=dict)  # document id -> DocumentFacets
    edited: frozenset[int] = field(default_factory=frozenset)
    marks: frozenset[str] = field(default_factory=frozenset)
    label: str = ""
    focus: tuple[str, int | None] | None = None
    history: History | None = None
    merged: bool = False  # a span nudge folded into the step below it (one undo for the lot)
    relearn: frozenset[int] = field(default_factory=frozenset)  # mentions whose teaching changed (a
    # learnt synonym removed or allowed again): a loaded linker learns from them again

    def __or__(self, other: OpChanges) -> OpChanges:
        return OpChanges(
            self.decision_ids + other.decision_ids,
            self.mentions | other.mentions,
            self.documents | other.documents,
            self.newly_decided + other.newly_decided,
            self.undecided + other.undecided,
            edited=self.edited | other.edited,
            marks=self.marks | other.marks,
            relearn=self.relearn | other.relearn,
        )
