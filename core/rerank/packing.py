"""Pack (mention, candidate) pairs into cross-encoder inputs, one code path for every level.

Levels (methods.md B.4; the paper's names in brackets):

- ``pair`` [base]: ``[CLS] t [SEP] m [MASK] c [SEP]``, one input per pair.
- ``mention`` [parallel]: ``[CLS] t [SEP] m [MASK] c1 [SEP] m [MASK] c2 [SEP] ...``.
- ``sentence`` [multi]: every pair of every mention of one sentence after its text.
- ``document`` [passage/document]: the sentence blocks of a whole document, each block
  ``t [SEP] m [MASK] c [SEP] ...`` repeating its own sentence text, blocks simply concatenated
  (so the [SEP] closing one block's last pair separates it from the next block's text).
- ``compact`` (ours): document-level, every context sentence once, then each mention once with its
  candidates after it: ``[CLS] t1 t2 ... [SEP] m1 [MASK] c11 [MASK] c12 ... [SEP] m2 [MASK] ... [SEP]``.
  The [MASK] itself separates candidates, so a pair costs ``1 + |c|`` tokens instead of the
  ``|t| + |m| + |c| + 4`` of ``pair``. A mention group that would repeat an earlier group token for
  token (same mention word pieces, same candidate names in the same order: an abstract naming "DMD"
  five times) is stated once and its scores are copied to the repeats (`PackedInput.duplicates`); the
  repeats' sentences still join the context. Compact gives a mention no position of its own, so the
  repeated group carried no information the first did not. On NCBI-disease test 464 of 960 mentions
  are such repeats.

Choices where the paper is silent (methods.md B.12):

- Candidates keep the order they are given in (retriever rank at inference; training shuffles them);
  mentions and sentences keep document order.
- Only sentences that carry at least one mention (with candidates) are packed; a mention that crosses
  a sentence boundary merges the sentences it touches (methods.md B.3).
- Pieces are tokenized once without special tokens and assembled as ids, so every length is exact.

Overflow and truncation rules:

- An input that would exceed ``max_length`` is closed and the next one starts greedily, repeating the
  context (sentence text) and, for the verbose levels and compact alike, the mention it continues.
- A mention is cut to ``max_mention_tokens`` and a candidate name to ``max_candidate_tokens`` word
  pieces (head kept), both at most ``(max_length - 4) // 4`` so a pair always leaves room for context.
- A sentence too long to share an input with its largest single pair is replaced, per mention, by a
  window of its tokens centred on that mention, as wide as the remaining room allows.

Every (mention, candidate) pair appears exactly once over all inputs: each input lists, aligned with
its [MASK] positions, the (mention index, candidate index) it scores, except compact's repeated groups,
which are listed as (repeat, first mention) in the `duplicates` of the document's first input.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from core.documents import Document, Span
from core.errors import InputError, ModelError
from core.text.sentences import split_sentences

log = logging.getLogger(__name__)

PackingLevel = Literal["pair", "mention", "sentence", "document", "compact"]
PACKING_LEVELS: tuple[str, ...] = ("pair", "mention", "sentence", "document", "compact")
MIN_LENGTH = 16

SentenceSplitter = Callable[[str], list[Span]]


@dataclass(frozen=True)
class PackedInput:
    """One model input and the pairs its [MASK] tokens score, in the same order."""

    document: int
    input_ids: tuple[int, ...]
    mask_positions: tuple[int, ...]
    pairs: tuple[tuple[int, int], ...]
    duplicates: tuple[tuple[int, int], ...] = ()  # (repeated mention, the mention it repeats): compact

    def __len__(self) -> int:
        return len(self.input_ids)


@dataclass
class _Block:
    """A stretch of context and the mentions (indices into the document's mentions) it carries."""

    context: list[int]
    mentions: list[int]


@dataclass
class _Builder:
    """One input being filled: blocks in order, each with its (mention, candidate) pairs."""

    compact: bool
    length: int = 0
    blocks: list[tuple[int, list[tuple[int, int]]]] = field(default_factory=list)
    block_ids: dict[int, int] = field(default_factory=dict)  # block id -> its position in `blocks`
    mentions: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.length = 2 if self.compact else 1  # [CLS] (+ the [SEP] after compact's texts)

    @property
    def has_pairs(self) -> bool:
        return bool(self.blocks)

    def cost(
        self,
        block_id: int,
        block: _Block,
        mention: int,
        m_len: int,
        c_len: int,
        also: Sequence[tuple[int, int]] = (),
    ) -> int:
        """Tokens that adding this pair costs; `also`: (block id, context length) the pair brings along."""
        extra = 0
        if block_id not in self.block_ids:
            extra += len(block.context) + (0 if self.compact else 1)
        if self.compact:
            extra += sum(
                length for other, length in also if other != block_id and other not in self.block_ids
            )
            if mention not in self.mentions:
                extra += m_len + 1  # the mention and the [SEP] closing its group
            return extra + 1 + c_len
        return extra + m_len + 1 + c_len + 1

    def add(self, block_id: int, mention: int, candidate: int, cost: int, also: Sequence[int] = ()) -> None:
        for other in (block_id, *also):
            if other not in self.block_ids:
                self.block_ids[other] = len(self.blocks)
                self.blocks.append((other, []))
        self.blocks[self.block_ids[block_id]][1].append((mention, candidate))
        self.mentions.add(mention)
        self.length += cost


class Packer:
    """Turns documents and candidate names into packed token-id inputs for one packing level."""

    def __init__(
        self,
        tokenizer,
        level: str,
        max_length: int = 512,
        max_mention_tokens: int = 32,
        max_candidate_tokens: int = 32,
        sentence_splitter: SentenceSplitter | None = None,
    ):
        if level not in PACKING_LEVELS:
            raise ValueError(f"unknown packing level {level!r}; expected one of {', '.join(PACKING_LEVELS)}")
        if max_length < MIN_LENGTH:
            raise ValueError(f"max_length {max_length} is below the minimum {MIN_LENGTH}")
        self.tokenizer = tokenizer
        self.level = level
        self.max_length = max_length
        room = (max_length - 4) // 4
        self.max_mention_tokens = max(1, min(max_mention_tokens, room))
        self.max_candidate_tokens = max(1, min(max_candidate_tokens, room))
        self.splitter = sentence_splitter or split_sentences
        self.cls_id, self.sep_id, self.mask_id = special_ids(tokenizer)
        self._name_cache: dict[str, list[int]] = {}

    # -- tokenization -------------------------------------------------------------------------
    def _names(self, names: Sequence[str], limit: int) -> list[list[int]]:
        missing = [n for n in dict.fromkeys(names) if n not in self._name_cache]
        if missing:
            encoded = self.tokenizer(missing, add_special_tokens=False)["input_ids"]
            for name, ids in zip(missing, encoded):
                self._name_cache[name] = list(ids)
        return [self._name_cache[n][:limit] for n in names]

    # -- sentence blocks ----------------------------------------------------------------------
    def _sentence_spans(self, document: Document) -> list[Span]:
        spans: list[Span] = []
        for passage in sorted(document.passages, key=lambda p: p.offset):
            for span in self.splitter(passage.text):
                spans.append(Span(passage.offset + span.start, passage.offset + span.end))
        return spans

    def _blocks(
        self, document: Document, mentions: list[int], m_ids: list[list[int]], c_max: dict[int, int]
    ) -> list[_Block]:
        """Sentences carrying the given mentions, merged across crossing mentions, long ones windowed."""
        text = document.text
        spans = self._sentence_spans(document) or [Span(0, len(text))]
        groups: list[list[int]] = []  # each: [start, end, mention indices...]
        for index in mentions:
            mention = document.mentions[index]
            touched = [s for s in spans if s.start < mention.end and mention.start < s.end]
            if not touched:  # in a gap between sentences: attach to the nearest one
                touched = [
                    min(spans, key=lambda s: min(abs(s.start - mention.start), abs(s.end - mention.end)))
                ]
            start = min([s.start for s in touched] + [mention.start])
            end = max([s.end for s in touched] + [mention.end])
            groups.append([start, end, index])
        merged: list[list[int]] = []
        for group in sorted(groups, key=lambda g: (g[0], g[1])):
            if merged and group[0] < merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], group[1])
                merged[-1].extend(group[2:])
            else:
                merged.append(list(group))
        texts = [text[g[0] : g[1]] for g in merged]
        encoded = self.tokenizer(texts, add_special_tokens=False, return_offsets_mapping=True)
        blocks: list[_Block] = []
        for group, ids, offsets in zip(merged, encoded["input_ids"], encoded["offset_mapping"]):
            members = sorted(
                group[2:], key=lambda i: (document.mentions[i].start, document.mentions[i].end, i)
            )
            need = max(len(m_ids[i]) + c_max[i] for i in members)
            if len(ids) + need + 4 <= self.max_length:
                blocks.append(_Block(list(ids), members))
                continue
            for index in members:  # too long: one window of the sentence per mention
                budget = self.max_length - 4 - len(m_ids[index]) - c_max[index]
                local = document.mentions[index].start - group[0]
                first = next((k for k, (_, end) in enumerate(offsets) if end > local), len(ids) - 1)
                left = max(0, min(first - budget // 2, len(ids) - budget))
                blocks.append(_Block(list(ids[left : left + budget]), [index]))
        return blocks

    # -- packing -----------------------------------------------------------------------------
    def pack(
        self, documents: Sequence[Document], candidates: Sequence[Sequence[Sequence[str]]]
    ) -> list[PackedInput]:
        """Inputs for many documents; `candidates[d][m]` are the names for mention m of document d."""
        if len(documents) != len(candidates):
            raise InputError(
                None,
                f"{len(documents)} documents but candidate lists for {len(candidates)}",
                item="candidates",
            )
        packed: list[PackedInput] = []
        for index, (document, names) in enumerate(zip(documents, candidates)):
            packed.extend(self.pack_document(index, document, names))
        return packed

    def pack_document(
        self, doc_index: int, document: Document, candidates: Sequence[Sequence[str]]
    ) -> list[PackedInput]:
        if len(candidates) != len(document.mentions):
            raise InputError(
                document.doc_id,
                f"{len(document.mentions)} mentions but candidate lists for {len(candidates)}",
                item="candidates",
            )
        text_length = len(document.text)
        for number, mention in enumerate(document.mentions):
            if mention.end > text_length:
                raise InputError(
                    document.doc_id,
                    f"mention [{mention.start}, {mention.end}) lies outside the text ({text_length} characters)",
                    item=f"mention {number} {mention.text!r}",
                )
        active = [i for i, names in enumerate(candidates) if len(names) > 0]
        if not active:
            return []
        m_ids: list[list[int]] = [[] for _ in document.mentions]
        for i, ids in zip(
            active, self._names([document.mentions[i].text for i in active], self.max_mention_tokens)
        ):
            m_ids[i] = ids
        c_ids: dict[int, list[list[int]]] = {
            i: self._names([str(n) for n in candidates[i]], self.max_candidate_tokens) for i in active
        }
        c_max = {i: max(len(c) for c in c_ids[i]) for i in active}
        blocks = self._blocks(document, active, m_ids, c_max)
        compact = self.level == "compact"
        first_of = self._repeated_groups(active, m_ids, c_ids) if compact else {}
        # a repeat's sentences travel with the first mention of its group (compact only)
        also: dict[int, list[int]] = {}
        for b, block in enumerate(blocks):
            for m in block.mentions:
                if m in first_of and b not in also.setdefault(first_of[m], []):
                    also[first_of[m]].append(b)

        # scopes: lists of (block id, mention, candidate) filled greedily into inputs
        units = [
            (b, m, c)
            for b, block in enumerate(blocks)
            for m in block.mentions
            if m not in first_of
            for c in range(len(c_ids[m]))
        ]
        if self.level == "pair":
            scopes = [[u] for u in units]
        elif self.level == "mention":
            scopes = [
                [u for u in units if (u[0], u[1]) == key]
                for key in dict.fromkeys((u[0], u[1]) for u in units)
            ]
        elif self.level == "sentence":
            scopes = [[u for u in units if u[0] == b] for b in range(len(blocks))]
        else:
            scopes = [units]

        inputs: list[PackedInput] = []
        for scope in scopes:
            builder = _Builder(compact)
            for b, m, c in scope:
                brings = [(other, len(blocks[other].context)) for other in also.get(m, ())]
                cost = builder.cost(b, blocks[b], m, len(m_ids[m]), len(c_ids[m][c]), brings)
                if builder.has_pairs and builder.length + cost > self.max_length:
                    inputs.append(self._assemble(doc_index, builder, blocks, m_ids, c_ids))
                    builder = _Builder(compact)
                    cost = builder.cost(b, blocks[b], m, len(m_ids[m]), len(c_ids[m][c]), brings)
                if brings and builder.length + cost > self.max_length:  # no room for repeats' context
                    brings = []
                    cost = builder.cost(b, blocks[b], m, len(m_ids[m]), len(c_ids[m][c]))
                builder.add(b, m, c, cost, [other for other, _ in brings])
            if builder.has_pairs:
                inputs.append(self._assemble(doc_index, builder, blocks, m_ids, c_ids))
        if first_of and inputs:
            inputs[0] = replace(inputs[0], duplicates=tuple(sorted(first_of.items())))
        return inputs

    @staticmethod
    def _repeated_groups(
        active: Sequence[int], m_ids: list[list[int]], c_ids: dict[int, list[list[int]]]
    ) -> dict[int, int]:
        """repeat -> first mention, for mention groups that would be packed token for token alike."""
        first: dict[tuple, int] = {}
        repeats: dict[int, int] = {}
        for m in active:
            key = (tuple(m_ids[m]), tuple(tuple(c) for c in c_ids[m]))
            if key in first:
                repeats[m] = first[key]
            else:
                first[key] = m
        return repeats

    def _assemble(
        self,
        doc_index: int,
        builder: _Builder,
        blocks: list[_Block],
        m_ids: list[list[int]],
        c_ids: dict[int, list[list[int]]],
    ) -> PackedInput:
        ids = [self.cls_id]
        masks: list[int] = []
        pairs: list[tuple[int, int]] = []
        if builder.compact:
            for b, _ in sorted(builder.blocks):  # context in document order, repeats' sentences included
                ids.extend(blocks[b].context)
            ids.append(self.sep_id)
            groups: dict[int, list[int]] = {}
            for _, block_pairs in builder.blocks:
                for m, c in block_pairs:
                    groups.setdefault(m, []).append(c)
            for m, cands in groups.items():
                ids.extend(m_ids[m])
                for c in cands:
                    masks.append(len(ids))
                    pairs.append((m, c))
                    ids.append(self.mask_id)
                    ids.extend(c_ids[m][c])
                ids.append(self.sep_id)
        else:
            for b, block_pairs in builder.blocks:
                ids.extend(blocks[b].context)
                ids.append(self.sep_id)
                for m, c in block_pairs:
                    ids.extend(m_ids[m])
                    masks.append(len(ids))
                    pairs.append((m, c))
                    ids.append(self.mask_id)
                    ids.extend(c_ids[m][c])
                    ids.append(self.sep_id)
        if len(ids) != builder.length or len(ids) > self.max_length:
            raise AssertionError(f"packing length bookkeeping broke: {len(ids)} vs {builder.length}")
        return PackedInput(doc_index, tuple(ids), tuple(masks), tuple(pairs))


def special_ids(tokenizer) -> tuple[int, int, int]:
    """[CLS], [SEP] and [MASK] ids; a tokenizer without [MASK] cannot mark pairs."""
    mask = getattr(tokenizer, "mask_token_id", None)
    if mask is None:
        raise ModelError(
            f"tokenizer {getattr(tokenizer, 'name_or_path', '?')!r} has no [MASK] token; "
            "the packed cross-encoder needs a BERT-family (masked LM) vocabulary"
        )
    cls = tokenizer.cls_token_id if tokenizer.cls_token_id is not None else tokenizer.bos_token_id
    sep = tokenizer.sep_token_id if tokenizer.sep_token_id is not None else tokenizer.eos_token_id
    if cls is None or sep is None:
        raise ModelError(f"tokenizer {getattr(tokenizer, 'name_or_path', '?')!r} lacks [CLS]/[SEP] tokens")
    return int(cls), int(sep), int(mask)


def scatter_scores(
    inputs: Sequence[PackedInput],
    scores: Sequence[Sequence[float]],
    shapes: Sequence[Sequence[int]],
) -> list[list[list[float]]]:
    """Scores per document, mention, candidate; `shapes[d][m]` is the candidate count of mention m.

    Raises if a pair is scored twice or never, so a packing bug cannot pass silently.
    """
    out: list[list[list[float | None]]] = [[[None] * n for n in doc] for doc in shapes]
    for packed, values in zip(inputs, scores):
        if len(values) != len(packed.pairs):
            raise AssertionError(f"{len(values)} scores for {len(packed.pairs)} [MASK] positions")
        for (m, c), value in zip(packed.pairs, values):
            if out[packed.document][m][c] is not None:
                raise AssertionError(f"pair (doc {packed.document}, mention {m}, candidate {c}) scored twice")
            out[packed.document][m][c] = float(value)
    for packed in inputs:
        for repeat, first in packed.duplicates:
            if any(v is not None for v in out[packed.document][repeat]):
                raise AssertionError(f"repeated mention {repeat} of doc {packed.document} was also scored")
            out[packed.document][repeat] = list(out[packed.document][first])
    for d, doc in enumerate(out):
        for m, row in enumerate(doc):
            if any(v is None for v in row):
                raise AssertionError(f"pair of doc {d}, mention {m} never scored")
    return out  # type: ignore[return-value]
