"""What a desk component may ask of the window that holds it (app/gui/main_window.py).

The components (the View menu, background linking, the File menu, …) are built by the window with the
model, project, settings and widgets they work on, and this host for the little they must ask back: the
status bar, a key's action, the document view. Typed as a Protocol, so no component imports the window
(app/gui has no import cycle: tests/gui/test_desk_imports.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QStatusBar, QWidget


class DeskHost(Protocol):
    """The window, as its components see it."""

    menu_dialog: QWidget | None  # the dialog a menu or key opened last (kept alive; tests reach it)

    def statusBar(self) -> QStatusBar: ...

    def _action(
        self, text: str, keys: list, slot: Callable[[], object], *, menu=None, tip: str = ""
    ) -> QAction: ...

    def open_document(self, doc_id: str, *, mention_id: int | None = None) -> None: ...

    def select_mention(self, index: int | None) -> None: ...

    def redraw_document(self, select: int | None) -> None: ...

    def reload_queue(self) -> None: ...

    def activateWindow(self) -> None: ...
