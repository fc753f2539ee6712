"""The retriever's answer cache is bounded in candidates, not only in entries: routed searches cache
lists of hundreds or thousands of candidates (issue 30's memory target)."""

from __future__ import annotations

from core.documents import Candidate
from core.retrieve.cache import CandidateCache


def _candidates(n: int, tag: str) -> list[Candidate]:
    return [Candidate(f"{tag}{i}", f"name {i}", retriever_score=1.0 - i / 1000) for i in range(n)]


def test_large_entries_evict_the_oldest_until_the_candidate_bound_holds() -> None:
    cache = CandidateCache(max_entries=100, max_candidates=1000)
    for number in range(5):  # 5 x 300 candidates: only the last 3 fit in 1,000
        cache.put(f"q{number}", 300, _candidates(300, f"q{number}-"))
    assert len(cache) == 3
    assert cache.get("q0", 10) is None and cache.get("q1", 10) is None
    assert [c.concept_id for c in cache.get("q4", 2)] == ["q4-0", "q4-1"]
    cache.put("q4", 10, _candidates(10, "again-"))  # replacing an entry frees its old candidates
    for number in range(5, 8):
        cache.put(f"q{number}", 300, _candidates(300, f"q{number}-"))
    assert len(cache) == 4  # q4 (10) + q5, q6, q7 (900) = 910 <= 1,000
    assert cache.get("big", 1) is None
    cache.put("big", 2000, _candidates(1001, "big-"))  # larger than the whole bound: not cached
    assert cache.get("big", 1) is None and len(cache) == 4


def test_the_entry_bound_still_holds_for_small_entries() -> None:
    cache = CandidateCache(max_entries=3, max_candidates=1000)
    for number in range(5):
        cache.put(f"q{number}", 64, _candidates(2, f"q{number}-"))
    assert len(cache) == 3 and cache.get("q1", 1) is None and cache.get("q4", 1) is not None
