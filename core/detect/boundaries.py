"""Where a dictionary match may begin and end in biomedical text.

Splitting text at every non-word character is not enough: "HT" is a \\w-token of "5-HT(2B)", "NHL" of
"B-NHL", "eclampsia" of "pre-eclampsia", and matching them there links serotonin to Hashimoto disease.
A word here is what a reader sees as one: letters, digits and Greek letters joined by hyphens,
apostrophes, brackets or "+" ("5-HT(2B)", "IL-2", "O'Brien", "CD4+").

- A match never starts inside such a word: a prefix changes the meaning ("non-", "pre-", "5-").
  NCBI-disease (6,892 gold mentions over its three splits) has no mention starting after "x-".
- A match may end before a hyphen that opens a suffix word ("melanoma-prone", "HD-associated",
  "MLD-like": 47 NCBI-disease gold mentions end so), but not before a hyphen that continues a name
  with a digit or a lone letter ("TIC-1", "IL-2", "HLA-B", "HT-29").
- "/" separates words ("SCA3/MJD": 70 gold mentions start or end at a slash), as do spaces and
  ordinary punctuation.
- Names and text tokens drop signs and brackets, so a match of "Ca(2+)" or "CaCl(2)" ends at the digit;
  `closed_end` carries it over the ion's charge and the parenthesis it leaves open (BioRED train + dev:
  60 chemical mentions end in "+", "-" or ")").
"""

from __future__ import annotations

import re

HYPHENS = frozenset("-\u2010\u2011\u2012\u2013")
APOSTROPHES = frozenset("'\u2019\u2018\u02bc`")
_JOIN_BEFORE = HYPHENS | APOSTROPHES | frozenset("()[]+")
_JOIN_AFTER = APOSTROPHES | frozenset("([+")


def _wordlike(char: str) -> bool:
    return char.isalnum()


def starts_word(text: str, index: int) -> bool:
    """True when a match may begin at `index` (not inside a word, joined words included)."""
    if index <= 0:
        return True
    before = text[index - 1]
    if _wordlike(before):
        return False
    return not (before in _JOIN_BEFORE and index >= 2 and _wordlike(text[index - 2]))


def ends_word(text: str, index: int) -> bool:
    """True when a match may end at `index` (exclusive), i.e. no word goes on after it."""
    if index >= len(text):
        return True
    after = text[index]
    if _wordlike(after):
        return False
    following = text[index + 1] if index + 1 < len(text) else ""
    if after in APOSTROPHES and following == "s" and not text[index + 2 : index + 3].isalpha():
        return True  # a possessive: "CF's symptoms"
    if after in _JOIN_AFTER and _wordlike(following):
        return False
    if after in HYPHENS and following:
        return not _continues_name(text, index + 1)
    return True


def _continues_name(text: str, index: int) -> bool:
    """After a hyphen: a digit ("IL-2") or a lone letter ("HLA-B") continues a name; a word is a suffix."""
    first = text[index]
    if first.isdigit():
        return True
    if not first.isalpha():
        return False
    return not (index + 1 < len(text) and text[index + 1].isalpha())


def on_word_boundaries(text: str, start: int, end: int) -> bool:
    return starts_word(text, start) and ends_word(text, end)


_CHARGE = re.compile(r"\s?\(?[+\-\u2212]+\)?(?!\w)")


def closed_end(text: str, start: int, end: int) -> int:
    """Where a match that ends at `end` really ends: over an ion's charge after a digit or an element
    symbol ("Ca2+", "Ca(2+)", "O2-", "I-", "Na(+)"; names and text tokens drop the sign) and over the
    parenthesis it leaves open ("CaCl(2)", "PGE(2)")."""
    surface = text[start:end]
    charged = surface[-1:].isdigit() or (len(surface) <= 2 and surface.isalpha())
    if charged and (found := _CHARGE.match(text, end)) and not text[end : found.end()].startswith(" -"):
        end = found.end()
    while text[start:end].count("(") > text[start:end].count(")") and text[end : end + 1] == ")":
        end += 1
    return end
