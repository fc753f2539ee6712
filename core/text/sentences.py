"""Sentence splitting for biomedical abstracts, keeping character offsets.

Hand-written rules rather than spaCy/scispaCy or NLTK punkt: none of them is a dependency, a
statistical splitter would add a model download to the desktop install, and a few dozen rules
tuned on PubMed conventions ("e.g.", "et al.", "E. coli", "2.5 mg", the "4. 5 Mb" decimals of the
PubTator dumps) are fast, deterministic and keep exact offsets, which the packed reranker needs.

Rules, in the order they are applied to a `.`, `?` or `!`:
- a blank line always ends a sentence; nothing inside a matched ( ), [ ] or { } pair ends one,
  except a terminator that the closing brackets right after it lead out ("(in 5 families.) The");
- closing quotes and brackets right after the terminator stay with the sentence;
- the terminator must be followed by white space (so "2.5", "e.g." and "U.S.A" never split);
- the next word must not start with a plain lower-case word ("E. coli", "et al. reported");
  gene-like words ("p53", "mRNA", "alpha-Thalassemia") may start a sentence;
- a period after a known abbreviation ("vs.", "Fig.", "approx.", "al."), a dotted abbreviation
  ("U.S."), a spaced one ("i. e."), or between two numbers ("4. 5 Mb") does not end a sentence;
- a single capital letter is a person's initial ("J. Smith") unless it follows a lower-case word,
  a number or a designator ("hepatitis B.", "type I.", "Eco0109 I.").
"""

from __future__ import annotations

import bisect
import re

from core.documents import Document, Span
from core.errors import InputError

_TERMINATORS = ".?!"
_CLOSERS = "\"')]}\u00bb\u201d\u2019"
_OPENERS_TO_STRIP = "\"'([{\u00ab\u201c\u2018"
_BRACKETS = {")": "(", "]": "[", "}": "{"}
_PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n\s*")

# Periods after these (lower-cased, without the final period) never end a sentence.
_ABBREVIATIONS = frozenset(
    """
    al approx appr ca cf cfr e.g i.e viz vs resp fig figs eq eqs ref refs
    dr mr mrs ms prof jr sr st inc ltd corp co dept univ ed eds
    sp spp subsp ssp var cv sect suppl
    jan feb mar apr jun jul aug sep sept oct nov dec
    """.split()
)
# Function words never end a sentence: "frequency of. 0327", "polyps and. or cancer".
_NEVER_LAST = frozenset(
    "a an the of and or nor but to than at by from with in on for into onto per via between as".split()
)
# These abbreviate only before a number ("p. 5", "vol. 3", "ch. 2").
_NUMBER_ABBREVIATIONS = frozenset("no nos p pp vol vols tab ch chap n".split())
# A single capital letter after one of these words names a type or a form, not a person.
_DESIGNATORS = frozenset(
    """
    type types group groups class factor vitamin hepatitis protein complex chain domain subunit
    region site form strain phase grade stage chromosome locus allele isoform subtype serotype
    haplotype haplogroup variant antigen band hex lipoprotein apolipoprotein immunoglobulin
    complementation panel part gene series peak cluster model category arm component family
    kindred pedigree patient case subject table figure appendix cell line and or
    """.split()
)
# Words that introduce a person's name: the initial after them is a name ("by J. Smith").
_NAME_INTRODUCERS = frozenset("by dr prof mr mrs ms see from".split())
_DOTTED = re.compile(r"(?:[A-Za-z]\.)+[A-Za-z]")
_INITIAL = re.compile(r"[A-Z]\.")
_SPACED_WHOLE_PART = re.compile(r"\d+\.")
_GENE_LIKE = re.compile(r"[a-z]+-?[A-Z0-9]")


def split_sentences(text: str) -> list[Span]:
    """Sentence spans of `text`, trimmed of white space; together they cover every non-space character."""
    if not isinstance(text, str):
        raise InputError(None, f"split_sentences needs a str, got {type(text).__name__}")
    spans: list[Span] = []
    start = 0
    for match in _PARAGRAPH_BREAK.finditer(text):
        spans.extend(_split_paragraph(text, start, match.start()))
        start = match.end()
    spans.extend(_split_paragraph(text, start, len(text)))
    return spans


