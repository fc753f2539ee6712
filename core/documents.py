"""The plain data every room speaks: documents, passages, mentions, candidates.

Offsets are always document-level, 0-based and end-exclusive, into `Document.text`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

# A JSON value (str, int, float, bool, None, list, dict): what BioC JSON infons may hold.
Infons = dict[str, Any]

# Separators between the individual ids of one mention, as the field writes them: `|` (NCBI-disease
# composites, and Curalink's own join of several KB concepts: KB ids never contain `|`), `+` (NCBI
# "needs the combination"), `,` (NLM-Chem, BioRED, GNormPlus) and `;` (NLM-Gene).
COMPOSITE_SEPARATORS = re.compile(r"[|+,;]")
# tmVar / BioRED variant ids are one structured id although they contain `|`, `;`, `,` and `+`:
# `p|SUB|V|1764|M`, `c|SUB|G|Ex2+860|C;Gene:3577;RS#:2234671;VariantGroup:0`, `rs1611115;VariantGroup:0`.
_STRUCTURED_ID = re.compile(
    r"^[A-Za-z]{0,2}\|[A-Za-z]+\||;(VariantGroup|CorrespondingGene|Gene|RS#|RSID|Disease):"
)
_SEVERAL = re.compile(r"[|,;]")
# PubTator's marks for "no concept": -1 (NCBI-disease), - (NLM-Chem).
NO_CONCEPT = frozenset({"-1", "-"})


def split_concept_ids(concept_id: str) -> tuple[str, ...]:
    """The individual concept ids of an id string as the field writes it (see COMPOSITE_SEPARATORS).

    A tmVar-style structured variant id is one id; `-1` and `-` (alone or as a part) name no concept.
    """
    if not concept_id or concept_id in NO_CONCEPT:
        return ()
    if _STRUCTURED_ID.search(concept_id):
        return (concept_id,)
    return tuple(part for part in COMPOSITE_SEPARATORS.split(concept_id) if part and part not in NO_CONCEPT)


def is_structured_id(concept_id: str) -> bool:
    """True for a tmVar-style variant id (one id despite its separators)."""
    return bool(_STRUCTURED_ID.search(concept_id))


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
    "" (not linked), "-1" or "-" (un-normalisable, PubTator), "A|B", "A,B", "A;B" (a mention naming
    several concepts; "A|B|C" is also how Curalink joins the KB concepts a curator linked), "A+B" (one
    mention needing the combination of concepts) or a structured tmVar id (`p|SUB|V||M;Gene:...`).
    `concept_ids` gives the individual ids. `infons` holds JSON values (BioC JSON keeps their types).
    """

    start: int
    end: int
    text: str
    type: str = ""
    concept_id: str = ""
    mention_id: str = ""
    origin: str = "gold"
    infons: Infons = field(default_factory=dict, compare=False, hash=False)

    @property
    def span(self) -> Span:
        return Span(self.start, self.end)

    @property
    def concept_ids(self) -> tuple[str, ...]:
        """The individual ids of a (possibly composite) link; empty when unlinked, -1 or -."""
        return split_concept_ids(self.concept_id)

    @property
    def is_composite(self) -> bool:
        """A mention naming several concepts (`A|B`, `A,B`, `A;B`); not `A+B`, not a structured id."""
        return bool(_SEVERAL.search(self.concept_id)) and not is_structured_id(self.concept_id)

    def with_link(self, concept_id: str) -> Mention:
        return replace(self, concept_id=concept_id)


@dataclass(frozen=True)
class Passage:
    """A titled or untitled stretch of a document (BioC passage, PubTator title / abstract / block).

    `infons` keeps what the source says about the passage beyond its kind (BioC passage infons, the
    PubTator block a paragraph came from), so writers can give it back.
    """

    offset: int
    text: str
    kind: str = ""
    infons: Infons = field(default_factory=dict, compare=False, hash=False)

    @property
    def end(self) -> int:
        return self.offset + len(self.text)


@dataclass(frozen=True)
class Relation:
    """A relation, event or equivalence kept for round trips.

    Two shapes: positional (`roles` empty: PubTator's `PMID CID chem dis` arguments are concept ids or
    free text), or by reference (`roles[i]` is the role of `arguments[i]`, an annotation or relation id:
    BioC nodes, brat `Arg1:T1`, brat event arguments). `infons` holds everything else the source says
    (BioC relation infons with their JSON types, PubTator3 `role1`/`role2` and `score`, brat attributes,
    notes and `brat_kind` = "event" / "equiv").
    """

    type: str
    arguments: tuple[str, ...]
    relation_id: str = ""
    roles: tuple[str, ...] = ()
    infons: Infons = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if self.roles and len(self.roles) != len(self.arguments):
            raise ValueError(
                f"relation {self.relation_id!r}: {len(self.roles)} roles for {len(self.arguments)} arguments"
            )


@dataclass(frozen=True)
class Document:
    doc_id: str
    passages: tuple[Passage, ...]
    mentions: tuple[Mention, ...] = ()
    relations: tuple[Relation, ...] = ()
    metadata: Infons = field(default_factory=dict, compare=False, hash=False)
    # The BioC collection the document came in (source, date, key, version, infons), so a BioC export
    # can give the collection header back; empty for other formats.
    collection: Infons = field(default_factory=dict, compare=False, hash=False)

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
