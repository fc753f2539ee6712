"""Specificity features: is a candidate the mention's concept, or a more specific or general neighbour?

About 40 of the ranker's 110 NCBI-disease errors picked a near-identical name of a more specific or a
more general concept ("colorectal cancer" for "hereditary nonpolyposis colorectal cancer", or the
reverse). Character n-grams barely tell them apart; words do: the head word (what the phrase names:
"cancer" in "cancer of the breast"), and the words a candidate's closest name adds to the mention (a
more specific concept) or leaves out of it (a more general one).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from core.text.normalize import normalize_name

SPECIFICITY_FEATURES = ("head_word_match", "name_word_jaccard", "name_words_added", "name_words_missing")

_STOP = frozenset("the a an of in on with and or to for by due from at".split())
# a phrase's head precedes these ("deficiency of ...", "cancer in ...", "ataxia with ...")
_HEAD_BREAK = frozenset("of in with due associated caused from on at to for".split())
_KEEP_S = ("ss", "us", "is", "ys", "ics")


def singular(word: str) -> str:
    """A plural's singular by the regular rules, applied to mention and names alike."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(_KEEP_S):
        return word[:-1]
    return word


def words(text: str) -> frozenset[str]:
    """The content words of a name or mention, normalised and singular."""
    return frozenset(singular(w) for w in normalize_name(text).split() if w not in _STOP)


def head_word(text: str) -> str:
    """The word a phrase names: its last word before a breaking preposition ("breast cancer",
    "cancer of the breast" -> "cancer"), singular; "" for an empty phrase."""
    tokens = normalize_name(text).split()
    for i, token in enumerate(tokens):
        if i and token in _HEAD_BREAK:
            tokens = tokens[:i]
            break
    tokens = [t for t in tokens if t not in _STOP]
    return singular(tokens[-1]) if tokens else ""


NameWords = tuple[tuple[frozenset[str], str], ...]


def name_words(names: Iterable[str]) -> NameWords:
    """Each name's content words and head word (cached per concept by core.rank.features.NameForms)."""
    return tuple((words(name), head_word(name)) for name in names)


def specificity_rows(queries: Sequence[str], concepts: Sequence[NameWords]) -> np.ndarray:
    """Per candidate (its names' words): whether a name shares the head word of a query string, the
    best word Jaccard of a name with a query string, and for that pair the log count of words the name
    adds and of query words it lacks."""
    rows = np.zeros((len(concepts), len(SPECIFICITY_FEATURES)), dtype=np.float64)
    mention = [(words(q), head_word(q)) for q in queries]
    mention = [(w, h) for w, h in mention if w]
    if not mention:
        return rows
    for i, names in enumerate(concepts):
        best = (-1.0, 0, 0)
        head = False
        for name, name_head in names:
            for query, query_head in mention:
                head = head or (bool(name_head) and name_head == query_head)
                union = len(name | query)
                jaccard = len(name & query) / union if union else 0.0
                if jaccard > best[0]:
                    best = (jaccard, len(name - query), len(query - name))
        if best[0] >= 0:
            rows[i] = (float(head), best[0], math.log1p(best[1]), math.log1p(best[2]))
    return rows


SHARED_NAME_FEATURES = ("preferred_name_match", "name_match_shared")
"""MEDIC gives some names to two concepts (an OMIM entry and the MeSH heading it sits under); when the
mention matches several candidates' names, the match alone cannot decide, and the concept whose
preferred name it is more often is the one meant."""


def shared_name_rows(
    normalized_queries: frozenset[str], preferred: Sequence[str], matches: Sequence[bool]
) -> np.ndarray:
    """Per candidate: whether a query string is its preferred name (normalised), and log(1 + the other
    candidates whose names also contain a query string)."""
    total = sum(matches)
    rows = np.zeros((len(preferred), len(SHARED_NAME_FEATURES)), dtype=np.float64)
    for i, (name, match) in enumerate(zip(preferred, matches, strict=True)):
        rows[i] = (float(normalize_name(name) in normalized_queries), math.log1p(total - int(match)))
    return rows
