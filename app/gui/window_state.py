"""The desk window's size, place and pane widths kept across restarts (issue 31: a curator who widened
the window to read long names found it back at 1,500 × 880 after every start).

Qt's own geometry and splitter-state blobs, in the user's settings (app/gui/settings.py): one window
state for every project, as an editor keeps one window size. A saved place on a screen that is gone is
moved back on screen by Qt's `restoreGeometry`."""

from __future__ import annotations

from PySide6.QtCore import QByteArray
from PySide6.QtWidgets import QMainWindow, QSplitter

from app.gui.settings import AppSettings


def restore_window(window: QMainWindow, settings: AppSettings) -> bool:
    """The window's last geometry, when one was saved and Qt accepts it (else the caller's default)."""
    geometry, _panes = settings.window_state()
    return bool(geometry) and window.restoreGeometry(QByteArray(geometry))


def restore_panes(splitter: QSplitter, settings: AppSettings) -> bool:
    """The queue / abstract / candidates widths as last left (once the window has its size)."""
    _geometry, panes = settings.window_state()
    return bool(panes) and splitter.restoreState(QByteArray(panes))


def remember_window(window: QMainWindow, splitter: QSplitter, settings: AppSettings) -> None:
    settings.set_window_state(bytes(window.saveGeometry().data()), bytes(splitter.saveState().data()))
    settings.sync()
