"""Training material for the span model: documents cut into segments as the reference code does (§C.3).

Mentions are walked in text order and a segment is closed just after a mention's last word piece when
the next mention would make it hold more than 8 mentions or more than 256 word pieces with [CLS] and
[SEP]. The text after the last mention, and any stretch too long to share a segment with the mention
after it, become mention-free segments (the reference code drops chunks over its limit; here they teach
what is not a mention). Composite ids keep their first id (§C.3).

Which documents and spans a project trains on is read from its store by core.jobs.models.detector
(`project_training_documents`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from core.detect.span_detector import Chunk, make_chunk
from core.detect.wordpieces import Pieces, word_pieces
from core.documents import Document, Mention

log = logging.getLogger(__name__)

MAX_SEGMENT_MENTIONS = 8
SEGMENT_PIECES = 256


@dataclass(frozen=True)
class GoldSpan:
    first: int  # input positions ([CLS] = 0)
    last: int
    type_index: int
    concept_index: int  # -1: no concept of the KB (span and type still taught)


@dataclass(frozen=True)
class Segment:
    chunk: Chunk
    gold: tuple[GoldSpan, ...]


@dataclass
class SegmentStats:
    documents: int = 0
    segments: int = 0
    mentions: int = 0
    linked: int = 0
    unaligned: int = 0  # gold spans that do not begin and end on word pieces
    too_long: int = 0  # gold spans over L pieces (linked and typed, never emitted by the span head)
    types: dict[str, int] = field(default_factory=dict)


def segment_documents(
    documents: Sequence[Document],
    rust_tokenizer,
    types: Sequence[str],
    concept_index,
    *,
    cls_id: int,
    sep_id: int,
    max_mentions: int = MAX_SEGMENT_MENTIONS,
    size: int = SEGMENT_PIECES,
    max_span: int = 10,
) -> tuple[list[Segment], SegmentStats]:
    """Segments of every document; `concept_index(mention)` gives a concept's row or -1."""
    type_of = {name: i for i, name in enumerate(types)}
    stats = SegmentStats()
    out: list[Segment] = []
    inner = size - 2
    for d, document in enumerate(documents):
        pieces = word_pieces(rust_tokenizer, document.text)
        stats.documents += 1
        placed: list[tuple[int, int, Mention]] = []
        for mention in sorted(document.mentions, key=lambda m: (m.start, m.end)):
            span = pieces.piece_span(mention.start, mention.end)
            if span is None or span[1] - span[0] + 1 > inner:
                continue
            stats.unaligned += not pieces.aligned(mention.start, mention.end)
            stats.too_long += span[1] - span[0] + 1 > max_span
            placed.append((span[0], span[1], mention))
        start = 0
        current: list[tuple[int, int, Mention]] = []
        for first, last, mention in placed:
            if current and (len(current) >= max_mentions or last + 1 - start > inner):
                cut = current[-1][1] + 1
                out.append(_segment(d, pieces, start, cut, current, type_of, concept_index, cls_id, sep_id))
                start, current = cut, []
            if last + 1 - start > inner:  # a long stretch without mentions before this one
                new_start = max(start, last + 1 - inner // 2)
                new_start = min(new_start, first)
                out += _free(d, pieces, start, new_start, inner, cls_id, sep_id)
                start = new_start
            current.append((first, last, mention))
        end = len(pieces)
        if current:
            cut = max(current[-1][1] + 1, min(end, start + inner))
            out.append(_segment(d, pieces, start, cut, current, type_of, concept_index, cls_id, sep_id))
            start = cut
        out += _free(d, pieces, start, end, inner, cls_id, sep_id)
    for segment in out:
        stats.mentions += len(segment.gold)
        stats.linked += sum(g.concept_index >= 0 for g in segment.gold)
        for gold in segment.gold:
            stats.types[types[gold.type_index]] = stats.types.get(types[gold.type_index], 0) + 1
    stats.segments = len(out)
    return out, stats


def _segment(d, pieces: Pieces, start, end, mentions, type_of, concept_index, cls_id, sep_id) -> Segment:
    chunk = make_chunk(d, pieces, (start, end), cls_id, sep_id)
    gold = tuple(
        GoldSpan(first - start + 1, last - start + 1, type_of.get(m.type, 0), concept_index(m))
        for first, last, m in mentions
        if first >= start and last < end
    )
    return Segment(chunk, gold)


def _free(d, pieces: Pieces, start: int, end: int, inner: int, cls_id: int, sep_id: int) -> list[Segment]:
    return [
        Segment(make_chunk(d, pieces, (a, min(end, a + inner)), cls_id, sep_id), ())
        for a in range(start, end, inner)
    ]


def mention_types(documents: Iterable[Document]) -> list[str]:
    """The corpus's mention types, most frequent first (the type head's labels)."""
    counts: dict[str, int] = {}
    for document in documents:
        for mention in document.mentions:
            counts[mention.type or "Mention"] = counts.get(mention.type or "Mention", 0) + 1
    return sorted(counts, key=lambda t: (-counts[t], t))
