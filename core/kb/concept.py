"""A knowledge-base concept: one id, a preferred name and everything a curator needs to judge it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Concept:
    concept_id: str
    vocabulary: str
    preferred_name: str
    synonyms: tuple[str, ...] = ()
    alt_ids: tuple[str, ...] = ()
    semantic_types: tuple[str, ...] = ()
    definition: str = ""
    tree_numbers: tuple[str, ...] = ()
    parents: tuple[str, ...] = ()
    # forms running text uses that the vocabulary does not list (core.kb.variants), e.g. uninverted
    variants: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """Preferred name first, then synonyms, then variants, without exact repeats."""
        seen: dict[str, None] = {self.preferred_name: None}
        for synonym in (*self.synonyms, *self.variants):
            seen.setdefault(synonym, None)
        return tuple(seen)