def sentences_of(document: Document) -> list[Span]:
    """Sentence spans (document offsets) of each passage split on its own, so a title never runs on."""
    text = document.text
    spans: list[Span] = []
    cursor = 0
    for passage in sorted(document.passages, key=lambda p: p.offset):
        start = max(passage.offset, cursor)
        end = max(passage.end, start)
        spans.extend(_split_paragraphs_in(text, start, end))
        cursor = max(cursor, end)
    return spans


def sentence_spans_for_mentions(document: Document) -> list[Span]:
    """Sentences of the document, merged where a mention crosses a boundary (as the packed cross-encoder does).

    A mention that overlaps several sentences makes them one span, so every mention lies inside
    exactly one returned span. Mentions outside the text raise InputError.
    """
    sentences = sentences_of(document)
    if not sentences:
        return []
    text_length = len(document.text)
    # merge_to[i] = the last sentence index that sentence i must be merged with
    merge_to = list(range(len(sentences)))
    starts = [s.start for s in sentences]
    for mention in document.mentions:
        if mention.start < 0 or mention.end > text_length or mention.end < mention.start:
            raise InputError(
                document.doc_id,
                f"mention [{mention.start}, {mention.end}) lies outside the text (length {text_length})",
                item=f"mention {mention.text!r}",
            )
        first = _sentence_index_at(starts, sentences, mention.start)
        last = _sentence_index_at(starts, sentences, max(mention.start, mention.end - 1))
        if last > merge_to[first]:
            merge_to[first] = last
    merged: list[Span] = []
    i = 0
    while i < len(sentences):
        reach = merge_to[i]
        j = i
        while j < reach:
            j += 1
            reach = max(reach, merge_to[j])
        merged.append(Span(sentences[i].start, sentences[j].end))
        i = j + 1
    return merged


def _sentence_index_at(starts: list[int], sentences: list[Span], position: int) -> int:
    """Index of the sentence holding `position`, or the next one when it falls in a gap."""
    index = bisect.bisect_right(starts, position) - 1
    if index < 0:
        return 0
    if position >= sentences[index].end and index + 1 < len(sentences):
        return index + 1
    return index


def _split_paragraphs_in(text: str, start: int, end: int) -> list[Span]:
    spans: list[Span] = []
    segment = text[start:end]
    cursor = 0
    for match in _PARAGRAPH_BREAK.finditer(segment):
        spans.extend(_split_paragraph(text, start + cursor, start + match.start()))
        cursor = match.end()
    spans.extend(_split_paragraph(text, start + cursor, end))
    return spans


