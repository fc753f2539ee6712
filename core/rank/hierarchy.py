"""Hierarchy features: how deep a candidate sits in the vocabulary's tree, and whether it is an ancestor
or a descendant of another of the mention's first candidates.

When two near-identical names compete, one is often the parent of the other ("Colorectal
Neoplasms" and "Colorectal Neoplasms, Hereditary Nonpolyposis"); the tree says which is the general
one. Tree numbers come from the vocabulary (MeSH and CTD's MEDIC write them, "C04.588.274.476.411"; CTD
extends them for supplementary and OMIM concepts: "C16.320.180/C538288"). A KB without tree numbers
(MEDIC 2012 in the DNorm format) gives zeros and `hierarchy_known` 0: the ranker learns nothing from them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace

import numpy as np

from core.kb.concept import Concept

HIERARCHY_FEATURES = ("hierarchy_known", "tree_depth", "ancestor_of_other_top", "descendant_of_other_top")
TOP = 5
"""The candidates (in the retriever's order) among which ancestor and descendant relations are looked for."""


def tree_depth(tree_number: str) -> int:
    """Levels of one tree number: "C04" is 1, "C04.588" 2, "C16.320.180/C538288" 4."""
    return tree_number.count(".") + tree_number.count("/") + 1


def is_below(tree_number: str, ancestor: str) -> bool:
    """Whether `tree_number` lies strictly under `ancestor` in the tree."""
    return (
        len(tree_number) > len(ancestor) + 1
        and tree_number.startswith(ancestor)
        and (tree_number[len(ancestor)] in "./")
    )


class ConceptHierarchy:
    """Each concept's tree numbers (by canonical id), read once from the vocabulary's concepts."""

    def __init__(self, tree_numbers: dict[str, tuple[str, ...]]):
        self.tree_numbers = tree_numbers

    @classmethod
    def from_concepts(cls, concepts: Iterable[Concept]) -> ConceptHierarchy:
        found: dict[str, tuple[str, ...]] = {}
        for concept in concepts:
            if concept.tree_numbers:
                for concept_id in (concept.concept_id, *concept.alt_ids):
                    found.setdefault(concept_id, tuple(concept.tree_numbers))
        return cls(found)

    def __len__(self) -> int:
        return len(self.tree_numbers)

    def depth(self, concept_id: str) -> int:
        """The shallowest level of the concept (0: no tree number known)."""
        numbers = self.tree_numbers.get(concept_id, ())
        return min((tree_depth(n) for n in numbers), default=0)

    def is_ancestor(self, ancestor_id: str, concept_id: str) -> bool:
        """Whether `ancestor_id` is above `concept_id` along some tree number."""
        above = self.tree_numbers.get(ancestor_id, ())
        below = self.tree_numbers.get(concept_id, ())
        return any(is_below(b, a) for a in above for b in below)

    def rows(self, concept_ids: Sequence[str]) -> np.ndarray:
        """Per candidate: tree known, depth, whether it is an ancestor / a descendant of one of the
        first TOP candidates (other than itself)."""
        rows = np.zeros((len(concept_ids), len(HIERARCHY_FEATURES)), dtype=np.float64)
        if not self.tree_numbers:
            return rows
        top = list(dict.fromkeys(concept_ids[:TOP]))
        for i, concept_id in enumerate(concept_ids):
            depth = self.depth(concept_id)
            others = [c for c in top if c != concept_id]
            rows[i] = (
                float(depth > 0),
                float(depth),
                float(any(self.is_ancestor(concept_id, other) for other in others)),
                float(any(self.is_ancestor(other, concept_id) for other in others)),
            )
        return rows


def with_tree_numbers(concepts: Iterable[Concept], source: ConceptHierarchy) -> Iterator[Concept]:
    """The concepts, those without tree numbers given the ones `source` has for the same id: MEDIC 2012
    (the NCBI-disease dictionary, no tree) takes CTD's MEDIC tree; names and ids stay as they were."""
    for concept in concepts:
        found = () if concept.tree_numbers else source.tree_numbers.get(concept.concept_id, ())
        yield replace(concept, tree_numbers=found) if found else concept
