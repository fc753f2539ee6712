"""Score fusion: blend the reranker's probability with the retriever's score (weight chosen on dev).

A cross-encoder trained for minutes on a CPU is a weak ranker on its own, while the retriever already
ranks well; a convex blend keeps the retriever's order where the reranker is unsure. The retriever's
score is min-max scaled within each mention's candidate list, so the weight means the same for any
retriever (TF-IDF cosines, ResCNN inner products):

    final = (1 - w) * p_rerank + w * (s_retriever - min) / (max - min)

`w = 0` is the pure reranker (the default); `w = 1` would be the retriever alone, so the dev search
stops below 1 and the reranker always has a say.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from core.documents import Candidate

DEFAULT_WEIGHTS: tuple[float, ...] = tuple(round(0.1 * k, 1) for k in range(10))


def scaled_retriever_scores(candidates: Sequence[Candidate]) -> list[float]:
    """Retriever scores mapped to [0, 1] within one mention (all equal -> all 1)."""
    values = [c.retriever_score for c in candidates]
    if not values:
        return []
    low, high = min(values), max(values)
    if high - low <= 0.0:
        return [1.0] * len(values)
    return [(v - low) / (high - low) for v in values]


def fuse(candidates: Sequence[Candidate], probabilities: Sequence[float], weight: float) -> list[Candidate]:
    """Candidates with `reranker_score` = the blended score, best first (ties keep the given order)."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"fusion weight {weight} is outside [0, 1]")
    scaled = scaled_retriever_scores(candidates)
    rescored = [
        replace(c, reranker_score=(1.0 - weight) * p + weight * s)
        for c, p, s in zip(candidates, probabilities, scaled)
    ]
    return sorted(rescored, key=lambda c: -(c.reranker_score or 0.0))


def refuse(ranked: Sequence[Sequence[Sequence[Candidate]]], weight: float) -> list[list[list[Candidate]]]:
    """Re-blend already reranked candidates whose `reranker_score` holds the pure probability."""
    return [
        [fuse(row, [c.reranker_score or 0.0 for c in row], weight) for row in per_doc] for per_doc in ranked
    ]


def choose_weight(
    ranked_pure: Sequence[Sequence[Sequence[Candidate]]],
    accuracy: Callable[[Sequence[Sequence[Sequence[Candidate]]]], float],
    weights: Sequence[float] = DEFAULT_WEIGHTS,
) -> tuple[float, dict[float, float]]:
    """The weight with the best `accuracy` on dev (smallest on ties, i.e. trust the reranker most)."""
    table = {w: accuracy(refuse(ranked_pure, w)) for w in weights}
    best = max(table, key=lambda w: (table[w], -w))
    return best, table
