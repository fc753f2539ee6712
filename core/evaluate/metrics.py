"""Ranking metrics with the ResCNN reference protocol (methods.md A.8).

A candidate counts as correct when any of the ids it answers to (its own and its alternative ids)
is one of the gold ids; a composite gold "A|B" is satisfied by either part. A mention split into
sub-terms is right at k only when every sub-term has a correct candidate within its top k, so its
rank is the worst of its sub-terms' ranks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

ACCURACY_KS = (1, 5, 10)
RECALL_KS = (20, 64)


def first_hit_rank(candidate_ids: Sequence[set[str] | frozenset[str]], gold: set[str]) -> int | None:
    """1-based rank of the first candidate answering to a gold id; None when there is none."""
    for rank, ids in enumerate(candidate_ids, start=1):
        if ids & gold:
            return rank
    return None


def composite_rank(ranks: Iterable[int | None]) -> int | None:
    """Every sub-term must be found: the mention's rank is its worst sub-term's rank."""
    worst = 0
    for rank in ranks:
        if rank is None:
            return None
        worst = max(worst, rank)
    return worst or None


def hit_rate(ranks: Sequence[int | None], k: int) -> float:
    """Share of mentions found within the top k (0.0 for no mentions)."""
    if not ranks:
        return 0.0
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks)


def ranking_metrics(ranks: Sequence[int | None]) -> dict[str, float]:
    """acc@1/5/10 and recall@20/64 in percent, the keys of the CLI contract."""
    metrics = {f"acc@{k}": round(100 * hit_rate(ranks, k), 2) for k in ACCURACY_KS}
    metrics.update({f"recall@{k}": round(100 * hit_rate(ranks, k), 2) for k in RECALL_KS})
    return metrics
