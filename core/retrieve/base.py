"""The one protocol every retriever and baseline implements, so benchmarks compare like with like."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from core.documents import Candidate
from core.kb.knowledge_base import KnowledgeBase, NameEntry
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress

NAME_OVERFETCH = 4
"""Names fetched per wanted concept on the first try: several names of one concept crowd the top of
the list, so with only 2x about half of NCBI-disease's queries against MEDIC covered too few concepts
and had to be searched again; 4x made second searches rare and cost less than 2x plus the retries."""


@runtime_checkable
class Retriever(Protocol):
    name: str

    def index(
        self, kb: KnowledgeBase, *, progress: ProgressFn = no_progress, cancel: CancelToken = NEVER_CANCELLED
    ) -> None: ...

    def retrieve(self, mentions: Sequence[str], k: int = 64) -> list[list[Candidate]]: ...


class ConceptCodes:
    """Each name row's concept as a small integer, so collapsing names to concepts is numpy work."""

    def __init__(self, rows: Sequence[NameEntry] = ()):
        self.codes = np.zeros(0, dtype=np.int32)
        self.concept_ids: Sequence[str] = []
        self._code_of: dict[str, int] | None = {}
        self.extend(rows)

    @classmethod
    def of_rows(cls, rows) -> ConceptCodes:
        """The codes a compact row table (core.retrieve.name_rows.NameRows) already holds, taken as they
        are: no Python object per row; the id -> code map is made only if rows are appended."""
        made = cls()
        made.codes, made.concept_ids, made._code_of = np.asarray(rows.codes), rows.concepts, None
        made.extend(rows.tail)
        return made

    def extend(self, rows: Sequence[NameEntry]) -> None:
        """Codes for rows appended to the index (keeps row order)."""
        if not len(rows):
            return
        if self._code_of is None:
            self.concept_ids = list(self.concept_ids)
            self._code_of = {concept_id: code for code, concept_id in enumerate(self.concept_ids)}
        new = np.fromiter(
            (self._code_of.setdefault(r.concept_id, len(self._code_of)) for r in rows),
            dtype=np.int32,
            count=len(rows),
        )
        self.concept_ids.extend(list(self._code_of)[len(self.concept_ids) :])
        self.codes = np.concatenate([self.codes, new])

    def __len__(self) -> int:
        return len(self.codes)


def collapse_to_concepts(
    kb: KnowledgeBase,
    rows: Sequence[NameEntry],
    scores: np.ndarray,
    row_ids: np.ndarray,
    k: int,
    codes: ConceptCodes | None = None,
) -> list[list[Candidate]]:
    """Per query, best-first candidates, one per concept: its best name's score and that name."""
    codes = codes if codes is not None and len(codes) == len(rows) else ConceptCodes(rows)
    valid = row_ids >= 0
    concept_codes = np.where(valid, codes.codes[np.where(valid, row_ids, 0)], -1)
    concepts = kb.concepts
    results: list[list[Candidate]] = []
    for query_scores, query_ids, query_codes in zip(scores, row_ids, concept_codes):
        # np.unique's first index per concept is its best-scored name (rows come best first)
        found, first = np.unique(query_codes, return_index=True)
        first = np.sort(first[found >= 0])[:k]
        candidates: list[Candidate] = []
        for row_id, score in zip(query_ids[first].tolist(), query_scores[first].tolist()):
            entry = rows[row_id]
            concept = concepts.get(entry.concept_id)
            preferred = concept.preferred_name if concept is not None else entry.name
            candidates.append(Candidate(entry.concept_id, preferred, entry.name, score))
        results.append(candidates)
    return results


def search_concepts(
    kb: KnowledgeBase,
    rows: Sequence[NameEntry],
    search: Callable[[np.ndarray, int], tuple[np.ndarray, np.ndarray]],
    queries: np.ndarray,
    k: int,
    codes: ConceptCodes | None = None,
    hidden: np.ndarray | None = None,
) -> list[list[Candidate]]:
    """Top-k concepts per query; queries whose fetched names cover fewer than k concepts (one concept
    with forty synonyms can fill the list) are searched again with four times as many names.
    `hidden`: a mask over the rows; a hidden row (a name withdrawn since the index was built) is
    skipped, so its concept is found through its other names or not at all."""
    results: list[list[Candidate]] = [[] for _ in range(queries.shape[0])]
    if not len(rows) or not queries.shape[0]:
        return results
    codes = codes if codes is not None and len(codes) == len(rows) else ConceptCodes(rows)
    pending = np.arange(queries.shape[0])
    fetch = min(len(rows), k * NAME_OVERFETCH)
    while len(pending):
        scores, ids = search(queries[pending], fetch)
        exhausted = (ids < 0).any(axis=1)  # the search had no more names to give
        if hidden is not None:
            ids = np.where((ids >= 0) & hidden[np.maximum(ids, 0)], -1, ids)
        collapsed = collapse_to_concepts(kb, rows, scores, ids, k, codes)
        again = []
        for position, candidates, done in zip(pending.tolist(), collapsed, exhausted.tolist()):
            results[position] = candidates
            if len(candidates) < k and fetch < len(rows) and not done:
                again.append(position)
        pending = np.asarray(again, dtype=np.int64)
        fetch = min(len(rows), fetch * 4)
    return results
