"""Dictionary tagging with Aho-Corasick over normalised KB names.

Text is cut into word tokens, each normalised with the shared `normalize_name` (Greek letters then
spelled out, so "β-thalassemia" meets "beta-Thalassemia"), and joined by single spaces; names are
normalised the same way, so "Non-Hodgkin's lymphoma" in the text meets the name "non hodgkins lymphoma".
Matches must start and end on token boundaries and, in the text, on word boundaries (`boundaries`: not
"HT" inside "5-HT(2B)"); overlapping matches are resolved longest-first, then leftmost. Offsets map back
to the original text through the tokens.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import ahocorasick

from core.detect.boundaries import on_word_boundaries
from core.documents import Document, Mention
from core.kb.knowledge_base import KnowledgeBase
from core.text.normalize import normalize_name

_TOKEN = re.compile(r"\w+(?:['\u2019]s\b)?", re.UNICODE)
_GREEK = str.maketrans(
    dict(
        zip(
            "αβγδεζηθικλμνξοπρσςτυφχψω",
            "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma "
            "sigma tau upsilon phi chi psi omega".split(),
            strict=True,
        )
    )
)
DEFAULT_MIN_LENGTH = 3
# Names that are English words far more often than concepts in running text.
DEFAULT_STOP_NAMES = frozenset(
    {"all", "can", "cell", "cells", "disease", "diseases", "may", "was", "as", "is", "death"}
)


class DictionaryDetector:
    name = "dictionary"

    def __init__(
        self,
        names: Iterable[tuple[str, str]],
        *,
        mention_type: str = "",
        min_length: int = DEFAULT_MIN_LENGTH,
        stop_names: frozenset[str] = DEFAULT_STOP_NAMES,
        case_sensitive_short: bool = True,
    ):
        """`names` are (name, concept id) pairs; short all-caps names (abbreviations) must match case."""
        self.mention_type = mention_type
        self._automaton = ahocorasick.Automaton()
        self._exact_case: dict[str, set[str]] = {}
        free_case: set[str] = set()
        for name, concept_id in names:
            key = dictionary_key(name)
            abbreviation = case_sensitive_short and name.isupper() and 2 <= len(name) <= 5
            if key in stop_names or (len(key) < min_length and not abbreviation):
                continue
            if abbreviation:
                self._exact_case.setdefault(key, set()).add(name)
            else:
                free_case.add(key)
            entry = self._automaton.get(key, None) if key in self._automaton else None
            ids = entry[1] if entry else set()
            ids.add(concept_id)
            self._automaton.add_word(key, (key, ids))
        for key in free_case:
            self._exact_case.pop(key, None)
        self._empty = len(self._automaton) == 0
        if not self._empty:
            self._automaton.make_automaton()

    @classmethod
    def from_kb(cls, kb: KnowledgeBase, **options) -> DictionaryDetector:
        return cls(((entry.name, entry.concept_id) for entry in kb.names), **options)

    def detect(self, documents: Sequence[Document]) -> list[list[Mention]]:
        return [self.detect_text(document.text, abbreviations=True) for document in documents]

    def detect_text(self, text: str, *, abbreviations: bool = False) -> list[Mention]:
        """Dictionary matches; with `abbreviations`, also every use of a short form the text defines
        for a matched long form ("Cystic fibrosis (CF) ... CF patients" tags both CFs)."""
        if self._empty:
            return []
        found = self._dictionary_matches(text)
        if abbreviations:
            found += self._defined_short_forms(text, found)
        return self._resolve_overlaps(text, found)

    @staticmethod
    def _defined_short_forms(
        text: str, found: list[tuple[int, int, set[str]]]
    ) -> list[tuple[int, int, set[str]]]:
        from core.text.abbreviations import find_abbreviations

        by_span = {(start, end): ids for start, end, ids in found}
        extra: list[tuple[int, int, set[str]]] = []
        for abbreviation in find_abbreviations(text):
            ids = by_span.get((abbreviation.long_span.start, abbreviation.long_span.end))
            if ids is None:
                continue
            pattern = re.compile(rf"(?<!\w){re.escape(abbreviation.short)}(?!\w)")
            extra += [
                (m.start(), m.end(), ids)
                for m in pattern.finditer(text)
                if on_word_boundaries(text, m.start(), m.end())
            ]
        return extra

    def _dictionary_matches(self, text: str) -> list[tuple[int, int, set[str]]]:
        tokens = [(m.start(), m.end(), dictionary_key(m.group())) for m in _TOKEN.finditer(text)]
        tokens = [t for t in tokens if t[2]]
        starts: dict[int, int] = {}
        ends: dict[int, int] = {}
        pieces: list[str] = []
        cursor = 0
        for index, (_, _, norm) in enumerate(tokens):
            if pieces:
                cursor += 1
            starts[cursor] = index
            pieces.append(norm)
            cursor += len(norm)
            ends[cursor] = index
        joined = " ".join(pieces)
        found: list[tuple[int, int, set[str]]] = []
        for end_char, (key, ids) in self._automaton.iter(joined):
            start_char = end_char - len(key) + 1
            first, last = starts.get(start_char), ends.get(end_char + 1)
            if first is None or last is None:
                continue
            if not on_word_boundaries(text, tokens[first][0], tokens[last][1]):
                continue
            surface = text[tokens[first][0] : tokens[last][1]]
            allowed = self._exact_case.get(key)
            if (
                allowed is not None
                and surface not in allowed
                and not any(len(a) < len(surface) for a in allowed)
            ):
                continue
            found.append((tokens[first][0], tokens[last][1], ids))
        return found

    def _resolve_overlaps(self, text: str, found: list[tuple[int, int, set[str]]]) -> list[Mention]:
        chosen: list[tuple[int, int, set[str]]] = []
        taken: list[tuple[int, int]] = []
        for start, end, ids in sorted(found, key=lambda f: (-(f[1] - f[0]), f[0])):
            if any(start < e and s < end for s, e in taken):
                continue
            taken.append((start, end))
            chosen.append((start, end, ids))
        chosen.sort()
        return [
            Mention(
                start,
                end,
                text[start:end],
                self.mention_type,
                concept_id=next(iter(ids)) if len(ids) == 1 else "",
                origin="detected",
                infons={"dictionary_ids": "|".join(sorted(ids))},
            )
            for start, end, ids in chosen
        ]


def dictionary_key(text: str) -> str:
    """The form names and text tokens meet in: `normalize_name`, Greek letters spelled out."""
    return normalize_name(text).translate(_GREEK)
