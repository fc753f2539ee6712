"""Baseline: exact dictionary match on the shared normalised form of every KB name."""

from __future__ import annotations

from collections.abc import Sequence

from core.documents import Candidate
from core.errors import ModelError
from core.kb.knowledge_base import KnowledgeBase
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from core.text.normalize import normalize_name


class ExactMatchRetriever:
    """Every concept owning a name equal to the mention after `normalize_name`; score 1.0."""

    name = "exact"

    def __init__(self) -> None:
        self.kb: KnowledgeBase | None = None
        self.lookup: dict[str, list[tuple[str, str]]] = {}

    def index(
        self, kb: KnowledgeBase, *, progress: ProgressFn = no_progress, cancel: CancelToken = NEVER_CANCELLED
    ) -> None:
        self.kb = kb
        self.lookup = {}
        for number, entry in enumerate(kb.names):
            if number % 50_000 == 0:
                cancel.raise_if_cancelled()
                progress(number, len(kb.names), "normalising names")
            hits = self.lookup.setdefault(normalize_name(entry.name), [])
            if all(cid != entry.concept_id for cid, _ in hits):
                hits.append((entry.concept_id, entry.name))

    def retrieve(self, mentions: Sequence[str], k: int = 64) -> list[list[Candidate]]:
        if self.kb is None:
            raise ModelError("retrieve before index(kb)")
        results = []
        for mention in mentions:
            hits = self.lookup.get(normalize_name(mention), [])[:k]
            results.append(
                [Candidate(cid, self.kb.concepts[cid].preferred_name, name, 1.0) for cid, name in hits]
            )
        return results
