"""Word-level comparison of a mention with a concept's names, for the ranker's token features.

Character cosines (ResCNN, TF-IDF) rate "cognitive impairment" about as close to "Mild Cognitive
Impairment" as to "Cognition Disorders"; what separates such near-identical names is which words the
name adds or lacks and whether the head word (the noun the phrase is about) agrees. Tokens are the
normalised words without function words, with plurals and British spellings folded, so "tumours" and
"tumor" count as one word; MeSH's inverted names ("Lymphoma, B-Cell") take their head from before the
comma.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from core.text.normalize import normalize_name

FUNCTION_WORDS = frozenset({"a", "an", "the", "of", "and", "or", "in", "on", "with", "to", "for", "by", "at"})
"""Words that never decide between two names; dropped before comparing."""

HEAD_BREAKS = frozenset({"of", "in", "with", "due", "associated", "caused", "involving", "affecting"})
"""A noun phrase's head is the word before the first of these ("deficiency of factor X": deficiency)."""

_PLURAL_IES = re.compile(r"(?<=..)ies$")
_PLURAL_S = re.compile(r"(?<=...)(?<![isu])s$")  # not -is (fibrosis), -us (status), -ss


def fold_word(word: str) -> str:
    """One spelling per word: British ae/oe and -our to American, plural -ies/-s to the singular."""
    word = _PLURAL_S.sub("", _PLURAL_IES.sub("y", word))
    word = word.replace("ae", "e").replace("oe", "e")
    return word[:-3] + "or" if word.endswith("our") and len(word) > 4 else word


@dataclass(frozen=True)
class WordForm:
    """A string's content words (folded) and its head word (folded; "" when it has no words)."""

    words: frozenset[str]
    head: str


def word_form(text: str) -> WordForm:
    """Content words and head of a mention or a name; an inverted name "X, Y" takes its head from X."""
    words = [fold_word(w) for w in normalize_name(text).split()]
    content = frozenset(w for w in words if w not in FUNCTION_WORDS)
    main = normalize_name(text.split(",", 1)[0]).split() if "," in text else normalize_name(text).split()
    head = ""
    for i, word in enumerate(main):
        if i > 0 and word in HEAD_BREAKS:
            break
        if word not in FUNCTION_WORDS:
            head = fold_word(word)
    return WordForm(content, head)


@dataclass(frozen=True)
class WordMatch:
    """How a mention's words compare with a concept's best-matching name (best by Jaccard)."""

    jaccard: float  # |M ∩ N| / |M ∪ N| of the content words
    coverage: float  # share of the mention's words the name has
    extra: float  # share of the name's words the mention lacks
    head_match: bool  # the mention's head is the head of one of the concept's names


NO_MATCH = WordMatch(0.0, 0.0, 1.0, False)


def word_match(mentions: Iterable[WordForm], names: Iterable[WordForm]) -> WordMatch:
    """The best Jaccard over every (mention string, name) pair, with that pair's coverage and extra."""
    names = list(names)
    best = NO_MATCH
    best_key = (-1.0, -1.0)
    heads = {n.head for n in names if n.head}
    head_match = False
    for mention in mentions:
        head_match = head_match or (bool(mention.head) and mention.head in heads)
        if not mention.words:
            continue
        for name in names:
            if not name.words:
                continue
            common = len(mention.words & name.words)
            jaccard = common / len(mention.words | name.words)
            coverage = common / len(mention.words)
            key = (jaccard, coverage)
            if key > best_key:
                best_key = key
                best = WordMatch(jaccard, coverage, 1.0 - common / len(name.words), False)
    return WordMatch(best.jaccard, best.coverage, best.extra, head_match)
