"""A document's word pieces with exact character offsets, and the windows the span model reads.

The fast (Rust) tokenizer reports, for every word piece, the characters of the original string it came
from, after lower-casing and accent stripping: "naïve" and "e" + U+0301 keep offsets on the characters
of the text as stored (Python str indices), not on bytes or on the normalised form. A span of pieces
i..j is therefore the characters starts[i]..ends[j] of the document, exactly.

Windows: a document longer than one window is read in overlapping windows, each cut on word starts
(a window never ends inside a word) and overlapping by at least L pieces, so a mention of up to L
pieces that crosses one window's border lies whole inside the next one.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from core.detect.span_scores import MAX_SPAN_PIECES
from core.errors import ModelError


@dataclass(frozen=True)
class Pieces:
    """Word pieces of one text (no [CLS]/[SEP]): ids, character offsets, first-piece-of-a-word flags."""

    ids: tuple[int, ...]
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    word_starts: tuple[bool, ...]

    def __len__(self) -> int:
        return len(self.ids)

    def piece_span(self, start: int, end: int) -> tuple[int, int] | None:
        """First and last piece (inclusive) of characters start..end; None when no piece lies inside."""
        first = bisect_right(self.ends, start)  # first piece ending after `start`
        last = bisect_left(self.starts, end) - 1  # last piece starting before `end`
        return (first, last) if first <= last else None

    def aligned(self, start: int, end: int) -> bool:
        """Whether start..end begins on a piece start and ends on a piece end (a span the model can emit)."""
        span = self.piece_span(start, end)
        return span is not None and self.starts[span[0]] == start and self.ends[span[1]] == end


def backend(tokenizer):
    """The tokenizer's Rust tokenizer with truncation and padding off (a copy: the original is shared)."""
    rust = getattr(tokenizer, "backend_tokenizer", None)
    if rust is None:
        raise ModelError("the span model needs a fast (Rust) BERT tokenizer for character offsets")
    from tokenizers import Tokenizer

    copy = Tokenizer.from_str(rust.to_str())
    copy.no_truncation()
    copy.no_padding()
    return copy


def word_pieces(rust_tokenizer, text: str) -> Pieces:
    """The pieces of `text`; pieces that cover no character (none in BERT's WordPiece) are dropped."""
    if not text:
        return Pieces((), (), (), ())
    encoding = rust_tokenizer.encode(text, add_special_tokens=False)
    ids, starts, ends, firsts = [], [], [], []
    previous_word = None
    for piece_id, (start, end), word in zip(encoding.ids, encoding.offsets, encoding.word_ids, strict=True):
        if end <= start:
            continue
        ids.append(piece_id)
        starts.append(start)
        ends.append(end)
        firsts.append(word is None or word != previous_word)
        previous_word = word
    return Pieces(tuple(ids), tuple(starts), tuple(ends), tuple(firsts))


def windows(pieces: Pieces, size: int, overlap: int = 2 * MAX_SPAN_PIECES) -> list[tuple[int, int]]:
    """[start, end) piece ranges of at most `size` pieces covering the text, each cut on a word start
    where one lies within reach, consecutive ones sharing at least `overlap` pieces (>= L)."""
    count = len(pieces)
    if count == 0:
        return []
    if size <= overlap:
        raise ValueError(f"window of {size} pieces cannot overlap by {overlap}")
    found: list[tuple[int, int]] = []
    start = 0
    while True:
        end = min(count, start + size)
        if end < count:
            end = _word_start_at_or_before(pieces, end, floor=start + overlap + 1)
        found.append((start, end))
        if end >= count:
            return found
        following = _word_start_at_or_before(pieces, end - overlap, floor=start + 1)
        start = max(start + 1, following)


def _word_start_at_or_before(pieces: Pieces, position: int, *, floor: int) -> int:
    """The last word start at or before `position` and not before `floor`; `position` if there is none."""
    for candidate in range(position, floor - 1, -1):
        if pieces.word_starts[candidate]:
            return candidate
    return position


def window_spans_to_characters(
    pieces: Pieces, window: tuple[int, int], local: Sequence[tuple[int, int]]
) -> list[tuple[int, int]]:
    """Character spans of spans given as (first, last) piece positions inside the window's input
    ([CLS] at position 0, so window piece k is input position k + 1)."""
    offset = window[0] - 1
    return [(pieces.starts[first + offset], pieces.ends[last + offset]) for first, last in local]


def resolve_overlaps(spans: Sequence[tuple[int, int, float]]) -> list[int]:
    """Indices of a non-overlapping subset chosen by probability (highest first; ties: longer, then
    leftmost), returned in text order: what the `Detector` protocol promises."""
    order = sorted(range(len(spans)), key=lambda i: (-spans[i][2], -(spans[i][1] - spans[i][0]), spans[i][0]))
    taken = bytearray(max((end for _, end, _ in spans), default=0))  # 1 on characters already covered
    chosen: list[int] = []
    for index in order:
        start, end, _ = spans[index]
        if taken.find(1, start, end) >= 0:
            continue
        taken[start:end] = b"\x01" * (end - start)
        chosen.append(index)
    return sorted(chosen, key=lambda i: spans[i][0])
