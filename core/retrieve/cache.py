"""A bounded LRU of candidate lists keyed by the normalised mention text.

A corpus names the same diseases over and over (NCBI-disease test: 960 mentions, 400 distinct
normalised strings), so each distinct string is encoded and searched once. `OrderedDict` is enough
for an LRU here; `functools.lru_cache` cannot serve a batch call, and no cache library is installed.
Entries must be dropped whenever the index changes (`clear`).
"""

from __future__ import annotations

from collections import OrderedDict

from core.documents import Candidate

DEFAULT_CACHE_SIZE = 20_000
"""About 8 KB per entry at k=64 (64 shared-string candidates): ~160 MB at most."""
MAX_CACHED_CANDIDATES = DEFAULT_CACHE_SIZE * 64
"""The bound in candidates, whatever k the entries were searched with: routed searches fetch 4 k and
widen 4 times over where a route admits few concepts, so 20,000 entries could hold far more than 64
each (with the MeSH 2024 recipe `link --detect` over 24,741 mentions grew by about 500 MB while
linking; issue 30)."""


class CandidateCache:
    """text key -> (k it was searched with, best-first candidates); a hit serves any k <= that."""

    def __init__(self, max_entries: int = DEFAULT_CACHE_SIZE, max_candidates: int = MAX_CACHED_CANDIDATES):
        self.max_entries = max_entries
        self.max_candidates = max_candidates
        self._entries: OrderedDict[str, tuple[int, tuple[Candidate, ...]]] = OrderedDict()
        self._held = 0  # candidates held over all entries
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str, k: int) -> list[Candidate] | None:
        entry = self._entries.get(key)
        # a list shorter than the k it was searched with is complete: the KB has no more concepts
        if entry is None or (entry[0] < k and len(entry[1]) == entry[0]):
            self.misses += 1
            return None
        self._entries.move_to_end(key)
        self.hits += 1
        return list(entry[1][:k])

    def put(self, key: str, k: int, candidates: list[Candidate]) -> None:
        if self.max_entries <= 0 or len(candidates) > self.max_candidates:
            return
        previous = self._entries.get(key)
        if previous is not None:
            self._held -= len(previous[1])
        self._entries[key] = (k, tuple(candidates))
        self._held += len(candidates)
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries or self._held > self.max_candidates:
            _, (_, dropped) = self._entries.popitem(last=False)
            self._held -= len(dropped)

    def clear(self) -> None:
        self._entries.clear()
        self._held = 0
