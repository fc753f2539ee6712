"""Mention types in colour, as PubTator and TeamTat show them, with a type hidden on request; the
curation state is then drawn by weight and lines (app/gui/abstract_view.py), so it stays in view.

A colour per type: the types PubTator colours keep a fixed slot (a disease is always orange, a chemical
green), any other type takes the next free slot in name order, so one project's types keep their colours
from one start to the next.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from app.gui.states import STATE_COLOURS, STATE_LABELS, muted, text_on_fill

# (fill, strong) pairs: pastel fills under dark text; on a dark page, deep fills under light text.
LIGHT_TYPE_COLOURS = (
    ("#ffd8b0", "#c25e00"),  # disease
    ("#cdeec3", "#2e7d32"),  # chemical
    ("#cfe0ff", "#1f5fbf"),  # gene
    ("#f2d3f5", "#8e24aa"),  # species
    ("#fff0a0", "#8d6e00"),  # variant
    ("#c6ece8", "#00796b"),  # cell line
    ("#ffd1d8", "#c62836"),
    ("#e2dccf", "#6d5c3d"),
)
DARK_TYPE_COLOURS = (
    ("#7a4212", "#c25e00"),
    ("#255a2a", "#2e7d32"),
    ("#23457e", "#1f5fbf"),
    ("#5e2a6a", "#8e24aa"),
    ("#5e5200", "#8d6e00"),
    ("#0f5049", "#00796b"),
    ("#7a2430", "#c62836"),
    ("#50463a", "#6d5c3d"),
)
# PubTator's and BioRED's type names (lower-cased, without spaces or underscores) -> their slot.
KNOWN_SLOTS = {
    "disease": 0,
    "diseaseorphenotypicfeature": 0,
    "specificdisease": 0,
    "chemical": 1,
    "chemicalentity": 1,
    "gene": 2,
    "geneorgeneproduct": 2,
    "species": 3,
    "organismtaxon": 3,
    "mutation": 4,
    "sequencevariant": 4,
    "variant": 4,
    "cellline": 5,
}
UNTYPED = "(untyped)"


def _slot_key(type_name: str) -> str:
    return type_name.lower().replace(" ", "").replace("_", "").replace("-", "")


def type_slots(types: Iterable[str]) -> dict[str, int]:
    """A palette slot per type: known types their own, the others the free slots in name order (then
    round again when there are more types than colours)."""
    names = sorted(set(types))
    slots = {t: KNOWN_SLOTS[_slot_key(t)] for t in names if _slot_key(t) in KNOWN_SLOTS}
    free = [s for s in range(len(LIGHT_TYPE_COLOURS)) if s not in slots.values()] or list(
        range(len(LIGHT_TYPE_COLOURS))
    )
    for n, name in enumerate(t for t in names if t not in slots):
        slots[name] = free[n % len(free)]
    return slots


def type_colour(slot: int, dark: bool) -> tuple[str, str]:
    palette = DARK_TYPE_COLOURS if dark else LIGHT_TYPE_COLOURS
    return palette[slot % len(palette)]


# How a state reads when the fill is the type's (AbstractView draws it so): (state, legend HTML).
STATE_MARKS = (
    ("accepted", "<b>{}</b>"),
    ("corrected", "<b><u>{}</u></b>"),
    ("rejected", "<s>{}</s>"),
    ("nil", "{}&nbsp;(wavy&nbsp;line)"),
    ("ambiguous", "{}&nbsp;(dashed&nbsp;line)"),
    ("unsuggested", "{}&nbsp;(grey)"),
)


def type_legend_html(slots: dict[str, int], shown: Iterable[str], hidden: set[str], dark: bool) -> str:
    """The type chips (a link each: a click hides or shows that type) and how each state is drawn."""
    chips = []
    for name in sorted(set(shown) | hidden):
        fill_colour, strong_colour = type_colour(slots.get(name, 0), dark)
        label = html.escape(name or UNTYPED).replace(" ", "&nbsp;")
        if name in hidden:
            chips.append(
                f"<a href='type:{html.escape(name)}' style='color:{muted()}; text-decoration:line-through'>"
                f"&#9633;&nbsp;{label}</a>"
            )
        else:
            chips.append(
                f"<a href='type:{html.escape(name)}' style='text-decoration:none; color:{text_on_fill()}'>"
                f"<span style='background-color:{fill_colour}'>&nbsp;<span style='color:{strong_colour}'>"
                f"&#9632;</span>&nbsp;{label}&nbsp;</span></a>"
            )
    states = [
        f"<span style='color:{STATE_COLOURS[state][1]}'>"
        + shape.format(STATE_LABELS[state].replace(" ", "&nbsp;"))
        + "</span>"
        for state, shape in STATE_MARKS
    ]
    return (
        " &nbsp; ".join(chips)
        + f" &nbsp; <span style='color:{muted()}'>(click a type to hide or show it)</span><br>"
        + f"<span style='color:{muted()}'>state:</span> "
        + " &nbsp; ".join(states)
        + f" &nbsp; <span style='color:{muted()}'>plain&nbsp;=&nbsp;suggested</span>"
    )
