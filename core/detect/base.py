"""The one protocol detectors implement, so a span model can replace the dictionary tagger."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from core.documents import Document, Mention


@runtime_checkable
class Detector(Protocol):
    name: str

    def detect(self, documents: Sequence[Document]) -> list[list[Mention]]:
        """Per document, the detected mentions (origin "detected"), sorted by offset, non-overlapping."""
        ...
