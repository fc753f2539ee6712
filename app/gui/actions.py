"""Undoable curator actions. Each one writes to the store the moment it is made (no save button).

A command's `write_redo` / `write_undo` touch the store; the window runs them through its one writer
(app/gui/desk_writer.py), which may hold a change back while another program has the database locked.
The undo stack moves only once the store has confirmed the write: `push`, `undo` and `redo` then call the
command's `redo` / `undo`, which only show the result. So the undo stack never lists a change the store
does not have, and a change the store refused never enters it.

The decision log is append-only: undoing a decision writes a `revert`, redoing writes the decision
again, so the history of what the curator did survives every undo. A span or type edit (and its undo)
deletes the mention's suggestions in the store and asks for new ones at once.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtGui import QUndoCommand

from core.store.curation_log import MentionKey
from core.store.project import NewDecision


@dataclass
class DeskContext:
    """What every command needs: the store, who is acting, and how to refresh the window after."""

    project: object
    curator: Callable[[], str]
    # Re-read the store, then select this mention (by id); `changed=` names the mentions written, whose
    # documents' queue rows are re-read (without it, the whole queue).
    refresh: Callable[..., None]
    resuggest: Callable[[int], None] = lambda _mention_id: None  # new suggestions for an edited mention
    report: Callable[[Exception], None] = lambda _exc: None  # tell the curator a write was refused


class StoreCommand(QUndoCommand):
    """A change the store confirms before the undo stack shows it.

    `write_redo` and `write_undo` may run off the UI thread: they get the curator's name as an argument
    and touch nothing but the store and the command itself. `show_redo` and `show_undo` run on the UI
    thread when the stack moves. `follow` is cleared for a change saved late (it waited for the lock),
    so showing it does not pull the selection back from where the curator has moved on to.
    """

    # A change of decisions only (the document's text, mentions and suggestions stay as shown): the
    # window then re-reads just those decisions.
    decisions_only = False

    def __init__(self, context: DeskContext, text: str):
        super().__init__(text)
        self.context = context
        self.follow = True

    def write_redo(self, curator: str) -> object:
        raise NotImplementedError

    def write_undo(self, curator: str) -> object:
        raise NotImplementedError

    def changed(self) -> list[int]:
        """The mentions this change writes (their documents' queue rows are refreshed)."""
        mention_id = getattr(self, "mention_id", None)
        return [] if mention_id is None else [mention_id]

    def display(self, select: int | None) -> None:
        self.context.refresh(select, changed=self.changed(), decisions_only=self.decisions_only)

    def show_redo(self) -> None:
        self.display(None)

    def show_undo(self) -> None:
        self.display(None)

    def redo(self) -> None:
        if not self.isObsolete():
            self.show_redo()

    def undo(self) -> None:
        if not self.isObsolete():
            self.show_undo()


class DecisionCommand(StoreCommand):
    """One decision; `concept_id` may name several concepts (`A|B|C`) and is undone as one step."""

    decisions_only = True

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
        super().__init__(context, text or f"{action} {concept_id}".strip())
        self.mention_id = mention_id
        self.action = action
        self.concept_id = concept_id
        self.model_version = model_version
        self.detail = detail or {}
        self.suggested_for = suggested_for

    def write_redo(self, curator: str) -> int:
        return self.context.project.record_decision(
            self.mention_id,
            self.action,
            concept_id=self.concept_id,
            curator=curator,
            model_version=self.model_version,
            detail=self.detail,
            suggested_for=self.suggested_for,
        )

    def write_undo(self, curator: str) -> int:
        return self.context.project.record_decision(
            self.mention_id, "revert", curator=curator, detail={"undo": self.action}
        )

    def show_redo(self) -> None:
        self.display(self.mention_id if self.follow else None)

    def show_undo(self) -> None:
        self.display(self.mention_id)


class BulkAcceptCommand(StoreCommand):
    """Accept many top suggestions as one undo step: one decision row per mention, all written in one
    transaction (and undone by one transaction of reverts), so a crash never leaves half a bulk.
    Each accept is `(mention id, concept id, model version, score, span and type of its suggestions)`."""

    decisions_only = True

    def __init__(
        self,
        context: DeskContext,
        accepts: list[tuple[int, str, str, float, MentionKey]],
        threshold: float,
    ):
        super().__init__(context, f"bulk-accept {len(accepts)} suggestion(s) ≥ {threshold:.2f}")
        self.accepts = accepts
        self.threshold = threshold
        self.batch = uuid.uuid4().hex[:12]  # one id for the lot: restored as one undo step after a restart

    def changed(self) -> list[int]:
        return [mention_id for mention_id, *_rest in self.accepts]

    def write_redo(self, curator: str) -> list[int]:
        return self.context.project.record_decisions(
            [
                NewDecision(
                    mention_id,
                    "accept",
                    concept_id=concept_id,
                    curator=curator,
                    model_version=version,
                    detail={"bulk_threshold": self.threshold, "score": round(score, 4), "batch": self.batch},
                    suggested_for=key,
                )
                for mention_id, concept_id, version, score, key in self.accepts
            ]
        )

    def write_undo(self, curator: str) -> list[int]:
        return self.context.project.record_decisions(
            [
                NewDecision(mention_id, "revert", curator=curator, detail={"undo": "accept"})
                for mention_id, *_rest in reversed(self.accepts)
            ]
        )


class AddMentionCommand(StoreCommand):
    """The first redo creates the mention; undo flags it removed; later redos restore the same row."""

    def __init__(self, context: DeskContext, document_id: str, start: int, end: int, type: str = ""):
        super().__init__(context, f"add mention [{start}, {end})")
        self.document_id = document_id
        self.start = start
        self.end = end
        self.type = type
        self.mention_id: int | None = None

    def write_redo(self, curator: str) -> None:
        if self.mention_id is None:
            self.mention_id = self.context.project.add_mention(
                self.document_id, self.start, self.end, type=self.type, curator=curator
            )
        else:
            self.context.project.set_mention_removed(self.mention_id, False, curator=curator)

    def write_undo(self, curator: str) -> None:
        assert self.mention_id is not None
        self.context.project.set_mention_removed(self.mention_id, True, curator=curator)

    def show_redo(self) -> None:
        assert self.mention_id is not None
        self.context.resuggest(self.mention_id)
        self.display(self.mention_id if self.follow else None)


class DeleteMentionCommand(StoreCommand):
    def __init__(self, context: DeskContext, mention_id: int, label: str):
        super().__init__(context, f"delete mention {label}")
        self.mention_id = mention_id

    def write_redo(self, curator: str) -> None:
        self.context.project.set_mention_removed(self.mention_id, True, curator=curator)

    def write_undo(self, curator: str) -> None:
        self.context.project.set_mention_removed(self.mention_id, False, curator=curator)

    def show_undo(self) -> None:
        self.display(self.mention_id)


class AdjustSpanCommand(StoreCommand):
    """Boundary moves on one mention merge into one undo step while the curator keeps nudging.

    Every nudge (and the undo) logs an `adjust_span` decision with old and new offsets: provenance for
    the span, ignored by the link state. Each one also replaces the mention's suggestions (the store
    deletes the old ones with the edit; new ones are asked for at once).
    """

    ID = 4711

    def __init__(self, context: DeskContext, mention_id: int, old: tuple[int, int], new: tuple[int, int]):
        super().__init__(context, "adjust boundaries")
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

    def write_redo(self, curator: str) -> None:
        self.context.project.set_mention_span(self.mention_id, *self.new, curator=curator)

    def write_undo(self, curator: str) -> None:
        self.context.project.set_mention_span(self.mention_id, *self.old, curator=curator)

    def show_redo(self) -> None:
        self.context.resuggest(self.mention_id)
        self.display(self.mention_id if self.follow else None)

    def show_undo(self) -> None:
        self.context.resuggest(self.mention_id)
        self.display(self.mention_id)


class ChangeTypeCommand(StoreCommand):
    """A new type for one mention (logged as `change_type`); like a span edit, it re-suggests."""

    def __init__(self, context: DeskContext, mention_id: int, old: str, new: str):
        super().__init__(context, f"type {old or '(none)'} → {new or '(none)'}")
        self.mention_id = mention_id
        self.old = old
        self.new = new

    def write_redo(self, curator: str) -> None:
        self.context.project.set_mention_type(self.mention_id, self.new, curator=curator)

    def write_undo(self, curator: str) -> None:
        self.context.project.set_mention_type(self.mention_id, self.old, curator=curator)

    def show_redo(self) -> None:
        self.context.resuggest(self.mention_id)
        self.display(self.mention_id if self.follow else None)

    def show_undo(self) -> None:
        self.context.resuggest(self.mention_id)
        self.display(self.mention_id)
