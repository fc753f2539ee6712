"""Abbreviations a document defines, and their expansion inside mentions.

The detector follows Schwartz & Hearst (2003), "A simple algorithm for identifying abbreviation
definitions in biomedical text", written here from the paper's description:

- candidates are `long form (short form)` and, when the parenthesis holds more than two words,
  `short form (long form)`; inside the parenthesis only the text before "; " or ", " counts;
- a short form has 2 to 10 characters, at most two words, at least one letter, and starts with a
  letter or digit; in the `short form (long form)` order it must also hold a capital letter or a
  digit (our addition: there any word before a parenthesis is a candidate, and lower-case words
  such as "patients (n = 12)" are never abbreviations);
- the long form is searched among the min(|SF| + 5, 2 * |SF|) words before the parenthesis, within
  the sentence: going backwards, every letter and digit of the short form must be found in order
  (case-insensitively), the first one at the start of a word; the long form then runs from the
  start of that word to the parenthesis, and must be longer than the short form and not contain it.
  Two small additions: the word start stops at "/" ("SCA3/Machado-Joseph disease (MJD)" gives
  "Machado-Joseph disease"), and an all-lower-case short form may not take a long form of more
  words than it has letters (rejects clause-long matches such as "(alphabeta)").
- before that character match, words whose initials spell the short form are looked for (our
  addition, `_initials_start`): the character match can take a letter from inside a word and drop
  the first word ("attenuated adenomatous polyposis coli (AAPC)" gave "adenomatous polyposis coli").

Plural short forms ("adenomatous polyposis coli (APCs)", "tumor suppressor genes (TSGs)"): when
a short form ends in a lower-case "s" after a capital letter or digit, or after a camel-case stem
("mAbs", "CpGs"; not "Ras"), the trailing "s" is first matched like any other character; if that
fails, the definition is retried without it. Both the plural ("APCs") and the singular ("APC")
then expand to the long form as written; the singular gets the long form with a final plural "s"
removed ("tumor suppressor gene", "antibody"), since concept names are singular. A plural token
of a singular definition ("FAPs" after "... polyposis (FAP)") expands to the singular long form.

Hand-written rather than a library: the maintained implementations are Java (the original), or
Python packages that pull in spaCy/scispaCy models (abbreviation detector), neither of which we ship.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass

from core.documents import Document, Span
from core.text.sentences import sentences_of, split_sentences

log = logging.getLogger(__name__)

_MIN_SHORT = 2
_MAX_SHORT = 10
_MAX_SHORT_WORDS = 2
_MAX_INNER = 300  # characters of a parenthesis worth reading; keeps deeply nested text linear
_LEADING_JUNK = "\"'\u201c\u2018"
_TRAILING_JUNK = "\"'\u201d\u2019,;:"
_CUT_AT = re.compile(r"[;,]\s")
_WORD_SEPARATORS = "/([{"
_PIECE = re.compile(r"[^\s\-/]+")  # a word, or one part of a hyphenated or slashed word
_FUNCTION_WORDS = frozenset({"a", "an", "and", "by", "for", "in", "of", "on", "or", "the", "to", "with"})


@dataclass(frozen=True, slots=True)
class Abbreviation:
    """One definition: `short` and `long` as written, with their offsets into the searched text."""

    short: str
    long: str
    short_span: Span
    long_span: Span


def find_abbreviations(text: str) -> list[Abbreviation]:
    """Every abbreviation definition in `text`, in text order (offsets into `text`)."""
    return _find_in_sentences(text, split_sentences(text))


def find_abbreviations_in_document(document: Document) -> list[Abbreviation]:
    """Definitions in a document, sentence by sentence of each passage (document offsets)."""
    return _find_in_sentences(document.text, sentences_of(document))


def is_short_form(candidate: str) -> bool:
    """The Schwartz & Hearst short-form test: 2-10 chars, at most two words, a letter, alphanumeric first."""
    return (
        _MIN_SHORT <= len(candidate) <= _MAX_SHORT
        and len(candidate.split()) <= _MAX_SHORT_WORDS
        and candidate[0].isalnum()
        and any(ch.isalpha() for ch in candidate)
    )


def long_form_start(short: str, candidate: str) -> int | None:
    """Where the long form for `short` starts in `candidate` (text ending at the parenthesis), or None.

    First the words whose initials spell the short form, when there are such words ending at the
    parenthesis (`_initials_start`); else the backward character match of Schwartz & Hearst: each
    letter or digit of the short form, last first, is found further left in the candidate; the first
    one must begin a word.
    """
    initials = _initials_start(short, candidate)
    if initials is not None:
        return initials
    position = len(candidate) - 1
    for index in range(len(short) - 1, -1, -1):
        char = short[index].lower()
        if not char.isalnum():
            continue
        while position >= 0 and (
            candidate[position].lower() != char
            or (index == 0 and position > 0 and candidate[position - 1].isalnum())
        ):
            position -= 1
        if position < 0:
            return None
        position -= 1
    return _word_start(candidate, position + 1)


def _word_start(candidate: str, start: int) -> int:
    while start > 0 and not candidate[start - 1].isspace() and candidate[start - 1] not in _WORD_SEPARATORS:
        start -= 1  # the whole word: "3-untranslated region (UTR)", but "SCA3/Machado-Joseph disease"
    return start


def _initials_start(short: str, candidate: str) -> int | None:
    """Where the words (hyphenated parts count as words) whose first characters are the short form's
    letters and digits, in order, begin, when the last of them ends the candidate; function words
    ("of", "and") between them are passed over. None when there are no such words.

    Schwartz & Hearst match characters anywhere in a word, so the shortest match can take a letter
    from inside a word and drop a leading word: "attenuated adenomatous polyposis coli (AAPC)" gave
    "adenomatous polyposis coli" (the second A from inside "adenomatous"), another disease. Words
    spelling the acronym by their initials are the definition its author wrote, so they come first.
    """
    letters = [ch.lower() for ch in short if ch.isalnum()]
    pieces = [(m.start(), m.group()) for m in _PIECE.finditer(candidate)]
    wanted = len(letters) - 1
    start = None
    for position, piece in reversed(pieces):
        if wanted < 0:
            break
        first = next((ch.lower() for ch in piece if ch.isalnum()), "")
        if first == letters[wanted]:
            start, wanted = position, wanted - 1
        elif start is None or piece.lower() not in _FUNCTION_WORDS:
            return None
    if wanted >= 0 or start is None:
        return None
    return _word_start(candidate, start)


def _find_in_sentences(text: str, sentences: Iterable[Span]) -> list[Abbreviation]:
    found: list[Abbreviation] = []
    for sentence in sentences:
        for open_at, close_at, enclosing_start in _parentheses(text, sentence):
            abbreviation = _definition_at(text, open_at, close_at, enclosing_start)
            if abbreviation is not None:
                found.append(abbreviation)
    found.sort(key=lambda a: (min(a.short_span.start, a.long_span.start), a.short_span.start))
    return found


def _parentheses(text: str, sentence: Span) -> list[tuple[int, int, int]]:
    """(open, close, where the enclosing group's content starts) for each matched ( ) in the sentence."""
    pairs: list[tuple[int, int, int]] = []
    stack: list[int] = []
    for position in range(sentence.start, sentence.end):
        char = text[position]
        if char == "(":
            stack.append(position)
        elif char == ")" and stack:
            open_at = stack.pop()
            enclosing = stack[-1] + 1 if stack else sentence.start
            pairs.append((open_at, position, enclosing))
    return pairs


def _definition_at(text: str, open_at: int, close_at: int, window_start: int) -> Abbreviation | None:
    inner_start, inner_end = _trim(text, open_at + 1, close_at)
    cut = _CUT_AT.search(text, inner_start, min(inner_end, inner_start + _MAX_INNER + 2))
    if cut is not None:
        inner_end = _trim(text, inner_start, cut.start())[1]
    if inner_start >= inner_end or inner_end - inner_start > _MAX_INNER:
        return None  # empty, or far longer than any long form of at most 15 words
    inner = text[inner_start:inner_end]
    if is_short_form(inner):
        before_end = _trim(text, window_start, open_at)[1]
        return _long_before(text, Span(inner_start, inner_end), window_start, before_end)
    if len(inner.split()) > _MAX_SHORT_WORDS:
        return _short_before(text, Span(inner_start, inner_end), window_start, open_at)
    return None


def _long_before(text: str, short_span: Span, window_start: int, window_end: int) -> Abbreviation | None:
    """`long form (SF)`: search the words before the parenthesis."""
    short = text[short_span.start : short_span.end]
    for candidate_short in _short_variants(short):
        limit = _max_long_words(candidate_short)
        # reading back at most 2 * _MAX_INNER characters keeps run-on "words" from going quadratic
        candidate_start = _start_of_last_words(
            text, max(window_start, window_end - 2 * _MAX_INNER), window_end, limit
        )
        if candidate_start >= window_end:
            return None
        candidate = text[candidate_start:window_end]
        start = long_form_start(candidate_short, candidate)
        if start is None:
            continue
        long_span = _strip_junk(text, candidate_start + start, window_end)
        if _valid_pair(short, text[long_span.start : long_span.end], limit):
            return Abbreviation(short, text[long_span.start : long_span.end], short_span, long_span)
    return None


def _short_before(text: str, long_region: Span, window_start: int, open_at: int) -> Abbreviation | None:
    """`SF (long form)`: the word right before the parenthesis is the short form."""
    short_end = _trim(text, window_start, open_at)[1]
    short_start = short_end
    lowest = max(window_start, short_end - _MAX_SHORT - 4)  # room for quotes around a 10-character form
    while short_start > lowest and not text[short_start - 1].isspace():
        short_start -= 1
    if short_start > window_start and not text[short_start - 1].isspace():
        return None  # the word before the parenthesis is longer than any short form
    short_span = _strip_junk(text, short_start, short_end)
    short = text[short_span.start : short_span.end]
    if not short or not is_short_form(short) or not any(ch.isupper() or ch.isdigit() for ch in short):
        return None
    for candidate_short in _short_variants(short):
        limit = _max_long_words(candidate_short)
        candidate = text[long_region.start : long_region.end]
        start = long_form_start(candidate_short, candidate)
        if start is None:
            continue
        long_span = _strip_junk(text, long_region.start + start, long_region.end)
        if _valid_pair(short, text[long_span.start : long_span.end], limit):
            return Abbreviation(short, text[long_span.start : long_span.end], short_span, long_span)
    return None


def _short_variants(short: str) -> list[str]:
    """The short form, then (for a plural like "APCs") the form without its "s" to retry with."""
    if is_plural_short_form(short):
        return [short, short[:-1]]
    return [short]


def is_plural_short_form(short: str) -> bool:
    """ "APCs", "RFLPs", "mAbs": a final "s" after a capital or digit, or after a camel-case stem.

    "Ras" and "his" are not plurals: their stem has no capital letter past its first character.
    """
    if len(short) < 3 or not short.endswith("s") or not short[-2].isalnum():
        return False
    stem = short[:-1]
    return stem[-1].isupper() or stem[-1].isdigit() or any(ch.isupper() for ch in stem[1:])


def _max_long_words(short: str) -> int:
    return min(len(short) + 5, 2 * len(short))


def _valid_pair(short: str, long: str, limit: int) -> bool:
    if not long or len(long) <= len(short) or len(long.split()) > limit:
        return False
    if long.lower() == short.lower():
        return False
    if short.isalpha() and short.islower() and len(long.split()) > len(short):
        return False  # a lower-case word in parentheses matched across a clause: "(alphabeta)"
    return re.search(rf"(?<!\w){re.escape(short)}(?!\w)", long) is None


def _start_of_last_words(text: str, start: int, end: int, count: int) -> int:
    """Where the last `count` white-space-separated words of text[start:end] begin (scanning back only)."""
    position = end
    for _ in range(count):
        while position > start and text[position - 1].isspace():
            position -= 1
        if position == start:
            break
        while position > start and not text[position - 1].isspace():
            position -= 1
    while position < end and text[position].isspace():
        position += 1
    return position


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _strip_junk(text: str, start: int, end: int) -> Span:
    while start < end and text[start] in _LEADING_JUNK:
        start += 1
    while end > start and text[end - 1] in _TRAILING_JUNK:
        end -= 1
    return Span(start, end)


def _singular_long_form(long: str) -> str:
    """ "tumor suppressor genes" -> "... gene", "antibodies" -> "antibody"; "coli", "fibrosis" stay."""
    last = long.split()[-1] if long.split() else ""
    if len(last) <= 3 or not last.endswith("s") or last.endswith(("ss", "is", "us")):
        return long
    if last.endswith("ies"):
        return long[:-3] + "y"
    return long[:-1]


class AbbreviationMap:
    """Short form -> long form for one document; expands mentions token by token.

    The first definition of a short form in the document wins (later redefinitions are logged and
    ignored). Short forms are case-sensitive: "CT" is not "ct".
    """

    def __init__(self, abbreviations: Iterable[Abbreviation] = ()):
        self.abbreviations: tuple[Abbreviation, ...] = tuple(abbreviations)
        self._long: dict[str, str] = {}
        for abbreviation in self.abbreviations:
            self._add(abbreviation.short, abbreviation.long)
            if is_plural_short_form(abbreviation.short):
                self._add(abbreviation.short[:-1], _singular_long_form(abbreviation.long))
        self._pattern = self._compile()

    @classmethod
    def from_document(cls, document: Document) -> AbbreviationMap:
        return cls(find_abbreviations_in_document(document))

    @classmethod
    def from_text(cls, text: str) -> AbbreviationMap:
        return cls(find_abbreviations(text))

    def _add(self, short: str, long: str) -> None:
        previous = self._long.setdefault(short, long)
        if previous != long:
            log.debug("%s defined again as %r; keeping %r", short, long, previous)

    def _compile(self) -> re.Pattern[str] | None:
        if not self._long:
            return None
        alternatives = "|".join(re.escape(short) for short in sorted(self._long, key=len, reverse=True))
        return re.compile(rf"(?<!\w)({alternatives})(s?)(?!\w)")

    def __len__(self) -> int:
        return len(self._long)

    def __contains__(self, short: object) -> bool:
        return short in self._long

    def long_form(self, short: str) -> str | None:
        """The long form of a short form (a plural of a defined one too), or None."""
        if short in self._long:
            return self._long[short]
        if short.endswith("s") and short[:-1] in self._long:
            return self._long[short[:-1]]
        return None

    def as_dict(self) -> dict[str, str]:
        return dict(self._long)

    def expand(self, mention_text: str) -> str:
        """The mention with every defined short form (as a whole token) replaced by its long form.

        "HD" -> "Huntington disease", "HD patients" -> "Huntington disease patients"; "HDAC" and
        "sHD" are left alone. A short form whose long form is already in the mention is kept, so
        "Huntington disease (HD)" does not become "Huntington disease (Huntington disease)".
        """
        if self._pattern is None:
            return mention_text
        folded = mention_text.casefold()

        def replace(match: re.Match[str]) -> str:
            # group 2 is a plural "s" after a singular short form ("APCs" when only "APC" is defined)
            long = self._long[match.group(1)]
            return match.group(0) if long.casefold() in folded else long

        return self._pattern.sub(replace, mention_text)