def _split_paragraph(text: str, start: int, end: int) -> list[Span]:
    """Sentences of text[start:end], which holds no blank line."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start >= end:
        return []
    protected = _protected_positions(text, start, end)
    spans: list[Span] = []
    sentence_start = start
    i = start
    while i < end:
        if text[i] not in _TERMINATORS:
            i += 1
            continue
        j = i + 1
        while j < end and text[j] in _TERMINATORS:
            j += 1
        while j < end and text[j] in _CLOSERS:
            j += 1
        if j >= end:
            break
        if protected[i - start] and protected[j - start]:
            i = j  # inside brackets; "(in 5 families.) Controls" ends once the closers leave them
            continue
        if not text[j].isspace():
            i = j
            continue
        k = j
        while k < end and text[k].isspace():
            k += 1
        if _ends_sentence(text, start, i, k, end):
            spans.append(Span(sentence_start, j))
            sentence_start = k
        i = k
    spans.append(Span(sentence_start, end))
    return spans


def _protected_positions(text: str, start: int, end: int) -> list[bool]:
    """True for positions strictly inside a matched bracket pair; unmatched brackets protect nothing."""
    delta = [0] * (end - start + 1)
    stack: list[tuple[str, int]] = []
    open_counts = {"(": 0, "[": 0, "{": 0}
    for position in range(start, end):
        char = text[position]
        if char in open_counts:
            stack.append((char, position))
            open_counts[char] += 1
        elif char in _BRACKETS and open_counts[_BRACKETS[char]]:
            # pop back to the matching opener; openers left unclosed inside are dropped (amortised O(n))
            opener = _BRACKETS[char]
            for depth in range(len(stack) - 1, -1, -1):
                if stack[depth][0] == opener:
                    open_at = stack[depth][1]
                    for dropped, _ in stack[depth:]:
                        open_counts[dropped] -= 1
                    del stack[depth:]
                    delta[open_at + 1 - start] += 1
                    delta[position - start] -= 1
                    break
    protected: list[bool] = []
    running = 0
    for value in delta[:-1]:
        running += value
        protected.append(running > 0)
    return protected


def _word_before(text: str, lower_bound: int, position: int) -> tuple[str, int]:
    """The white-space-delimited word ending at `position` and where it starts."""
    begin = position
    while begin > lower_bound and not text[begin - 1].isspace():
        begin -= 1
    return text[begin:position], begin


def _word_after(text: str, position: int, upper_bound: int) -> str:
    finish = position
    while finish < upper_bound and not text[finish].isspace():
        finish += 1
    return text[position:finish]


def _ends_sentence(text: str, lower_bound: int, terminator: int, next_start: int, upper_bound: int) -> bool:
    """Whether the terminator at `terminator` ends a sentence, the next word starting at `next_start`."""
    following = _word_after(text, next_start, upper_bound).lstrip(_OPENERS_TO_STRIP) or text[next_start]
    if following[0].islower() and not _GENE_LIKE.match(following):
        return False
    if text[terminator] != ".":
        return True
    raw_word, word_start = _word_before(text, lower_bound, terminator)
    word = raw_word.lstrip(_OPENERS_TO_STRIP)
    if not word:
        return True
    lowered = word.lower()
    if lowered in _ABBREVIATIONS or word in _NEVER_LAST or _DOTTED.fullmatch(word):
        return False
    if word[-1] in "=<>\u2264\u2265\u00b1~":
        return False  # "P =. 0025", "K <. 01": the period starts a spaced-out decimal
    if lowered in _NUMBER_ABBREVIATIONS and following[0].isdigit():
        return False
    if word[-1].isdigit() and following[0].isdigit():
        # "4. 5 Mb", "HLA-A2. 1": a decimal point the tokenizer spaced out, unless this word is
        # itself the fraction of one ("of 0. 04. 18 families")
        before, before_start = _word_before(
            text, lower_bound, _skip_space_back(text, lower_bound, word_start)
        )
        if not (word.isdigit() and _SPACED_WHOLE_PART.fullmatch(before)):
            return False
        # ... but a chain of them is a spaced-out EC number or version ("EC 1. 1. 1. 49")
        earlier, _ = _word_before(text, lower_bound, _skip_space_back(text, lower_bound, before_start))
        return not _SPACED_WHOLE_PART.fullmatch(earlier)
    if len(word) == 1 and word.isalpha():
        return _single_letter_ends_sentence(text, lower_bound, word, word_start, following)
    return True


def _single_letter_ends_sentence(
    text: str, lower_bound: int, letter: str, letter_start: int, following: str
) -> bool:
    previous, _ = _word_before(text, lower_bound, _skip_space_back(text, lower_bound, letter_start))
    previous = previous.lstrip(_OPENERS_TO_STRIP)
    if len(previous) == 2 and previous[1] == "." and previous[0].isalpha():
        return False  # "e. g.", "i. e.", or the second of two initials, "J. B."
    if letter.islower():
        return not following[0].isdigit()  # "c. 38T>C", "p. 5" go on; "distal 3 p. Uniparental" ends
    if _INITIAL.match(following) and len(following) <= 3:
        return False  # first of several initials, "J. R. Smith"
    if not previous:
        return False
    lowered = previous.lower().rstrip(",;:")
    if lowered in _NAME_INTRODUCERS:
        return False
    if lowered in _DESIGNATORS or previous[-1].isdigit() or previous.islower():
        return True
    return False


def _skip_space_back(text: str, lower_bound: int, position: int) -> int:
    while position > lower_bound and text[position - 1].isspace():
        position -= 1
    return position
