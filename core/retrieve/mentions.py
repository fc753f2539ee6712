"""Composite splitting of mention strings (used by the query plan, core.retrieve.query_plan).

Composite splitting (methods.md A.8: each sub-term of a composite mention is retrieved on its own).
The raw text is cut at coordinators ("and", "or", "and/or", "to", "&", ",", "/") and the shared part
is distributed:
- right-headed, the usual case: "breast and ovarian cancer" -> "breast cancer", "ovarian cancer";
  "colorectal, endometrial, and ovarian cancers" -> three "... cancers"; the head is the last
  conjunct minus its first word, appended to each earlier conjunct that does not already end with it;
- left-headed, when only the first conjunct has several words: "deficiency of C6 and C7" ->
  "deficiency of C6", "deficiency of C7" (the first conjunct minus its last word is prefixed);
- a slash inside one word ("CL/P", "cleft lip/palate") is a coordinator too.
A mention that yields a single piece is returned as itself. The query plan decides when to split
(from the text alone, keeping the whole text as a query too); the retriever never splits on its own.
"""

from __future__ import annotations

import re

_COORDINATOR = re.compile(
    r"\s*(?:,\s*(?:and/or|and|or)\s+|\s+(?:and/or|and|or|to|&)\s+|,\s*|\s*/\s*)\s*", re.I
)
_FILLER = re.compile(r"^(?:the|a|an|some|other|milder|more)\s+", re.I)


def split_composite(text: str) -> list[str]:
    """Sub-mentions of a coordinated mention (see the module docstring); [text] when it does not split."""
    stripped = " ".join(re.sub(r"[()]", " ", text).split())
    parts = [p.strip() for p in _COORDINATOR.split(stripped) if p and p.strip()]
    if len(parts) < 2:
        return [text]
    parts = [_strip_fillers(p) for p in parts]
    last_words = parts[-1].split()
    first_words = parts[0].split()
    pieces: list[str] = []
    if len(last_words) > 1:
        head = last_words[1:]
        for part in parts[:-1]:
            words = part.split()
            if words[-len(head) :] == head or words[-1].lower() == head[-1].lower():
                pieces.append(part)
            else:
                pieces.append(" ".join(words + head))
        pieces.append(parts[-1])
    elif len(first_words) > 1:
        prefix = first_words[:-1]
        pieces.append(parts[0])
        pieces.extend(" ".join(prefix + part.split()) for part in parts[1:])
    else:
        pieces = parts
    return [p for p in dict.fromkeys(pieces) if p]


def _strip_fillers(part: str) -> str:
    previous = None
    while previous != part:
        previous, part = part, _FILLER.sub("", part)
    return part
