"""The plain data every room speaks: documents, passages, mentions, candidates.

Offsets are always document-level, 0-based and end-exclusive, into `Document.text`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

COMPOSITE_SEPARATORS = re.compile(r"[|+]")


@dataclass(frozen=True, slots=True)
class Span:
    start: int
    end: int

    def __post_init__(self) -> None:
        if self.start < 0 or self.end < self.start:
            raise ValueError(f"invalid span [{self.start}, {self.end})")

    def overlaps(self, other: Span) -> bool:
        return self.start < other.end and other.start < self.end

    def __len__(self) -> int:
        return self.end - self.start


@dataclass(frozen=True)
class Mention:
    """One annotated or detected mention.

    `concept_id` keeps the id string exactly as the source wrote it, so a corpus round-trips:
    "" (not linked), "-1" (un-normalisable, PubTator), "A|B" (a composite mention naming several
    concepts) or "A+B" (one mention needing the combination of concepts).
    """

    start: int
    end: int
    text: str
    type: str = ""
    concept_id: str = ""
    mention_id: str = ""
    origin: str = "gold"
    infons: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def span(self) -> Span:
        return Span(self.start, self.end)

    @property
    def concept_ids(self) -> tuple[str, ...]:
        """The individual ids of a (possibly composite) link; empty when unlinked or -1."""
        if not self.concept_id or self.concept_id == "-1":
            return ()
        return tuple(part for part in COMPOSITE_SEPARATORS.split(self.concept_id) if part)

    @property
    def is_composite(self) -> bool:
        return "|" in self.concept_id

    def with_link(self, concept_id: str) -> Mention:
        return replace(self, concept_id=concept_id)


@dataclass(frozen=True)
class Passage:
    """A titled or untitled stretch of a document (BioC passage, PubTator title / abstract)."""

    offset: int
    text: str
    kind: str = ""

    @property
    def end(self) -> int:
        return self.offset + len(self.text)


@dataclass(frozen=True)
class Relation:
    """A relation line kept for round trips (PubTator `PMID CID chem dis`, BioC relations)."""

    type: str
    arguments: tuple[str, ...]
    relation_id: str = ""


@dataclass(frozen=True)
class Document:
    doc_id: str
    passages: tuple[Passage, ...]
    mentions: tuple[Mention, ...] = ()
    relations: tuple[Relation, ...] = ()
    metadata: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def text(self) -> str:
        """The whole text with passages at their offsets; gaps are filled with spaces."""
        pieces: list[str] = []
        cursor = 0
        for passage in sorted(self.passages, key=lambda p: p.offset):
            if passage.offset > cursor:
                pieces.append(" " * (passage.offset - cursor))
                cursor = passage.offset
            overlap = cursor - passage.offset
            pieces.append(passage.text[overlap:])
            cursor = max(cursor, passage.end)
        return "".join(pieces)

    @property
    def title(self) -> str:
        for passage in self.passages:
            if passage.kind in ("title", "t", "front"):
                return passage.text
        return self.passages[0].text if self.passages else ""

    def mention_text_mismatches(self) -> list[Mention]:
        """Mentions whose stored text differs from the text at their offsets."""
        text = self.text
        return [m for m in self.mentions if text[m.start : m.end] != m.text]

    def with_mentions(self, mentions: tuple[Mention, ...] | list[Mention]) -> Document:
        return replace(self, mentions=tuple(sorted(mentions, key=lambda m: (m.start, m.end))))


def document_from_title_abstract(doc_id: str, title: str, abstract: str, **metadata: str) -> Document:
    """PubTator convention: the abstract starts one space after the title."""
    passages = [Passage(0, title, "title")]
    if abstract:
        passages.append(Passage(len(title) + 1, abstract, "abstract"))
    return Document(doc_id=doc_id, passages=tuple(passages), metadata=dict(metadata))


@dataclass(frozen=True)
class Candidate:
    """One suggested concept for a mention."""

    concept_id: str
    name: str
    matched_name: str = ""
    retriever_score: float = 0.0
    reranker_score: float | None = None

    @property
    def score(self) -> float:
        return self.reranker_score if self.reranker_score is not None else self.retriever_score
