"""Search keys that forgive spelling: British/American variants, accents, possessives and plurals.

A curator types "oesophageal", "haemorrhage", "tumour" or "Alzheimers"; the KB says "esophageal",
"hemorrhage", "tumor", "Alzheimer". Both sides are folded the same way, so a fold only has to be
consistent, not correct English: "aerobic" becomes "erobic" on both sides and still meets itself.
These keys are for finding names, never for storing or comparing them (that is `normalize_name`).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from core.text.normalize import normalize_name

# Ordered (pattern, replacement) pairs applied to one lower-case word.
_FOLDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"ae"), "e"),  # haem-, anaem-, leukaem-, paed-, gynaec-, aetiology
    (re.compile(r"oe"), "e"),  # oesophag-, oedema, foetal, oestrogen, diarrhoea, coeliac
    (re.compile(r"(?<=\w)our"), "or"),  # tumour, colour, behaviour, humour
    (re.compile(r"(?<=[iy])z"), "s"),  # -ize/-ise, -ization/-isation, analyze/analyse
    (re.compile(r"(?<=[bt])re$"), "er"),  # centre, fibre, litre
    (re.compile(r"^sulph"), "sulf"),  # sulphur, sulphate
)
# Function words dropped from both sides: "cancer of the breast" meets "breast cancer".
STOP_WORDS = frozenset({"a", "an", "and", "by", "for", "in", "of", "on", "or", "the", "to", "with"})


def spelling_fold(word: str) -> str:
    """One lower-case word with its spelling variants folded (British/American, -ise/-ize, ...), its
    number left alone: the part of `fold_word` that says two spellings are one word
    (core.kb.respell brings a query's words to the KB's spelling with it)."""
    for pattern, replacement in _FOLDS:
        word = pattern.sub(replacement, word)
    return word


@lru_cache(maxsize=65536)
def fold_word(word: str) -> str:
    """One normalised word -> its search key: spelling variants folded, a plural or possessive s cut."""
    word = spelling_fold(word)
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    return word


def search_words(text: str) -> list[str]:
    """The folded words of a name or query, accents stripped, function words left out (kept when
    the text has nothing else, so "A" still finds something)."""
    return folded_words(normalize_name(text))


def folded_words(normalized: str) -> list[str]:
    """`search_words` of a name already through `normalize_name` (the store keeps that form)."""
    words = spelling_words(normalized)
    content = [w for w in words if w not in STOP_WORDS]
    return content or words


def spelling_words(normalized: str) -> list[str]:
    """Every word of a normalised text folded as KB search folds it (accents stripped, spelling
    variants, plural or possessive s), function words kept: the detectors' matching form, so a
    dictionary tags "diarrhoea", "hypoglycaemia" and "tumours" where KB search finds them."""
    if not normalized.isascii():
        decomposed = unicodedata.normalize("NFKD", normalized)
        normalized = "".join(c for c in decomposed if not unicodedata.combining(c))
    return [fold_word(w) for w in normalized.split()]
