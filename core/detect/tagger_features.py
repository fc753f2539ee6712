"""What the sequence tagger sees of each token: the word itself and the project's lexicon around it.

Tokens are runs of letters and digits and single other characters ("5-HT(2B)" is 5 - HT ( 2B )), so
a chemical's locants, charges and brackets are tokens a label can start or end on. Each token's
features (strings, as crfsuite takes them):

- the word: lower case, shape ("Xx", "X", "d", brief), prefixes and suffixes of 2-4 letters, character
  trigrams of longer words, capitals, digits, Greek letters;
- the lexicon: the project's dictionary (core.detect.dictionary) read two ways: the match `link
  --detect` would keep over the token (its type and the token's place in it: B, I, E or U for a one-token
  match) and every raw match covering it, longest first (what a curator's longer boundary may follow);
- the abbreviation definitions in the text (core.text.abbreviations): a token of a short form, of its
  long form, and of a later use of a defined short form, with the type the dictionary gave the long form;
- the same word, shape and dictionary features of the neighbours (two either side).

The adjective forms ("diabetic", "schizophrenic") reach the tagger through the dictionary, which holds
them (core.detect.adjectives). Kept apart from the tagger so training (core.detect.tagger) and detection
read the same features.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from core.text.abbreviations import find_abbreviations

TOKEN = re.compile(r"[^\W_]+|[^\w\s]|_", re.UNICODE)
_GREEK = set("αβγδεζηθικλμνξοπρσςτυφχψωΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩ")
_GREEK_WORDS = frozenset(
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau "
    "upsilon phi chi psi omega".split()
)


@dataclass(frozen=True, slots=True)
class Token:
    start: int
    end: int
    text: str


def tokens_of(text: str) -> list[Token]:
    return [Token(m.start(), m.end(), m.group()) for m in TOKEN.finditer(text)]


def _shape(word: str) -> str:
    out = []
    for ch in word:
        kind = "X" if ch.isupper() else "x" if ch.isalpha() else "d" if ch.isdigit() else ch
        if not out or out[-1] != kind:
            out.append(kind)
    return "".join(out)


@lru_cache(maxsize=200_000)
def _word_features(word: str) -> tuple[str, ...]:
    lower = word.lower()
    features = [f"w={lower}", f"s={_shape(word)}"]
    if word[0].isalnum():
        length = len(word)
        features.append(f"n={min(length, 8)}")
        for k in (2, 3, 4):
            if length > k:
                features.append(f"p{k}={lower[:k]}")
                features.append(f"x{k}={lower[-k:]}")
        if length > 4:
            features.extend(f"g={lower[i : i + 3]}" for i in range(length - 2))
        if word.isupper() and length > 1:
            features.append("U")
        elif word[0].isupper():
            features.append("T")
        if any(ch.isdigit() for ch in word):
            features.append("D")
        if lower in _GREEK_WORDS or any(ch in _GREEK for ch in word):
            features.append("G")
    return tuple(features)


@dataclass
class Reading:
    """What the lexicon says of one text, read once: the dictionary's raw matches and kept mentions, and
    the abbreviations the text defines (the tagger reuses them after decoding)."""

    raw: list = field(default_factory=list)
    mentions: list = field(default_factory=list)
    definitions: list = field(default_factory=list)


def read_text(text: str, dictionary) -> Reading:
    definitions = find_abbreviations(text)
    if dictionary is None:
        return Reading(definitions=definitions)
    raw, mentions = dictionary.reading(text, definitions=definitions)
    return Reading(raw, mentions, definitions)


def _lexicon_features(tokens: list[Token], reading: Reading) -> list[list[str]]:
    """Per token: the dictionary's kept match (type and position) and raw matches covering it."""
    out: list[list[str]] = [[] for _ in tokens]
    starts = {t.start: i for i, t in enumerate(tokens)}
    ends = {t.end: i for i, t in enumerate(tokens)}

    def token_range(start: int, end: int) -> tuple[int, int] | None:
        first, last = starts.get(start), ends.get(end)
        if first is None or last is None:
            # a match ending inside a token (closed brackets, "'s"): the tokens it touches
            covered = [i for i, t in enumerate(tokens) if t.start < end and start < t.end]
            return (covered[0], covered[-1]) if covered else None
        return first, last

    for mention in reading.mentions:
        found = token_range(mention.start, mention.end)
        if found is None:
            continue
        first, last = found
        kind = mention.type
        defined = "" if mention.infons.get("dictionary_ids") else "n"  # a long form the KB does not name
        for i in range(first, last + 1):
            where = "U" if first == last else "B" if i == first else "E" if i == last else "I"
            out[i].append(f"d={where}-{kind}")
            out[i].append(f"d={kind}{defined}")
    for start, end, _ids, kind in reading.raw:
        found = token_range(start, end)
        if found is None:
            continue
        first, last = found
        size = min(last - first + 1, 4)
        for i in range(first, last + 1):
            where = "B" if i == first else "E" if i == last else "I"
            out[i].append(f"a={where}-{kind}")
            out[i].append(f"a{size}={kind}")
    return out


