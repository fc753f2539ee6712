"""Document coherence: the concepts the other mentions of the same document point to.

An abstract names its disease several ways ("myotonic dystrophy", "DM", "the dystrophy"); the
abbreviation is already searched as its long form (core.retrieve.query_plan), so mentions of one
string share their candidates. What a differently written mention of the same document found first
is further evidence: a candidate that another phrasing in the document also ranks first is more
likely the concept the document is about than a near-identical neighbour. Only the retriever's
order is used (never the ranker's, nor the gold), so the feature is the same at training and when
linking.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

from core.documents import Candidate
from core.rank.query import MentionQuery
from core.text.normalize import normalize_name

COHERENCE_FEATURES = ("document_top_other_strings", "document_listed_other_strings")
LISTED_DEPTH = 5
"""A concept counts as listed by another mention when it is among that mention's first candidates."""


def mention_key(query: MentionQuery) -> str:
    """The string a mention was searched as (abbreviation expanded), normalised."""
    return normalize_name(query.queries[0] if query.queries else query.text)


class DocumentContext:
    """Per document and mention string: the retriever's first concept and its first few concepts."""

    def __init__(self, queries: Sequence[MentionQuery], candidates: Sequence[Sequence[Candidate]]):
        # doc -> key -> (mentions of that string, Counter of top concepts, Counter of listed concepts)
        self._top: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
        self._listed: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
        for query, found in zip(queries, candidates, strict=True):
            if not found:
                continue
            key = mention_key(query)
            self._top[query.doc_id][key][found[0].concept_id] += 1
            self._listed[query.doc_id][key].update({c.concept_id for c in found[:LISTED_DEPTH]})

    def rows(self, query: MentionQuery, concept_ids: Sequence[str]) -> np.ndarray:
        """Per candidate: log(1 + mentions of other strings in the document whose first concept it is),
        and log(1 + those listing it among their first LISTED_DEPTH)."""
        key = mention_key(query)
        top: Counter[str] = Counter()
        listed: Counter[str] = Counter()
        for other, counts in self._top.get(query.doc_id, {}).items():
            if other != key:
                top.update(counts)
        for other, counts in self._listed.get(query.doc_id, {}).items():
            if other != key:
                listed.update(counts)
        rows = np.zeros((len(concept_ids), len(COHERENCE_FEATURES)), dtype=np.float64)
        for i, concept_id in enumerate(concept_ids):
            rows[i] = (math.log1p(top.get(concept_id, 0)), math.log1p(listed.get(concept_id, 0)))
        return rows
