"""Dictionary tagging with Aho-Corasick over normalised KB names.

Text is cut into word tokens, each brought to the form KB search matches in (`normalize_name`, Greek
letters spelled out, then every word folded as `core.text.spelling` folds it: "diarrhoea" meets
"Diarrhea", "tumours" meets "Tumor", "Alzheimer's" meets "Alzheimer"), and joined by single spaces;
names are brought to the same form, so "Non-Hodgkin's lymphoma" in the text meets the name "non
hodgkin lymphoma". Matches must start and end on token boundaries and, in the text, on word boundaries
(`boundaries`: not "HT" inside "5-HT(2B)"); overlapping matches are resolved longest-first, then
leftmost, a name followed by a generic head that another name crosses counting as the whole phrase
("fatty liver disease" is Fatty Liver's, not 'liver disease' inside it). Offsets map back to the original text through the tokens.

Each name carries the mention type it tags (a project's dictionary holds diseases and chemicals
together, core.project_detector); a short form the text defines for a matched long form is tagged with the
long form's type and concepts. A defined long form that only ends in a name ("chronic kidney disease
(CKD)", "deoxycorticosterone acetate (DOCA)", where the KB names "kidney disease" and "acetate") is
tagged whole, with its short form and every repetition of it, typed as that name but with no concept
(the name inside is not the long form's concept; linking decides). Names the project's annotators pass
over are left out by the caller (core.detect.unmarked_names). "acid" after a word in -ic or -ous is that
acid's whole name ("retinoic acid", "salvianolic acid A"), not the class Acids.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import ahocorasick

from core.detect.boundaries import closed_end, on_word_boundaries, starts_word
from core.documents import Document, Mention
from core.kb.knowledge_base import KnowledgeBase
from core.text.normalize import normalize_name
from core.text.spelling import spelling_words

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


_Match = tuple[int, int, set[str], str]  # start, end, concept ids, mention type


class DictionaryDetector:
    name = "dictionary"

    def __init__(
        self,
        names: Iterable[tuple[str, str] | tuple[str, str, str]],
        *,
        mention_type: str = "",
        min_length: int = DEFAULT_MIN_LENGTH,
        stop_names: frozenset[str] = DEFAULT_STOP_NAMES,
        case_sensitive_short: bool = True,
    ):
        """`names` are (name, concept id) pairs, typed `mention_type`, or (name, concept id, type)
        triples; a name given with two types keeps the first. Short all-caps names (abbreviations) must
        match case."""
        self.mention_type = mention_type
        self._automaton = ahocorasick.Automaton()
        self._exact_case: dict[str, set[str]] = {}
        entries: dict[str, tuple[str, str, set[str]]] = {}
        free_case: set[str] = set()
        stop_keys = {dictionary_key(name) for name in stop_names}
        for name, concept_id, *typed in names:
            key = dictionary_key(name)
            abbreviation = case_sensitive_short and name.isupper() and 2 <= len(name) <= 5
            if key in stop_keys or (len(key) < min_length and not abbreviation):
                continue
            entry_type = typed[0] if typed else mention_type
            entry = entries.setdefault(key, (key, entry_type, set()))
            if entry[1] != entry_type:
                continue
            if abbreviation:
                self._exact_case.setdefault(key, set()).add(name)
            else:
                free_case.add(key)
            entry[2].add(concept_id)
        for key in free_case:
            self._exact_case.pop(key, None)
        for key, entry in entries.items():
            self._automaton.add_word(key, entry)
        self.types = tuple(sorted({entry[1] for entry in entries.values()}))
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
        return self.reading(text, abbreviations=abbreviations)[1]

    def raw_matches(self, text: str) -> list[_Match]:
        """Every name match in `text` before overlaps are resolved, (start, end, ids, type)."""
        return [] if self._empty else self._dictionary_matches(text)

    def reading(
        self, text: str, *, abbreviations: bool = True, definitions: list | None = None
    ) -> tuple[list[_Match], list[Mention]]:
        """(every name match before overlaps are resolved, as (start, end, ids, type); the mentions
        `detect_text` gives): the sequence tagger reads both, the longer and shorter readings a
        curator's boundary may follow. `definitions`: the text's abbreviations, when already found."""
        if self._empty:
            return [], []
        raw = self._dictionary_matches(text)
        found = raw + _head_extended(text, raw) + _named_acids(text, raw)
        if abbreviations:
            # the text's own definition first: at an equal span it beats the dictionary's reading
            found = self._defined_short_forms(text, found, definitions) + found
        return raw, self._resolve_overlaps(text, found)

    @staticmethod
    def _defined_short_forms(text: str, found: list[_Match], definitions: list | None = None) -> list[_Match]:
        from core.text.abbreviations import find_abbreviations

        by_span = {(start, end): (ids, mention_type) for start, end, ids, mention_type in found}
        by_end: dict[int, list[tuple[int, set[str], str]]] = {}
        for start, end, ids, mention_type in found:
            by_end.setdefault(end, []).append((start, ids, mention_type))
        extra: list[_Match] = []
        for abbreviation in find_abbreviations(text) if definitions is None else definitions:
            span = abbreviation.long_span
            long_form = by_span.get((span.start, span.end))
            if long_form is None:
                # a defined long form that ends in a name is that name's kind of thing, modifiers
                # and all ("chronic kidney disease (CKD)", "deoxycorticosterone acetate (DOCA)"),
                # but not that name's concept: no ids, linking decides
                heads = [t for s, _, t in by_end.get(span.end, []) if span.start < s]
                # only "long form (short form)": in "apoE (arginine 150 proline)" the parenthesis is no name
                if not heads or abbreviation.short_span.start < span.start:
                    continue
                long_form = (set(), heads[0])
                # the long form again, wherever the text repeats it
                again = re.compile(rf"(?<!\w){re.escape(text[span.start : span.end])}(?!\w)", re.IGNORECASE)
                extra += [
                    (m.start(), m.end(), *long_form)
                    for m in again.finditer(text)
                    if on_word_boundaries(text, m.start(), m.end())
                ]
            pattern = re.compile(rf"(?<!\w){re.escape(abbreviation.short)}(?!\w)")
            extra += [
                (m.start(), m.end(), *long_form)
                for m in pattern.finditer(text)
                if on_word_boundaries(text, m.start(), m.end())
            ]
        return extra

    def _dictionary_matches(self, text: str) -> list[_Match]:
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
        found: list[_Match] = []
        for end_char, (key, mention_type, ids) in self._automaton.iter(joined):
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
            start = tokens[first][0]
            found.append((start, closed_end(text, start, tokens[last][1]), ids, mention_type))
        return found

    def _resolve_overlaps(self, text: str, found: list[_Match]) -> list[Mention]:
        chosen: list[_Match] = []
        taken: list[tuple[int, int]] = []
        for match in sorted(found, key=lambda f: (-(f[1] - f[0]), f[0])):
            start, end = match[0], match[1]
            if any(start < e and s < end for s, e in taken):
                continue
            taken.append((start, end))
            chosen.append(match)
        chosen.sort(key=lambda f: (f[0], f[1]))
        return [
            Mention(
                start,
                end,
                text[start:end],
                mention_type,
                concept_id=next(iter(ids)) if len(ids) == 1 else "",
                origin="detected",
                infons={"dictionary_ids": "|".join(sorted(ids))},
            )
            for start, end, ids, mention_type in chosen
        ]


_GENERIC_HEAD = re.compile(r"\W*(?:disease|disorder|syndrome)s?\W*", re.IGNORECASE)


def _head_extended(text: str, found: list[_Match]) -> list[_Match]:
    """'fatty liver' + 'liver disease' in "fatty liver disease": the first name with the generic head
    after it, so the longest match is the whole phrase, not the 'liver disease' inside it."""
    extended = []
    ordered = sorted(found, key=lambda f: f[0])
    for at, (start, end, ids, mention_type) in enumerate(ordered):
        for other_start, other_end, _, _ in ordered[at + 1 :]:
            if other_start >= end:
                break
            if start < other_start and end < other_end and _GENERIC_HEAD.fullmatch(text[end:other_end]):
                extended.append((start, other_end, ids, mention_type))
    return extended


def dictionary_key(text: str) -> str:
    """The form names and text tokens meet in: `normalize_name`, Greek letters spelled out, each word
    folded as KB search folds it (core.text.spelling)."""
    return " ".join(spelling_words(normalize_name(text).translate(_GREEK)))


_ACID_NAME = re.compile(r"(?<![\w-])[\w,'()\[\]-]*[a-z](?:ic|ous)\s+$")
_ACID_SUFFIX = re.compile(r"\s+[A-Z](?![\w-])")


def _named_acids(text: str, found: list[_Match]) -> list[_Match]:
    """'acid' after a word in -ic or -ous is that acid's name, not the class Acids: "retinoic acid",
    "3,4-dihydroxyphenylacetic acid", "salvianolic acid A" are one chemical each (their concept is left to
    linking, no ids)."""
    extended = []
    for start, end, _, mention_type in found:
        if dictionary_key(text[start:end]) != "acid":
            continue
        name = _ACID_NAME.search(text, max(0, start - 80), start)
        if name is None or not starts_word(text, name.start()):
            continue
        suffix = _ACID_SUFFIX.match(text, end)
        extended.append((name.start(), suffix.end() if suffix else end, set(), mention_type))
    return extended
