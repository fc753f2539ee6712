"""What a store operation changed, so a front end refreshes only that (Anki's `OpChanges` idea).

A decision, an undo, a bulk accept, a span or type edit and a relink each return one: the decisions they
wrote, the mentions whose state, span or suggestions changed, the documents (external ids) those belong
to, and how many mentions became decided or undecided (the queue's reviewed counts move by that).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class OpChanges:
    decision_ids: tuple[int, ...] = ()
    mentions: frozenset[int] = field(default_factory=frozenset)
    documents: frozenset[str] = field(default_factory=frozenset)
    newly_decided: int = 0
    undecided: int = 0

    def __or__(self, other: OpChanges) -> OpChanges:
        return OpChanges(
            self.decision_ids + other.decision_ids,
            self.mentions | other.mentions,
            self.documents | other.documents,
            self.newly_decided + other.newly_decided,
            self.undecided + other.undecided,
        )
