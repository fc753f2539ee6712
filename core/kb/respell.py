"""A query's words in the KB's own spelling: "hypoglycaemia" searched as "hypoglycemia".

The dictionary tagger and KB search meet a British spelling through a fold applied to both sides
(core.text.spelling: "ae" -> "e", "oe" -> "e", "our" -> "or", "-tre" -> "-ter", "sulph" -> "sulf",
-ize -> -ise), so "hypoglycaemia" is tagged with Hypoglycemia's id. The retriever encoded the string as
written, and its character model put Hypoglossal Nerve Diseases first for "hypoglycaemia" and Lelis
Syndrome for "leukaemia" (issue 31 item 6). Here each word of a query is folded the same way; the folded
word (and its -ize form, the one fold that goes the other way) is the other spelling, and when the KB
writes that spelling more often than the one typed, the word is replaced by it. The linker's query plan
goes through it (core.pipeline), so the retriever, the ranker's features and its prior all see the same
string. A word is changed only toward a spelling the KB itself uses more often (MEDIC names "Familial
Acute Myeloid Leukaemia" once and "leukemia" in 60-odd names), never to a word the KB lacks ("aerobic"
folds to "erobic", which no name has), and words shorter than `MIN_LENGTH` are left alone.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable

from core.text.spelling import spelling_fold

MIN_LENGTH = 5
_WORD = re.compile(r"[^\W\d_]+")
_ISE = re.compile(r"(?<=[iy])s")


def _plain(word: str) -> str:
    """Lower case, accents stripped (KB search strips them as well)."""
    word = word.casefold()
    if word.isascii():
        return word
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


class KbSpelling:
    """How often the KB's names write each word (lower case, accents stripped)."""

    def __init__(self, names: Iterable[str]):
        self.counts: Counter[str] = Counter()
        # one pass over one string: MEDIC's 95,000 names are counted in about a tenth of a second
        for word, count in Counter(_WORD.findall("\n".join(names).casefold())).items():
            self.counts[_plain(word) if not word.isascii() else word] += count

    @classmethod
    def of(cls, kb) -> KbSpelling:
        """From a core.kb.knowledge_base.KnowledgeBase's names."""
        return cls(entry.name for entry in kb.names)

    def word(self, word: str) -> str:
        """The KB's spelling of one word, or the word as it is."""
        if len(word) < MIN_LENGTH:
            return word
        written = word.casefold()
        folded = spelling_fold(_plain(written))
        best, most = written, self.counts.get(written, 0)
        for other in (folded, _ISE.sub("z", folded)):
            if self.counts.get(other, 0) > most:
                best, most = other, self.counts[other]
        if best == written:
            return word
        return best[:1].upper() + best[1:] if word[:1].isupper() else best

    def respell(self, text: str) -> str:
        """`text` with each word in the KB's spelling (everything else kept as written)."""
        return _WORD.sub(lambda hit: self.word(hit.group()), text)
