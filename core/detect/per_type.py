"""One detector made of several, each trusted for the types it found best on held-out documents.

The promotion rule (core.jobs.models.tagger) may find that the tagger links chemicals better while
the dictionary links diseases better: `link --detect` then keeps each detector's mentions of its own
types. Each detector runs once per batch; where two kept mentions overlap, the plan's first detector wins.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from core.detect.tagger import fill_gaps
from core.documents import Document, Mention
from core.progress import NEVER_CANCELLED, CancelToken

DICTIONARY = "dictionary"
SPAN_MODEL = "span model"
TAGGER = "tagger"
TAGGER_AND_DICTIONARY = "tagger ∪ dictionary"
CANDIDATES = (DICTIONARY, SPAN_MODEL, TAGGER, TAGGER_AND_DICTIONARY)
"""The detectors a plan may name (core.jobs.models.tagger compares them)."""
WITH_TAGGER = (TAGGER, TAGGER_AND_DICTIONARY)


class PerTypeDetector:
    name = "per type"

    def __init__(self, detectors: Mapping[str, object], plan: Mapping[str, str]):
        """`detectors`: name -> detector; `plan`: mention type -> the name of the detector kept for it."""
        self.detectors = dict(detectors)
        self.plan = dict(plan)
        self.types = tuple(sorted(plan))

    def detect(
        self, documents: Sequence[Document], *, cancel: CancelToken = NEVER_CANCELLED
    ) -> list[list[Mention]]:
        merged: list[list[Mention]] = [[] for _ in documents]
        for name in dict.fromkeys(self.plan.values()):
            cancel.raise_if_cancelled()
            detector = self.detectors[name]
            found = (
                detector.detect(documents)
                if detector.name == "dictionary"
                else detector.detect(documents, cancel=cancel)
            )
            for i, mentions in enumerate(found):
                own = [m for m in mentions if self.plan.get(m.type) == name]
                merged[i] = fill_gaps(merged[i], own)
        return merged
