"""Forgiving name search over a whole KB: word order, spelling variants and typos.

Every name becomes a bag of folded words (core.text.spelling). A query word matches a KB word that is
the same, within one or two edits of it (rapidfuzz's optimal-string-alignment distance, so a swapped
pair of letters is one edit), or, for the word being typed, that starts with it. A name matches when
all query words do; it scores the edits spent plus a little for each word the query did not ask for,
so "cancer breast" finds "Breast Cancer" (no edits, no extra words) before "Breast Cancer, Male".
Names that match all but one query word follow, so one unknown word does not empty the list.

Why words and not whole strings: a query is usually shorter than the names it should find
("diabtes" -> "Diabetes Mellitus"), which whole-string ratios punish, and a vocabulary of distinct
words (about 20,000 in MEDIC) is small enough for rapidfuzz to scan in about a millisecond.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass

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
        self.word_counts: list[int] = []
        self.name_lengths: list[int] = []
        self.preferred: list[bool] = []
        for row, key, name, preferred in names:
            position = len(self.rows)
            words = set(folded_words(name))
            self.rows.append(row)
            self.keys.append(key)
            self.word_counts.append(len(words))
            self.name_lengths.append(len(name))
            self.preferred.append(bool(preferred))
            for word in words:
                word_id = vocabulary.setdefault(word, len(vocabulary))
                if word_id == len(postings):
                    postings.append([])
                postings[word_id].append(position)
        self.words = list(vocabulary)
        self.word_ids = vocabulary
        self.postings = postings
        self.sorted_words = sorted(vocabulary)

    def __len__(self) -> int:
        return len(self.rows)

    def _word_costs(self, word: str, typing: bool) -> dict[int, float]:
        """KB words (ids) the query word may stand for, with what each costs."""
        costs: dict[int, float] = {}
        edits = max_edits(word)
        if edits:
            for _match, distance, word_id in process.extract(
                word, self.words, scorer=OSA.distance, score_cutoff=edits, limit=None
            ):
                costs[word_id] = float(distance)
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
        """Names holding every query word but one (the one unknown or misspelt beyond repair)."""
        matched: dict[int, int] = {}
        totals: dict[int, float] = {}
        for costs in per_word:
            for position, cost in costs.items():
                matched[position] = matched.get(position, 0) + 1
                totals[position] = totals.get(position, 0.0) + cost
        scored = {p: totals[p] + MISSING_WORD_COST for p, n in matched.items() if n == count - 1}
        return self._best_per_concept(scored, count - 1, limit, seen)

    def _best_per_concept(
        self, scored: dict[int, float], asked: int, limit: int, seen: set[str] | None = None
    ) -> list[NameHit]:
        seen = set(seen or ())
        counts, lengths, preferred = self.word_counts, self.name_lengths, self.preferred
        final = {p: cost + EXTRA_WORD_COST * max(counts[p] - asked, 0) for p, cost in scored.items()}
        hits: list[NameHit] = []
        # Ties: a concept's preferred name first, then the shorter name.
        for position in sorted(final, key=lambda p: (final[p], not preferred[p], lengths[p])):
            key = self.keys[position]
            if key in seen:
                continue
            seen.add(key)
            hits.append(NameHit(self.rows[position], key, preferred[position], final[position]))
            if len(hits) >= limit:
                break
        return hits
