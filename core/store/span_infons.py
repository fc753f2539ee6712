"""Infons that describe a mention's span as a detector found it, and what becomes of them when a curator
moves the span.

A detected mention carries the dictionary's candidate ids (`dictionary_ids`) and the span model's
`probability` and `link_score`, all computed for the text it was found with. Once a curator moves the
span they no longer hold: an export wrote the old ids against the new text, and the desk kept drawing
a curated span as an uncertain detection. They are not deleted (an undo that moves the span back makes
them true again): the span they were computed for is recorded beside them, and a mention read from the
store carries them only while its span is that one.
"""

from __future__ import annotations

SPAN_DERIVED = ("dictionary_ids", "probability", "link_score")
DETECTED_SPAN = "detected_span"  # "start-end" the SPAN_DERIVED infons were computed for


def moved(infons: dict, old: tuple[int, int], new: tuple[int, int]) -> dict:
    """The infons to store after a span moves from `old` to `new`."""
    if old == new or not any(key in infons for key in SPAN_DERIVED):
        return infons
    updated = dict(infons)
    detected = updated.setdefault(DETECTED_SPAN, f"{old[0]}-{old[1]}")
    if detected == f"{new[0]}-{new[1]}":  # back where the detector found it
        del updated[DETECTED_SPAN]
    return updated


def current(infons: dict, start: int, end: int) -> dict:
    """The infons that hold for the mention's span now (what readers and exports see)."""
    detected = infons.get(DETECTED_SPAN)
    if detected is None:
        return infons
    kept = {key: value for key, value in infons.items() if key != DETECTED_SPAN}
    if detected != f"{start}-{end}":
        kept = {key: value for key, value in kept.items() if key not in SPAN_DERIVED}
    return kept
