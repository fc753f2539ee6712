"""Mention states and their colours: one table shared by the text, the legend and the candidate list."""

from __future__ import annotations

import html

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

# Pastel fills keep black text readable; the strong variants mark the selected mention (white text).
LIGHT_STATE_COLOURS = {
    "unsuggested": ("#e3e3e3", "#707070"),
    "suggested": ("#cfe3ff", "#2f6fd0"),
    "accepted": ("#c8efc9", "#2e8b3a"),
    "rejected": ("#ffd0cc", "#c8382c"),
    "corrected": ("#e6d4ff", "#7b3fc4"),
    "nil": ("#ffe0b8", "#d9780f"),
    "ambiguous": ("#fff3a8", "#a88a00"),
}
# On a dark page: deep fills under light text (contrast 6:1 or more), strong colours that keep white
# text of the selected mention at 4.8:1 or more (tests/gui/test_desk_view.py checks both).
DARK_STATE_COLOURS = {
    "unsuggested": ("#454a52", "#6b7280"),
    "suggested": ("#1f4a85", "#2f6fd0"),
    "accepted": ("#1d5e30", "#2a7d36"),
    "rejected": ("#7d2a26", "#c8382c"),
    "corrected": ("#553688", "#7b3fc4"),
    "nil": ("#7a4a12", "#a85a0a"),
    "ambiguous": ("#5e5200", "#857000"),
}
# Text on a fill, and secondary (muted) text on the page, per theme.
TEXT_ON_FILL = {False: "#1d2430", True: "#e3e7ee"}
MUTED = {False: "#5f6b7a", True: "#9aa5b4"}
# The active table: updated in place by `use_dark`, so every `STATE_COLOURS[...]` reader follows.
STATE_COLOURS = dict(LIGHT_STATE_COLOURS)
_dark = {"on": False}
# A detected span below this probability is drawn apart (dotted, italic) until a curator decides it. The
# span model keeps spans from its dev-chosen threshold (about 0.5) up; this marks the lower band.
LOW_SPAN_PROBABILITY = 0.8
LEGEND_STATES = ("suggested", "accepted", "corrected", "rejected", "nil", "ambiguous", "unsuggested")


def use_dark(dark: bool) -> None:
    """Switch the state colours (and the text colours that go with them) to the dark or light table."""
    _dark["on"] = bool(dark)
    STATE_COLOURS.update(DARK_STATE_COLOURS if dark else LIGHT_STATE_COLOURS)


def is_dark() -> bool:
    return _dark["on"]


def text_on_fill() -> str:
    return TEXT_ON_FILL[_dark["on"]]


def muted() -> str:
    return MUTED[_dark["on"]]


def legend_html() -> str:
    """State chips as non-breaking coloured spans, so the label wraps between chips, not inside one."""
    chips = []
    for state in LEGEND_STATES:
        fill_colour, strong_colour = STATE_COLOURS[state]
        label = html.escape(STATE_LABELS[state]).replace(" ", "&nbsp;")
        chips.append(
            f"<span style='background-color:{fill_colour}; color:{text_on_fill()}'>&nbsp;"
            f"<span style='color:{strong_colour}'>&#9632;</span>&nbsp;{label}&nbsp;</span>"
        )
    chips.append(
        f"<span style='color:{muted()}'><u>underlined</u>&nbsp;=&nbsp;nested&nbsp;/&nbsp;overlapping</span>"
    )
    chips.append(
        f"<span style='color:{muted()}'><i>dotted&nbsp;italic</i>&nbsp;=&nbsp;uncertain&nbsp;detected&nbsp;span</span>"
    )
    return " &nbsp; ".join(chips)


def uncertain_span(probability: float | None) -> bool:
    return probability is not None and probability < LOW_SPAN_PROBABILITY


def detected_probability(mention, decided: bool) -> float | None:
    """A detected mention's span probability (infons "probability") while no decision is taken on it."""
    value = mention.infons.get("probability") if mention.origin == "detected" and not decided else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def mention_state(action: str | None, has_suggestions: bool) -> str:
    if action in ACTION_STATES:
        return ACTION_STATES[action]
    return "suggested" if has_suggestions else "unsuggested"


def fill(state: str) -> QColor:
    return QColor(STATE_COLOURS[state][0])


def strong(state: str) -> QColor:
    return QColor(STATE_COLOURS[state][1])
