"""What a desk component may ask of the window that holds it (app/gui/main_window.py).

The components (the document view, the curation keys, saving, background linking, the File and View
menus, …) are built by the window with the model, settings, services and widgets they work on, and this
host for the little they must ask back: the status bar, a key's action, the document on screen. Typed as
Protocols, so no component imports the window or the document view it calls back (app/gui has no import
cycle: tests/gui/test_desk_imports.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDialog, QStatusBar, QWidget

from core.store.op_changes import OpChanges


class DocumentNavigation(Protocol):
    """The document on screen (app/gui/desk_document.py's `DocumentView`), as other components move it."""

    def open_document(self, doc_id: str, *, mention_id: int | None = None) -> None: ...

    def select_mention(self, index: int | None) -> None: ...

    def redraw_document(self, select: int | None) -> None: ...

    def reload_queue(self) -> None: ...

    def refresh(self, mention_id: int | None = None) -> None: ...

    def show_changes(self, changes: OpChanges, *, navigate: bool = False, follow: bool = True) -> None: ...


class DeskHost(Protocol):
    """The window, as its components see it."""

    menu_dialog: QWidget | None  # the dialog a menu or key opened last (kept alive; tests reach it)
    document: DocumentNavigation

    def statusBar(self) -> QStatusBar: ...

    def activateWindow(self) -> None: ...

    def isVisible(self) -> bool: ...

    def keys_back(self, dialog: QDialog) -> None: ...

    def key_action(
        self, text: str, keys: list, slot: Callable[[], object], *, menu=None, tip: str = ""
    ) -> QAction: ...
