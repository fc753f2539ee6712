"""Forgiving name search over a whole KB: word order, spelling variants and typos.

Every name becomes a bag of folded words (core.text.spelling). A query word matches a KB word that is
the same, within one or two edits of it (rapidfuzz's optimal-string-alignment distance, so a swapped
pair of letters is one edit), or, for the word being typed, that starts with it. A name matches when
all query words do; it scores the edits spent plus a little for each word the query did not ask for,
so "cancer breast" finds "Breast Cancer" (no edits, no extra words) before "Breast Cancer, Male".
Names that match all but one query word follow, so one unknown word does not empty the list.

Why words and not whole strings: a query is usually shorter than the names it should find
("diabtes" -> "Diabetes Mellitus"), which whole-string ratios punish, and a vocabulary of distinct
words (about 20,000 in MEDIC), bucketed by length, is small enough for rapidfuzz's `cdist` to scan
in about a millisecond (its `extract` with this distance took ten times as long).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import OSA

from core.text.spelling import folded_words, search_words

PREFIX_COST = 0.5  # a word completed from what is being typed
EXTRA_WORD_COST = 0.25  # each name word the query did not ask for
MISSING_WORD_COST = 3.0  # a query word the name lacks (only one may be missing)
MAX_PREFIX_WORDS = 400  # completions considered for the word being typed


def max_edits(word: str) -> int:
    """Edits forgiven in a query word: none below 4 letters (too many short words are near each
    other), one up to 5, two from 6 ("diabtes", "alzhiemer")."""
    return 0 if len(word) < 4 else 1 if len(word) <= 5 else 2


@dataclass(frozen=True)
class NameHit:
    row: int  # the caller's key for the name (the names table's row id)
    key: str  # the concept the name belonged to when indexed (to keep one hit per concept)
    preferred: bool  # the concept's preferred name (wins a tie)
    score: float  # lower is better; 0 is every word present, no edits, no extra words


class NameIndex:
    """Built once from (row, concept key, normalised name, preferred) rows, as the store keeps them
    (`normalize_name`); `search` only reads it, so any thread may."""

    def __init__(self, names: Iterable[tuple[int, str, str, bool]]):
        vocabulary: dict[str, int] = {}
        postings: list[list[int]] = []
        self.rows: list[int] = []
        self.keys: list[str] = []
        word_counts: list[int] = []
        name_lengths: list[int] = []
        preferred_names: list[bool] = []
        for row, key, name, preferred in names:
            position = len(self.rows)
            words = set(folded_words(name))
            self.rows.append(row)
            self.keys.append(key)
            word_counts.append(len(words))
            name_lengths.append(len(name))
            preferred_names.append(bool(preferred))
            for word in words:
                word_id = vocabulary.setdefault(word, len(vocabulary))
                if word_id == len(postings):
                    postings.append([])
                postings[word_id].append(position)
        self.word_counts = np.array(word_counts, dtype=np.int64)
        self.name_lengths = np.array(name_lengths, dtype=np.int64)
        self.preferred = np.array(preferred_names, dtype=bool)
        self.words = list(vocabulary)
        self.word_ids = vocabulary
        self.postings = postings
        self.sorted_words = sorted(vocabulary)
        by_length: dict[int, tuple[list[str], list[int]]] = {}
        for word, word_id in vocabulary.items():
            words, word_ids = by_length.setdefault(len(word), ([], []))
            words.append(word)
            word_ids.append(word_id)
        self.by_length = by_length

    def __len__(self) -> int:
        return len(self.rows)

    def _word_costs(self, word: str, typing: bool) -> dict[int, float]:
        """KB words (ids) the query word may stand for, with what each costs."""
        costs: dict[int, float] = {}
        edits = max_edits(word)
        if edits:
            # Only words within `edits` letters of its length can be within `edits` edits of it.
            for length in range(len(word) - edits, len(word) + edits + 1):
                bucket = self.by_length.get(length)
                if bucket is None:
                    continue
                words, word_ids = bucket
                distances = process.cdist(
                    [word], words, scorer=OSA.distance, score_cutoff=edits, dtype=np.int32, workers=1
                )[0]
                for at in np.flatnonzero(distances <= edits).tolist():
                    costs[word_ids[at]] = float(distances[at])
        elif word in self.word_ids:
            costs[self.word_ids[word]] = 0.0
        if typing and len(word) >= 3:
            start = bisect.bisect_left(self.sorted_words, word)
            for candidate in self.sorted_words[start : start + MAX_PREFIX_WORDS]:
                if not candidate.startswith(word):
                    break
                word_id = self.word_ids[candidate]
                costs[word_id] = min(costs.get(word_id, PREFIX_COST), PREFIX_COST)
        return costs

    def _name_costs(self, word: str, typing: bool) -> dict[int, float]:
        """Names (positions) holding the query word in some form, with the cheapest form's cost."""
        found: dict[int, float] = {}
        for word_id, cost in sorted(self._word_costs(word, typing).items(), key=lambda item: item[1]):
            for position in self.postings[word_id]:
                found.setdefault(position, cost)
        return found

    def search(self, query: str, limit: int = 50) -> list[NameHit]:
        """The best name of up to `limit` concepts, best first. A query ending in a letter is still
        being typed: its last word may also be the start of a longer one."""
        words = list(dict.fromkeys(search_words(query)))
        if not words or not self.rows:
            return []
        typing = bool(query) and not query[-1].isspace()
        per_word = [self._name_costs(w, typing and i == len(words) - 1) for i, w in enumerate(words)]
        per_word.sort(key=len)
        scored: dict[int, float] = {}
        for position, cost in per_word[0].items():
            total = cost
            for other in per_word[1:]:
                extra = other.get(position)
                if extra is None:
                    break
                total += extra
            else:
                scored[position] = total
        hits = self._best_per_concept(scored, len(words), limit)
        if len(hits) < limit and len(words) >= 2:
            hits += self._partial(per_word, len(words), limit - len(hits), {h.key for h in hits})
        return hits

    def _partial(
        self, per_word: list[dict[int, float]], count: int, limit: int, seen: set[str]
    ) -> list[NameHit]:
        """Names holding every query word but one (unknown, or misspelt beyond repair). Only names
        holding one of the rarer words count: without "coeliac", "coeliac disease" would list every
        disease, and without "xyzzy", "xyzzy disease" should not either."""
        scored: dict[int, float] = {}
        looked: set[int] = set()
        for costs in per_word[:-1]:  # sorted rarest first: all but the most common word
            for position in costs:
                if position in looked:
                    continue
                looked.add(position)
                present = [found[position] for found in per_word if position in found]
                if len(present) == count - 1:
                    scored[position] = sum(present) + MISSING_WORD_COST
        return self._best_per_concept(scored, count - 1, limit, seen)

    def _best_per_concept(
        self, scored: dict[int, float], asked: int, limit: int, seen: set[str] | None = None
    ) -> list[NameHit]:
        """Rank names (a concept's preferred name, then the shorter, wins a tie) and keep each
        concept's best; the sort runs in numpy, as a common word can match 15,000 names."""
        if not scored:
            return []
        seen = set(seen or ())
        positions = np.fromiter(scored.keys(), dtype=np.int64, count=len(scored))
        final = np.fromiter(scored.values(), dtype=np.float64, count=len(scored))
        final += EXTRA_WORD_COST * np.maximum(self.word_counts[positions] - asked, 0)
        order = np.lexsort((self.name_lengths[positions], ~self.preferred[positions], final))
        hits: list[NameHit] = []
        for at in order.tolist():
            position = int(positions[at])
            key = self.keys[position]
            if key in seen:
                continue
            seen.add(key)
            hits.append(NameHit(self.rows[position], key, bool(self.preferred[position]), float(final[at])))
            if len(hits) >= limit:
                break
        return hits
