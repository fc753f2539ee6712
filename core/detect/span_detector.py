"""Reading raw text with the span model: windows in, non-overlapping typed and linked mentions out.

A document is cut into overlapping windows of word pieces (core.detect.wordpieces); each window is
encoded once, every span of up to L pieces gets a probability, and the spans at or above the threshold
are linked together against the whole KB (one matrix product per batch of windows: collective
linking). Spans map back to exact character offsets; a span seen in two windows (the overlap) is kept
once, with its best probability; overlapping spans are then resolved by probability, so the output is
sorted and non-overlapping as the `Detector` protocol says.

`link_mentions` is the collective linker for given spans (gold mentions in evaluation): the same pass,
with the spans given instead of detected.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from core.detect.candidates import ConceptVectors
from core.detect.span_model import DetectorConfig, SpanLinker
from core.detect.wordpieces import Pieces, backend, resolve_overlaps, windows, word_pieces
from core.documents import Candidate, Document, Mention
from core.progress import NEVER_CANCELLED, CancelToken

log = logging.getLogger(__name__)

BATCH_CHUNKS = 8
MAX_SPANS_PER_CHUNK = 128  # a 256-piece window of an abstract holds a few dozen mentions at most
LINK_SLICE = 256  # spans scored against every KB name at once (memory: slice x names floats)


@dataclass(frozen=True)
class Chunk:
    """One model input: a window of one document's pieces between [CLS] and [SEP]."""

    document: int
    first: int  # the window's first piece in the document
    ids: tuple[int, ...]
    word_starts: tuple[bool, ...]

    def __len__(self) -> int:
        return len(self.ids)


def make_chunk(document: int, pieces: Pieces, window: tuple[int, int], cls_id: int, sep_id: int) -> Chunk:
    start, end = window
    return Chunk(
        document,
        start,
        (cls_id, *pieces.ids[start:end], sep_id),
        (False, *pieces.word_starts[start:end], False),
    )


def collate(chunks: Sequence[Chunk], pad_id: int, device: str = "cpu") -> dict[str, torch.Tensor]:
    """Right-padded ids, attention mask, text-piece and word-start flags of a batch of chunks."""
    width = max(len(c) for c in chunks)
    ids = torch.full((len(chunks), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(chunks), width), dtype=torch.long)
    starts = torch.zeros((len(chunks), width), dtype=torch.bool)
    for row, chunk in enumerate(chunks):
        ids[row, : len(chunk)] = torch.tensor(chunk.ids)
        attention[row, : len(chunk)] = 1
        starts[row, : len(chunk)] = torch.tensor(chunk.word_starts)
    text = attention.bool().clone()
    text[:, 0] = False  # [CLS]
    lengths = attention.sum(1)
    text[torch.arange(len(chunks)), lengths - 1] = False  # [SEP]
    return {
        "input_ids": ids.to(device),
        "attention_mask": attention.to(device),
        "text": text.to(device),
        "word_starts": starts.to(device),
    }


