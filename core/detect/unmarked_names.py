"""Dictionary names the project's annotators pass over: left out of the dictionary that tags raw text.

A KB holds class words that running text uses far more often than any annotation guideline marks
them ("DNA", "placebo", "nucleotide", "enzyme", "hormone" are MeSH descriptors; "leads" meets the
metal Lead). The project's own fully annotated documents say which: a name the dictionary finds there
at least `min_seen` times, of which at most `max_marked` (a share) overlap an annotated mention of any
type, is a name the annotators do not tag, so tagging it in new text only costs precision. Learnt from
the project's data, not a hand list, so it follows each corpus's guideline; an evaluation's own split
is never among the documents read (core.project_detector passes only the training splits, less
`leave_out`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from core.detect.dictionary import DictionaryDetector, dictionary_key
from core.documents import Document

MIN_SEEN = 3
MAX_MARKED = 0.2


def unmarked_names(
    detector: DictionaryDetector,
    annotated: Iterable[Document],
    *,
    min_seen: int = MIN_SEEN,
    max_marked: float = MAX_MARKED,
) -> frozenset[str]:
    """Dictionary keys matched at least `min_seen` times in `annotated` (documents with their gold
    mentions) and overlapping an annotated mention in at most `max_marked` of those matches."""
    seen: Counter[str] = Counter()
    marked: Counter[str] = Counter()
    for document in annotated:
        if not document.mentions:
            continue  # raw text says nothing about what annotators mark
        gold = [(m.start, m.end) for m in document.mentions]
        for found in detector.detect_text(document.text):
            key = dictionary_key(found.text)
            seen[key] += 1
            if any(found.start < end and start < found.end for start, end in gold):
                marked[key] += 1
    return frozenset(
        key for key, count in seen.items() if count >= min_seen and marked[key] <= max_marked * count
    )