def _abbreviation_features(
    text: str, tokens: list[Token], lexicon: list[list[str]], definitions: list
) -> list[list[str]]:
    """Per token: short form, long form, and later uses of a defined short form (with the long form's
    dictionary type, when it has one)."""
    out: list[list[str]] = [[] for _ in tokens]
    if not definitions:
        return out
    for definition in definitions:
        long_types = {
            feature[2:]
            for i, t in enumerate(tokens)
            if definition.long_span.start <= t.start and t.end <= definition.long_span.end
            for feature in lexicon[i]
            if feature.startswith("d=") and "-" not in feature
        }
        label = "|".join(sorted(long_types)) or "none"
        for i, t in enumerate(tokens):
            if definition.long_span.start <= t.start and t.end <= definition.long_span.end:
                out[i].append("ab=L")
                if t.start == definition.long_span.start:
                    out[i].append("ab=LB")
            elif definition.short_span.start <= t.start and t.end <= definition.short_span.end:
                out[i].append("ab=S")
                out[i].append(f"abT={label}")
        pattern = re.compile(rf"(?<!\w){re.escape(definition.short)}(?!\w)")
        for found in pattern.finditer(text):
            if found.start() == definition.short_span.start:
                continue
            for i, t in enumerate(tokens):
                if found.start() <= t.start and t.end <= found.end():
                    out[i].append("ab=use")
                    out[i].append(f"abT={label}")
    return out


NEIGHBOUR_PREFIXES = ("w=", "s=", "d=", "x3=", "ab=")
_OFFSETS = (-2, -1, 1, 2)


@lru_cache(maxsize=200_000)
def _neighbour_word_features(word: str) -> tuple[tuple[str, ...], ...]:
    """A word's features as each neighbour (offset -2, -1, 1, 2) sees them, formatted once per word."""
    shared = [f for f in _word_features(word) if f.startswith(NEIGHBOUR_PREFIXES)]
    return tuple(tuple(f"{offset}:{f}" for f in shared) for offset in _OFFSETS)


def sequence_features(text: str, dictionary) -> tuple[list[Token], list[list[str]], Reading]:
    """The tokens of `text`, each one's features (see the module docstring), and the lexicon's reading."""
    tokens = tokens_of(text)
    reading = read_text(text, dictionary)
    lexicon = _lexicon_features(tokens, reading)
    abbreviations = _abbreviation_features(text, tokens, lexicon, reading.definitions)
    words = [_neighbour_word_features(t.text) for t in tokens]
    extra = [
        [f for f in (*lex, *ab) if f.startswith(NEIGHBOUR_PREFIXES)]
        for lex, ab in zip(lexicon, abbreviations, strict=True)
    ]
    count = len(tokens)
    rows: list[list[str]] = []
    for i, token in enumerate(tokens):
        row = ["bias", *_word_features(token.text), *lexicon[i], *abbreviations[i]]
        for k, offset in enumerate(_OFFSETS):
            j = i + offset
            if 0 <= j < count:
                row.extend(words[j][k])
                if extra[j]:
                    row.extend([f"{offset}:{f}" for f in extra[j]])
                # spacing: "breast and ovarian cancer" vs "5-HT", where a hyphen or bracket joins words
                if offset == -1:
                    row.append(f"-1:gap={'0' if tokens[j].end == token.start else '1'}")
                elif offset == 1:
                    row.append(f"1:gap={'0' if token.end == tokens[j].start else '1'}")
            elif offset in (-1, 1):
                row.append("BOS" if offset == -1 else "EOS")
        rows.append(row)
    return tokens, rows, reading
