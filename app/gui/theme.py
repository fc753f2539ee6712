"""Light or dark: the desk follows the system colour scheme (Qt 6.5+ `QStyleHints.colorScheme`, and its
`colorSchemeChanged` signal while it runs). `CURALINK_THEME=dark|light` overrides the system (Xvfb has
no colour scheme to follow; the dark screenshot uses it).

One style sheet (resources/style.qss) is written for light; the dark one is derived from it by the
colour map below, so a rule added to the light sheet is never missing from the dark one (a test checks
every colour of the sheet is mapped). Mention states switch to their dark table (app/gui/states.py):
light text on deep fills, white on the strong colour for the selected mention.
"""

from __future__ import annotations

import os
import re

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from app.gui.states import use_dark

ENV = "CURALINK_THEME"
# Every colour of resources/style.qss -> its dark counterpart.
DARK_QSS = {
    "#f4f6f9": "#1b1f25",  # window
    "#1d2430": "#e3e7ee",  # text
    "#1b3f7a": "#8fb8ff",  # pane titles
    "#5f6b7a": "#9aa5b4",  # hints
    "#f2f4f8": "#f2f4f8",  # key help (on its own dark sheet)
    "#ffffff": "#23282f",  # fields, tables, text
    "#d4dae3": "#3a414c",  # borders
    "#ffe08a": "#7a6212",  # selected text
    "#eef1f5": "#2c323b",  # grid, headers
    "#f7f9fc": "#272c34",  # alternate rows
    "#2f6fd0": "#2f6fd0",  # selected row
    "#3a4555": "#c5ccd6",  # header and status text
    "#e3e8ef": "#2c323b",  # splitter handles
    "#e9edf3": "#20252c",  # status bar
    "#cfd6e0": "#3a414c",  # status separators, progress border
    "#7fb0f0": "#3d6fb5",  # progress
    "#c3ccd8": "#4a525e",  # button border
    "#eef4ff": "#2d3848",  # button hover
}
_HEX = re.compile(r"#[0-9a-fA-F]{6}\b")
_ORIGINAL: dict[str, QPalette] = {}


def dark_style_sheet(light: str) -> str:
    """The light sheet with each colour replaced at once (no chained replacements)."""
    return _HEX.sub(lambda m: DARK_QSS.get(m.group(0).lower(), m.group(0)), light)


def dark_palette() -> QPalette:
    palette = QPalette()
    roles = QPalette.ColorRole
    for role, colour in (
        (roles.Window, "#1b1f25"),
        (roles.WindowText, "#e3e7ee"),
        (roles.Base, "#23282f"),
        (roles.AlternateBase, "#272c34"),
        (roles.Text, "#e3e7ee"),
        (roles.Button, "#2a3038"),
        (roles.ButtonText, "#e3e7ee"),
        (roles.BrightText, "#ffffff"),
        (roles.Highlight, "#2f6fd0"),
        (roles.HighlightedText, "#ffffff"),
        (roles.ToolTipBase, "#2c323b"),
        (roles.ToolTipText, "#e3e7ee"),
        (roles.PlaceholderText, "#8a94a3"),
        (roles.Link, "#8fb8ff"),
        (roles.Mid, "#3a414c"),
        (roles.Dark, "#15181d"),
        (roles.Light, "#3a414c"),
    ):
        palette.setColor(role, QColor(colour))
    for role in (roles.WindowText, roles.Text, roles.ButtonText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#6b7280"))
    return palette


def wants_dark(scheme: Qt.ColorScheme | None = None) -> bool:
    """Dark when CURALINK_THEME says so, else when the system's scheme (or the one given) is dark."""
    forced = os.environ.get(ENV, "").strip().lower()
    if forced in ("dark", "light"):
        return forced == "dark"
    if scheme is None:
        hints = QGuiApplication.styleHints()
        scheme = hints.colorScheme() if hasattr(hints, "colorScheme") else Qt.ColorScheme.Unknown
    return scheme == Qt.ColorScheme.Dark


def apply_theme(app: QApplication, dark: bool, light_sheet: str | None = None) -> None:
    """Palette, style sheet and state colours for one theme; then each open window that has a
    `theme_changed` hook redraws what it painted with the old colours."""
    _ORIGINAL.setdefault("palette", app.palette())
    if light_sheet is not None:
        app.setProperty("curalinkLightSheet", light_sheet)
    sheet = app.property("curalinkLightSheet") or ""
    use_dark(dark)
    app.setProperty("curalinkDark", dark)
    app.setPalette(dark_palette() if dark else _ORIGINAL["palette"])
    app.setStyleSheet(dark_style_sheet(sheet) if dark else sheet)
    for widget in app.topLevelWidgets():
        hook = getattr(widget, "theme_changed", None)
        if callable(hook):
            hook()


def follow_system(app: QApplication, light_sheet: str) -> None:
    """Apply the system's scheme now and whenever it changes (connected once per application)."""
    apply_theme(app, wants_dark(), light_sheet)
    hints = app.styleHints()
    if hasattr(hints, "colorSchemeChanged") and not app.property("curalinkFollowing"):
        hints.colorSchemeChanged.connect(lambda scheme: apply_theme(app, wants_dark(scheme)))
        app.setProperty("curalinkFollowing", True)
