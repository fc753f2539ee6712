"""The one name normalisation used everywhere (KB names, mentions, dictionary lookups).

Case folding and NFKC make "Crohn's" and "CROHN’S" meet; hyphens and punctuation become spaces so
"non-Hodgkin" meets "non Hodgkin", the convention of the BioSyn dictionaries.
"""

from __future__ import annotations

import re
import unicodedata

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})
_POSSESSIVE = re.compile(r"'s\b")
_NON_WORD = re.compile(r"[^\w]+", re.UNICODE)
_UNDERSCORE = re.compile(r"_+")


def normalize_name(text: str) -> str:
    """Lower-case, NFKC, punctuation and hyphens to single spaces, possessive 's kept as 's'."""
    folded = unicodedata.normalize("NFKC", text).translate(_APOSTROPHES).casefold()
    folded = _POSSESSIVE.sub("s", folded)
    folded = _NON_WORD.sub(" ", folded)
    folded = _UNDERSCORE.sub(" ", folded)
    return " ".join(folded.split())
