"""Mention states and their colours: one table shared by the text, the legend and the candidate list."""

from __future__ import annotations

from PySide6.QtGui import QColor

ACTION_STATES = {
    "accept": "accepted",
    "reject": "rejected",
    "correct": "corrected",
    "nil": "nil",
    "ambiguous": "ambiguous",
}

STATE_LABELS = {
    "unsuggested": "no suggestions yet",
    "suggested": "suggested",
    "accepted": "accepted",
    "rejected": "rejected",
    "corrected": "corrected",
    "nil": "not in KB",
    "ambiguous": "ambiguous",
}

# Pastel fills keep black text readable; the strong variants mark the selected mention.
STATE_COLOURS = {
    "unsuggested": ("#e3e3e3", "#707070"),
    "suggested": ("#cfe3ff", "#2f6fd0"),
    "accepted": ("#c8efc9", "#2e8b3a"),
    "rejected": ("#ffd0cc", "#c8382c"),
    "corrected": ("#e6d4ff", "#7b3fc4"),
    "nil": ("#ffe0b8", "#d9780f"),
    "ambiguous": ("#fff3a8", "#a88a00"),
}


def mention_state(action: str | None, has_suggestions: bool) -> str:
    if action in ACTION_STATES:
        return ACTION_STATES[action]
    return "suggested" if has_suggestions else "unsuggested"


def fill(state: str) -> QColor:
    return QColor(STATE_COLOURS[state][0])


def strong(state: str) -> QColor:
    return QColor(STATE_COLOURS[state][1])
