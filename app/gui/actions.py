"""Undoable curator actions. Each one writes to the store the moment it runs (no save button).

The decision log is append-only: undoing a decision writes a `revert`, redoing writes the decision
again, so the history of what the curator did survives every undo. A span or type edit (and its undo)
deletes the mention's suggestions in the store and asks for new ones at once.

A decision the store refuses (it acted on suggestions for a span the mention no longer has) marks its
command obsolete, so the undo stack drops it rather than keeping a step that never happened.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtGui import QUndoCommand

from core.errors import CuralinkError
from core.store.curation_log import MentionKey
from core.store.project import NewDecision


@dataclass
class DeskContext:
    """What every command needs: the store, who is acting, and how to refresh the window after."""

    project: object
    curator: Callable[[], str]
    refresh: Callable[[int | None], None]  # re-read the store, then select this mention (by id)
    resuggest: Callable[[int], None] = lambda _mention_id: None  # new suggestions for an edited mention
    report: Callable[[Exception], None] = lambda _exc: None  # tell the curator a write was refused


class _Refusable(QUndoCommand):
    """A command whose write the store may refuse: it then reports why and leaves the undo stack."""

    failed: Exception | None = None

    def _attempt(self, write: Callable[[], object]) -> bool:
        try:
            write()
        except CuralinkError as exc:
            self.failed = exc
            self.setObsolete(True)
            self.context.report(exc)
            return False
        self.failed = None
        return True


class DecisionCommand(_Refusable):
    """One decision; `concept_id` may name several concepts (`A|B|C`) and is undone as one step."""

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
        suggested_for: MentionKey | None = None,
    ):
        super().__init__(text or f"{action} {concept_id}".strip())
        self.context = context
        self.mention_id = mention_id
        self.action = action
        self.concept_id = concept_id
        self.model_version = model_version
        self.detail = detail or {}
        self.suggested_for = suggested_for

    def redo(self) -> None:
        self._attempt(
            lambda: self.context.project.record_decision(
                self.mention_id,
                self.action,
                concept_id=self.concept_id,
                curator=self.context.curator(),
                model_version=self.model_version,
                detail=self.detail,
                suggested_for=self.suggested_for,
            )
        )
        self.context.refresh(self.mention_id)

    def undo(self) -> None:
        self.context.project.record_decision(
            self.mention_id, "revert", curator=self.context.curator(), detail={"undo": self.action}
        )
        self.context.refresh(self.mention_id)


class BulkAcceptCommand(_Refusable):
    """Accept many top suggestions as one undo step: one decision row per mention, all written in one
    transaction (and undone by one transaction of reverts), so a crash never leaves half a bulk.
    Each accept is `(mention id, concept id, model version, score, span and type of its suggestions)`."""

    def __init__(
        self,
        context: DeskContext,
        accepts: list[tuple[int, str, str, float, MentionKey]],
        threshold: float,
    ):
        super().__init__(f"bulk-accept {len(accepts)} suggestion(s) ≥ {threshold:.2f}")
        self.context = context
        self.accepts = accepts
        self.threshold = threshold

    def redo(self) -> None:
        curator = self.context.curator()
        self._attempt(
            lambda: self.context.project.record_decisions(
                [
                    NewDecision(
                        mention_id,
                        "accept",
                        concept_id=concept_id,
                        curator=curator,
                        model_version=version,
                        detail={"bulk_threshold": self.threshold, "score": round(score, 4)},
                        suggested_for=key,
                    )
                    for mention_id, concept_id, version, score, key in self.accepts
                ]
            )
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
        self.context.resuggest(self.mention_id)
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
    the span, ignored by the link state. Each one also replaces the mention's suggestions (the store
    deletes the old ones with the edit; new ones are asked for at once).
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
        self.context.resuggest(self.mention_id)
        self.context.refresh(self.mention_id)

    def undo(self) -> None:
        self.context.project.set_mention_span(self.mention_id, *self.old, curator=self.context.curator())
        self.context.resuggest(self.mention_id)
        self.context.refresh(self.mention_id)


class ChangeTypeCommand(QUndoCommand):
    """A new type for one mention (logged as `change_type`); like a span edit, it re-suggests."""

    def __init__(self, context: DeskContext, mention_id: int, old: str, new: str):
        super().__init__(f"type {old or '(none)'} → {new or '(none)'}")
        self.context = context
        self.mention_id = mention_id
        self.old = old
        self.new = new

    def _set(self, kind: str) -> None:
        self.context.project.set_mention_type(self.mention_id, kind, curator=self.context.curator())
        self.context.resuggest(self.mention_id)
        self.context.refresh(self.mention_id)

    def redo(self) -> None:
        self._set(self.new)

    def undo(self) -> None:
        self._set(self.old)
