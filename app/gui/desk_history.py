"""The desk's view of the curator's undo history. The history itself is in the project (core.jobs.curation.undo):
every curation operation, undo and redo (core.jobs.curation.operations) returns it in its `OpChanges`, and the desk
only shows it: the Edit menu's "Undo …" / "Redo …" texts, and `count()` / `index()` for tests and tools.

There is no command object holding a change: a key press runs one core operation through the desk's
writer (app/gui/desk_writer.py), and what it returns is what the window redraws.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal

from core.store.op_changes import History


@dataclass(frozen=True)
class Entry:
    """One step as a QUndoStack command would show it."""

    label: str

    def text(self) -> str:
        return self.label


class DeskHistory(QObject):
    """The curator's history as the store last reported it (labels oldest first, `index()` done)."""

    changed = Signal()
    undoTextChanged = Signal(str)
    redoTextChanged = Signal(str)
    canUndoChanged = Signal(bool)
    canRedoChanged = Signal(bool)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.history = History()

    def set(self, history: History | None) -> None:
        if history is None or history == self.history:
            return
        before = self.history
        self.history = history
        if before.undo_text != history.undo_text:
            self.undoTextChanged.emit(history.undo_text)
        if before.redo_text != history.redo_text:
            self.redoTextChanged.emit(history.redo_text)
        if bool(before.done) != bool(history.done):
            self.canUndoChanged.emit(bool(history.done))
        if (before.done < len(before.labels)) != self.canRedo():
            self.canRedoChanged.emit(self.canRedo())
        self.changed.emit()

    def count(self) -> int:
        return len(self.history.labels)

    def index(self) -> int:
        return self.history.done

    def command(self, index: int) -> Entry:
        return Entry(self.history.labels[index])

    def canUndo(self) -> bool:
        return self.history.done > 0

    def canRedo(self) -> bool:
        return self.history.done < len(self.history.labels)

    def undoText(self) -> str:
        return self.history.undo_text

    def redoText(self) -> str:
        return self.history.redo_text
