"""Undoable commands of the curator features of issue 12 item 4: a decision copied to identical mentions,
a note or flag, a word-wise span move, and the decisions restored into the undo stack from the log.

Like those of app/gui/actions.py they write through the desk's writer and enter the stack once stored;
`write_redo` / `write_undo` touch only the store and the command (they may run off the UI thread).
"""

from __future__ import annotations

from app.gui.actions import AdjustSpanCommand, DecisionCommand, DeskContext, StoreCommand
from core.store.curation_log import NewDecision
from core.store.identical_mentions import apply_to_identical, revert_all


class IdenticalCommand(StoreCommand):
    """The source mention's decision copied to identical undecided mentions: one transaction, undone by
    one transaction of reverts of exactly the mentions it decided."""

    decisions_only = True

    def __init__(self, context: DeskContext, source: int, targets: list[int], label: str):
        super().__init__(context, label)
        self.source = source
        self.targets = list(targets)
        self.written: list[int] = []

    def changed(self) -> list[int]:
        return [self.source, *self.targets]

    def write_redo(self, curator: str) -> object:
        changes = apply_to_identical(self.context.project, self.source, self.targets, curator=curator)
        self.written = sorted(changes.mentions)
        return changes

    def write_undo(self, curator: str) -> object:
        return revert_all(self.context.project, self.written, curator=curator, undoing="identical")

    def show_redo(self) -> None:
        self.display(self.source if self.follow else None)

    def show_undo(self) -> None:
        self.display(self.source)


class MarkCommand(StoreCommand):
    """A note, flag or done mark set (or cleared) on a mention or a document; undo puts the old value back
    (as a new row: the marks are append-only)."""

    def __init__(
        self,
        context: DeskContext,
        kind: str,
        old: str,
        new: str,
        *,
        document: str,
        mention_id: int | None = None,
        label: str = "",
    ):
        super().__init__(context, label or f"{kind} {'set' if new else 'cleared'}")
        self.kind, self.old, self.new = kind, old, new
        self.document = document
        self.mention_id = mention_id

    def _write(self, value: str, curator: str) -> int:
        return self.context.project.set_mark(
            self.kind, value, document=self.document, mention_id=self.mention_id, curator=curator
        )

    def write_redo(self, curator: str) -> int:
        return self._write(self.new, curator)

    def write_undo(self, curator: str) -> int:
        return self._write(self.old, curator)

    def show_redo(self) -> None:
        self.display(self.mention_id if self.follow else None)

    def show_undo(self) -> None:
        self.display(self.mention_id)


class WordSpanCommand(AdjustSpanCommand):
    """A span edge moved by a word: one undo step per move (character nudges merge; word moves do not)."""

    def id(self) -> int:
        return -1


class RestoredDecisionCommand(DecisionCommand):
    """A decision read back from the log when the desk opens: already stored, so entering the stack shows
    nothing; its undo writes a revert, its redo the decision again, like one made in this session."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.restoring = True

    def redo(self) -> None:
        if self.restoring:
            self.restoring = False
            return
        super().redo()


class RestoredBatchCommand(StoreCommand):
    """Decisions written together (a copy to identical mentions, a bulk accept), read back from the log:
    one undo step of reverts, one redo writing them again, as before the restart. `decisions` are
    (mention id, action, concept id, detail)."""

    decisions_only = True

    def __init__(self, context: DeskContext, decisions: list[tuple[int, str, str, dict]], label: str):
        super().__init__(context, label)
        self.decisions = decisions
        self.restoring = True

    def changed(self) -> list[int]:
        return [mention_id for mention_id, *_rest in self.decisions]

    def write_redo(self, curator: str) -> object:
        return self.context.project.decide(
            [
                NewDecision(mention_id, action, concept_id=concept_id, curator=curator, detail=detail)
                for mention_id, action, concept_id, detail in self.decisions
            ]
        )

    def write_undo(self, curator: str) -> object:
        return revert_all(self.context.project, self.changed(), curator=curator, undoing="batch")

    def redo(self) -> None:
        if self.restoring:
            self.restoring = False
            return
        super().redo()
