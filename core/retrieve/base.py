"""The one protocol every retriever and baseline implements, so benchmarks compare like with like."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from core.documents import Candidate
from core.kb.knowledge_base import KnowledgeBase, NameEntry
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress

NAME_OVERFETCH = 4
"""Names fetched per wanted concept: several names of one concept often crowd the top of the list."""


@runtime_checkable
class Retriever(Protocol):
    name: str

    def index(
        self, kb: KnowledgeBase, *, progress: ProgressFn = no_progress, cancel: CancelToken = NEVER_CANCELLED
    ) -> None: ...

    def retrieve(self, mentions: Sequence[str], k: int = 64) -> list[list[Candidate]]: ...


def collapse_to_concepts(
    kb: KnowledgeBase,
    rows: Sequence[NameEntry],
    scores: np.ndarray,
    row_ids: np.ndarray,
    k: int,
) -> list[list[Candidate]]:
    """Per query, best-first candidates, one per concept: its best name's score and that name."""
    results: list[list[Candidate]] = []
    for query_scores, query_ids in zip(scores, row_ids):
        seen: set[str] = set()
        candidates: list[Candidate] = []
        for score, row_id in zip(query_scores.tolist(), query_ids.tolist()):
            if row_id < 0:
                continue
            entry = rows[row_id]
            if entry.concept_id in seen:
                continue
            seen.add(entry.concept_id)
            concept = kb.concepts.get(entry.concept_id)
            preferred = concept.preferred_name if concept is not None else entry.name
            candidates.append(Candidate(entry.concept_id, preferred, entry.name, float(score)))
            if len(candidates) == k:
                break
        results.append(candidates)
    return results


def search_concepts(
    kb: KnowledgeBase,
    rows: Sequence[NameEntry],
    search: Callable[[np.ndarray, int], tuple[np.ndarray, np.ndarray]],
    queries: np.ndarray,
    k: int,
) -> list[list[Candidate]]:
    """Top-k concepts per query; queries whose fetched names cover fewer than k concepts (one concept
    with forty synonyms can fill the list) are searched again with four times as many names."""
    results: list[list[Candidate]] = [[] for _ in range(queries.shape[0])]
    if not len(rows) or not queries.shape[0]:
        return results
    pending = np.arange(queries.shape[0])
    fetch = min(len(rows), k * NAME_OVERFETCH)
    while len(pending):
        scores, ids = search(queries[pending], fetch)
        collapsed = collapse_to_concepts(kb, rows, scores, ids, k)
        again = []
        exhausted = (ids < 0).any(axis=1)  # the search had no more names to give
        for position, candidates, done in zip(pending.tolist(), collapsed, exhausted.tolist()):
            results[position] = candidates
            if len(candidates) < k and fetch < len(rows) and not done:
                again.append(position)
        pending = np.asarray(again, dtype=np.int64)
        fetch = min(len(rows), fetch * 4)
    return results
