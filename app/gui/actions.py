"""Undoable curator actions. Each one writes to the store the moment it runs (no save button).

The decision log is append-only: undoing a decision writes a `revert`, redoing writes the decision
again, so the history of what the curator did survives every undo.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtGui import QUndoCommand

from core.store.project import NewDecision


@dataclass
class DeskContext:
    """What every command needs: the store, who is acting, and how to refresh the window after."""

    project: object
    curator: Callable[[], str]
    refresh: Callable[[int | None], None]  # re-read the store, then select this mention (by id)


class DecisionCommand(QUndoCommand):
    def __init__(
        self,
        context: DeskContext,
        mention_id: int,
        action: str,
        *,
        concept_id: str = "",
        model_version: str = "",
        detail: dict | None = None,
        text: str = "",
    ):
        super().__init__(text or f"{action} {concept_id}".strip())
        self.context = context
        self.mention_id = mention_id
        self.action = action
        self.concept_id = concept_id
        self.model_version = model_version
        self.detail = detail or {}

    def redo(self) -> None:
        self.context.project.record_decision(
            self.mention_id,
            self.action,
            concept_id=self.concept_id,
            curator=self.context.curator(),
            model_version=self.model_version,
            detail=self.detail,
        )
        self.context.refresh(self.mention_id)

    def undo(self) -> None:
        self.context.project.record_decision(
            self.mention_id, "revert", curator=self.context.curator(), detail={"undo": self.action}
        )
        self.context.refresh(self.mention_id)


class BulkAcceptCommand(QUndoCommand):
    """Accept many top suggestions as one undo step: one decision row per mention, all written in one
    transaction (and undone by one transaction of reverts), so a crash never leaves half a bulk."""

    def __init__(self, context: DeskContext, accepts: list[tuple[int, str, str, float]], threshold: float):
        super().__init__(f"bulk-accept {len(accepts)} suggestion(s) ≥ {threshold:.2f}")
        self.context = context
        self.accepts = accepts
        self.threshold = threshold

    def redo(self) -> None:
        curator = self.context.curator()
        self.context.project.record_decisions(
            [
                NewDecision(
                    mention_id,
                    "accept",
                    concept_id=concept_id,
                    curator=curator,
                    model_version=version,
                    detail={"bulk_threshold": self.threshold, "score": round(score, 4)},
                )
                for mention_id, concept_id, version, score in self.accepts
            ]
        )
        self.context.refresh(None)

    def undo(self) -> None:
        curator = self.context.curator()
        self.context.project.record_decisions(
            [
                NewDecision(mention_id, "revert", curator=curator, detail={"undo": "accept"})
                for mention_id, *_rest in reversed(self.accepts)
            ]
        )
        self.context.refresh(None)


class AddMentionCommand(QUndoCommand):
    """The first redo creates the mention; undo flags it removed; later redos restore the same row."""

    def __init__(self, context: DeskContext, document_id: str, start: int, end: int, type: str = ""):
        super().__init__(f"add mention [{start}, {end})")
        self.context = context
        self.document_id = document_id
        self.start = start
        self.end = end
        self.type = type
        self.mention_id: int | None = None

    def redo(self) -> None:
        if self.mention_id is None:
            self.mention_id = self.context.project.add_mention(
                self.document_id, self.start, self.end, type=self.type, curator=self.context.curator()
            )
        else:
            self.context.project.set_mention_removed(self.mention_id, False, curator=self.context.curator())
        self.context.refresh(self.mention_id)

    def undo(self) -> None:
        assert self.mention_id is not None
        self.context.project.set_mention_removed(self.mention_id, True, curator=self.context.curator())
        self.context.refresh(None)


class DeleteMentionCommand(QUndoCommand):
    def __init__(self, context: DeskContext, mention_id: int, label: str):
        super().__init__(f"delete mention {label}")
        self.context = context
        self.mention_id = mention_id

    def redo(self) -> None:
        self.context.project.set_mention_removed(self.mention_id, True, curator=self.context.curator())
        self.context.refresh(None)

    def undo(self) -> None:
        self.context.project.set_mention_removed(self.mention_id, False, curator=self.context.curator())
        self.context.refresh(self.mention_id)


class AdjustSpanCommand(QUndoCommand):
    """Boundary moves on one mention merge into one undo step while the curator keeps nudging.

    Every nudge (and the undo) logs an `adjust_span` decision with old and new offsets: provenance for
    the span, ignored by the link state.
    """

    ID = 4711

    def __init__(self, context: DeskContext, mention_id: int, old: tuple[int, int], new: tuple[int, int]):
        super().__init__("adjust boundaries")
        self.context = context
        self.mention_id = mention_id
        self.old = old
        self.new = new

    def id(self) -> int:
        return self.ID

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, AdjustSpanCommand) or other.mention_id != self.mention_id:
            return False
        self.new = other.new
        return True

    def redo(self) -> None:
        self.context.project.set_mention_span(self.mention_id, *self.new, curator=self.context.curator())
        self.context.refresh(self.mention_id)

    def undo(self) -> None:
        self.context.project.set_mention_span(self.mention_id, *self.old, curator=self.context.curator())
        self.context.refresh(self.mention_id)
