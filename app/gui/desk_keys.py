"""The desk's keys wherever the focus is in its window.

Qt fires a window's shortcuts only while it counts that window as the active one. When it does not (a
dialog just closed and the window manager has not given the focus back, or no window manager at all,
as under Xvfb), a key still reaches the widget holding the focus: in the queue a letter was a type-ahead
search by title that opened another document ("D" opened "Detection of…"), Enter did nothing, and the
keys that followed acted on a document the curator never chose (issue 31). Here every key press that
reaches the window's own widgets is matched against the desk's actions and runs the one it names; a
letter that names none is refused with a status line, never passed to a widget's type-ahead. The
queue keeps its arrow keys (the curator moving to a row), the candidates their arrows, the concept pane
its copy keys.

Where the focus is shows: the pane holding it is framed (resources/style.qss, `:focus`), and a dialog
that closes hands the keys back to the desk (`keys_back`).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QApplication, QDialog, QWidget

from app.gui.desk_host import DeskHost

# Keys a focused pane keeps for itself when no desk action names them (moving in a list, copying).
PANE_KEYS = {
    Qt.Key.Key_Up,
    Qt.Key.Key_Down,
    Qt.Key.Key_Home,
    Qt.Key.Key_End,
    Qt.Key.Key_Left,
    Qt.Key.Key_Right,
}
MODIFIERS = {Qt.Key.Key_Shift, Qt.Key.Key_Control, Qt.Key.Key_Alt, Qt.Key.Key_Meta, Qt.Key.Key_AltGr}


def sequences(event: QKeyEvent) -> list[QKeySequence]:
    """The key sequences a press can mean, as Qt's shortcut map tries them: as typed, and for a symbol
    typed with Shift ("?", Shift+Tab as Backtab) without the Shift; the keypad's Enter as Enter."""
    modifiers = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
    key = Qt.Key(event.key())
    found = [QKeySequence(key | modifiers)]
    letter = Qt.Key.Key_A.value <= key.value <= Qt.Key.Key_Z.value
    if modifiers & Qt.KeyboardModifier.ShiftModifier and not letter:
        found.append(QKeySequence(key | (modifiers & ~Qt.KeyboardModifier.ShiftModifier)))
    return found


class DeskKeys(QObject):
    """The keys of the window (`host`) for the widgets that can hold its focus."""

    def __init__(self, host: DeskHost, window: QWidget):
        super().__init__(window)
        self.host, self.window = host, window

    def install(self, *widgets: QWidget) -> None:
        for widget in widgets:
            widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() != QEvent.Type.KeyPress:
            return False
        return self.dispatch(event)  # type: ignore[arg-type]

    def action_for(self, event: QKeyEvent) -> QAction | None:
        wanted = sequences(event)
        for action in self.window.actions():
            if any(shortcut in wanted for shortcut in action.shortcuts()):
                return action
        return None

    def dispatch(self, event: QKeyEvent) -> bool:
        """Run the desk action a key names (True: the key is used up); refuse, with a status line, a
        printable key that names none; leave the rest (arrows, copy) to the widget that has the focus."""
        if event.key() in MODIFIERS:
            return False
        action = self.action_for(event)
        if action is not None:
            if action.isEnabled():
                action.trigger()
            else:
                self.host.statusBar().showMessage(f"{action.text()}: not available now", 4000)
            return True
        if event.key() in PANE_KEYS:
            return False
        text = event.text()
        plain = not event.modifiers() & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier)
        if plain and text and text.isprintable():
            self.host.statusBar().showMessage(f"“{text}” is not a desk key (F1 lists them)", 4000)
            return True
        return False

    def keys_back(self, dialog: QDialog) -> None:
        """When `dialog` closes, the desk's window is active again and its keys work at once."""
        dialog.finished.connect(lambda _result: self._activate())

    def _activate(self) -> None:
        if self._dialog_open():
            return
        self.window.activateWindow()
        self.window.raise_()
        QTimer.singleShot(0, self.window, self._activate_again)

    def _activate_again(self) -> None:
        """Once more after the dialog is gone, unless a key typed meanwhile opened another one."""
        if not self._dialog_open():
            self.window.activateWindow()

    def _dialog_open(self) -> bool:
        return any(d.isVisible() for d in self.window.findChildren(QDialog)) or bool(
            QApplication.activeModalWidget()
        )