class SpanDetector:
    """The `Detector` of a trained span model, and the collective linker of given mentions."""

    name = "span model"

    def __init__(
        self,
        model: SpanLinker,
        tokenizer,
        config: DetectorConfig,
        vectors: ConceptVectors,
        *,
        threshold: float | None = None,
        device: str = "cpu",
        version: str = "",
    ):
        self.model = model.eval().to(device)
        self.tokenizer = tokenizer
        self.rust = backend(tokenizer)
        self.config = config
        self.vectors = vectors
        self.threshold = config.threshold if threshold is None else threshold
        self.device = device
        self.version = version
        self.cls_id = tokenizer.cls_token_id
        self.sep_id = tokenizer.sep_token_id
        self.pad_id = tokenizer.pad_token_id or 0
        self.mention_type: str | None = None  # set: every detected mention gets this type
        # a second detector (the project's dictionary) whose mentions fill the span model's gaps
        self.gap_filler = None

    # --- reading text -------------------------------------------------------------------------------

    def chunks(self, texts: Sequence[str]) -> tuple[list[Pieces], list[Chunk]]:
        pieces = [word_pieces(self.rust, text) for text in texts]
        chunks = [
            make_chunk(d, p, window, self.cls_id, self.sep_id)
            for d, p in enumerate(pieces)
            for window in windows(p, self.config.window - 2)
        ]
        return pieces, chunks

    def detect(
        self, documents: Sequence[Document], *, cancel: CancelToken = NEVER_CANCELLED
    ) -> list[list[Mention]]:
        """Per document, detected mentions (origin "detected"), sorted, non-overlapping; each carries its
        probability, predicted type and linked concept (infons "probability", "link_score")."""
        texts = [document.text for document in documents]
        pieces, chunks = self.chunks(texts)
        reads: list[list[tuple]] = [[] for _ in documents]
        for batch in _batches(chunks):
            cancel.raise_if_cancelled()
            for chunk, first, last, probability, type_index, concept, score in self._read(batch):
                reads[chunk.document].append(
                    (chunk.first, first, last, probability, (type_index, concept, score))
                )
        found = [
            self._mentions(text, merge_window_spans(p, read))
            for text, p, read in zip(texts, pieces, reads, strict=True)
        ]
        if self.gap_filler is None:
            return found
        filling = self.gap_filler.detect(documents)
        return [fill_gaps(mine, theirs) for mine, theirs in zip(found, filling, strict=True)]

    def _mentions(self, text: str, spans: dict[tuple[int, int], tuple[float, tuple]]) -> list[Mention]:
        rows = [(start, end, values[0]) for (start, end), values in spans.items()]
        keys = list(spans)
        out = []
        for index in resolve_overlaps(rows):
            start, end = keys[index]
            probability, (type_index, concept, score) = spans[keys[index]]
            out.append(
                Mention(
                    start,
                    end,
                    text[start:end],
                    self.mention_type or self.config.types[type_index],
                    concept_id=self.vectors.concept_ids[concept],
                    origin="detected",
                    infons={
                        "probability": round(probability, 4),
                        "span_model_id": self.vectors.concept_ids[concept],
                        "link_score": round(score, 4),
                    },
                )
            )
        return out

    def _read(self, batch: list[Chunk]):
        """(chunk, first, last, probability, type, concept, link score) of every span at or above the
        threshold in one forward pass over the batch; spans of a chunk are linked together."""
        inputs = collate(batch, self.pad_id, self.device)
        with torch.inference_mode():
            hidden, logits = self.model(inputs["input_ids"], inputs["attention_mask"])
            mask = self.model.mask(inputs["text"], inputs["word_starts"])
            probabilities = torch.sigmoid(logits).masked_fill(~mask, 0.0)
            # at most MAX_SPANS_PER_CHUNK spans per chunk, the most probable: an untrained or low
            # threshold would otherwise link every span of the grid (thousands per window)
            flat = probabilities.flatten(1)
            keep = min(MAX_SPANS_PER_CHUNK, flat.shape[1])
            top = flat.topk(keep, dim=1)
            chosen = torch.zeros_like(flat, dtype=torch.bool).scatter_(1, top.indices, True)
            chosen &= flat >= self.threshold
            rows, starts, lengths = torch.nonzero(chosen.view_as(probabilities), as_tuple=True)
            if rows.numel() == 0:
                return []
            ends = starts + lengths
            vectors, type_logits = self.model.span_vectors(hidden, rows, starts, ends)
            parts = [self.vectors.scores(part).max(1) for part in vectors.split(LINK_SLICE)]
            best_scores = torch.cat([p.values for p in parts])
            best = torch.cat([p.indices for p in parts])
            types = type_logits.argmax(1)
            kept = probabilities[rows, starts, lengths]
        return [
            (batch[r], s, e, p, t, c, v)
            for r, s, e, p, t, c, v in zip(
                rows.tolist(),
                starts.tolist(),
                ends.tolist(),
                kept.tolist(),
                types.tolist(),
                best.tolist(),
                best_scores.tolist(),
                strict=True,
            )
        ]

    # --- linking given spans ------------------------------------------------------------------------

    def link_mentions(
        self, documents: Sequence[Document], k: int = 16, *, cancel: CancelToken = NEVER_CANCELLED
    ) -> list[list[list[Candidate]]]:
        """Per document, per mention: the top-k concepts for the given spans, all spans of a window
        linked in one pass. A mention no word piece covers (only spaces) gets no candidates."""
        texts = [document.text for document in documents]
        pieces, chunks = self.chunks(texts)
        # each mention goes to the first window that holds it whole (windows overlap by >= L pieces)
        wanted: dict[int, list[tuple[int, int, int, int]]] = {}  # chunk -> (doc, mention, first, last)
        by_document: dict[int, list[int]] = {}
        for index, chunk in enumerate(chunks):
            by_document.setdefault(chunk.document, []).append(index)
        for d, document in enumerate(documents):
            for m, mention in enumerate(document.mentions):
                span = pieces[d].piece_span(mention.start, mention.end)
                if span is None:
                    continue
                home = _home_chunk(chunks, by_document.get(d, []), span)
                chunk = chunks[home]
                last = min(span[1] - chunk.first + 1, len(chunk) - 2)  # a span longer than a window: cut
                wanted.setdefault(home, []).append((d, m, span[0] - chunk.first + 1, last))
        out: list[list[list[Candidate]]] = [[[] for _ in document.mentions] for document in documents]
        order = sorted(wanted)
        for first in range(0, len(order), BATCH_CHUNKS):
            cancel.raise_if_cancelled()
            indices = order[first : first + BATCH_CHUNKS]
            inputs = collate([chunks[i] for i in indices], self.pad_id, self.device)
            rows, starts, ends, targets = [], [], [], []
            for row, index in enumerate(indices):
                for d, m, start, end in wanted[index]:
                    rows.append(row)
                    starts.append(start)
                    ends.append(end)
                    targets.append((d, m))
            with torch.inference_mode():
                hidden, _ = self.model(inputs["input_ids"], inputs["attention_mask"])
                vectors, _ = self.model.span_vectors(
                    hidden, torch.tensor(rows), torch.tensor(starts), torch.tensor(ends)
                )
                parts = [
                    self.vectors.scores(part).topk(min(k, len(self.vectors)), dim=1)
                    for part in vectors.split(LINK_SLICE)
                ]
                top_scores = torch.cat([p.values for p in parts])
                top = torch.cat([p.indices for p in parts])
            for (d, m), concepts, values in zip(targets, top.tolist(), top_scores.tolist(), strict=True):
                out[d][m] = [self._candidate(c, v) for c, v in zip(concepts, values, strict=True)]
        return out

    def _candidate(self, concept: int, score: float) -> Candidate:
        concept_id = self.vectors.concept_ids[concept]
        name = self.vectors.kb.concepts[concept_id].preferred_name
        return Candidate(concept_id, name, name, float(score))


