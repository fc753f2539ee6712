"""One operation, one signal (Anki's shape): every curation operation the desk runs ends in one
`OpChanges` (core.store.op_changes), emitted once as a `Shown` on `DeskChanges.applied`; the window's
parts subscribe to it (the undo history, the document view that redraws the queue rows, the abstract,
the candidates and the concept pane, then the loaded linker that learns from it). A decision's "go to
the next mention" rides in the same value (`advance`), so one Enter is one redraw
(tests/gui/test_enter_cost.py)."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal

from core.store.op_changes import OpChanges


@dataclass(frozen=True)
class Shown:
    """What one operation changed and how the desk takes it in: `navigate` (an undo or redo) goes to
    the document and mention it changed; `follow` is False for a change saved late, which must not pull
    the selection from where the curator moved on to; `advance` (a decision) moves on to the next
    undecided mention in the same redraw."""

    changes: OpChanges
    navigate: bool = False
    follow: bool = True
    advance: bool = False


class DeskChanges(QObject):
    """The desk's one change signal; subscribers are called in the order they connected."""

    applied = Signal(object)  # Shown

    def emit(self, shown: Shown) -> None:
        self.applied.emit(shown)