def fill_gaps(mentions: Sequence[Mention], others: Sequence[Mention]) -> list[Mention]:
    """`mentions` and those of `others` that overlap none of them, sorted: a second detector adds only
    where the first found nothing (the first decides every span they dispute)."""
    kept = list(mentions)
    kept += [m for m in others if not any(m.span.overlaps(mine.span) for mine in mentions)]
    return sorted(kept, key=lambda m: (m.start, m.end))


def merge_window_spans(
    pieces: Pieces, reads: Sequence[tuple[int, int, int, float, object]]
) -> dict[tuple[int, int], tuple[float, object]]:
    """Spans read in overlapping windows -> {(start, end) characters: (probability, payload)}.

    `reads` are (window's first piece, first and last input position in the window ([CLS] = 0),
    probability, payload). A span read in two windows (in their overlap) is the same characters, so it
    is kept once, with the reading of higher probability."""
    merged: dict[tuple[int, int], tuple[float, object]] = {}
    for window_first, first, last, probability, payload in reads:
        key = (pieces.starts[window_first + first - 1], pieces.ends[window_first + last - 1])
        known = merged.get(key)
        if known is None or probability > known[0]:
            merged[key] = (probability, payload)
    return merged


def _home_chunk(chunks: Sequence[Chunk], indices: Sequence[int], span: tuple[int, int]) -> int:
    """The first chunk holding pieces span[0]..span[1] whole; else (a span longer than a window) the
    one holding its start, the span cut at the window's end."""
    for index in indices:
        chunk = chunks[index]
        if chunk.first <= span[0] and span[1] < chunk.first + len(chunk) - 2:
            return index
    for index in indices:
        chunk = chunks[index]
        if chunk.first <= span[0] < chunk.first + len(chunk) - 2:
            return index
    return indices[-1]


def _batches(chunks: Sequence[Chunk], size: int = BATCH_CHUNKS):
    """Chunks in batches of similar length (little padding)."""
    order = sorted(range(len(chunks)), key=lambda i: len(chunks[i]))
    for first in range(0, len(order), size):
        yield [chunks[i] for i in order[first : first + size]]
