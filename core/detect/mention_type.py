"""The type detected mentions are stored with, so an export never writes an untyped annotation line.

In order: the type the user asked for; else the type the project's own annotations give most often
to mentions linked to this knowledge base (a disease KB in a corpus of genes, chemicals and diseases
picks the disease type, named as that corpus names it: "SpecificDisease", "Disease",
"DiseaseOrPhenotypicFeature"); else what the KB is about (MEDIC is CTD's disease vocabulary; MeSH
tree branch C is Diseases, D Chemicals and Drugs). Otherwise the caller must say, rather than store a
made-up type.

The annotations come in as rows (doc_id, split, text, type, concept_id: core.store.annotated_types reads
them for core.project_detector); this stage never reads the store.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Protocol

from core.errors import CuralinkError
from core.kb.identifiers import split_ids
from core.kb.knowledge_base import KnowledgeBase

_VOCABULARY_TYPES = {"MEDIC": "Disease"}
_MESH_BRANCH_TYPES = {"C": "Disease", "D": "Chemical"}


class Annotated(Protocol):
    """An annotated mention as the store gives it (core.store.annotated_types.AnnotatedMention)."""

    doc_id: str
    split: str
    text: str
    type: str
    concept_id: str


@dataclass(frozen=True)
class MentionType:
    name: str
    reason: str


def choose_mention_type(
    annotated: Iterable[Annotated], kb: KnowledgeBase, requested: str | None = None, *, where: str = ""
) -> MentionType:
    """The type for detected mentions and why it was chosen (see the module docstring); `where` (the
    project) names what the error is about."""
    if requested is not None:
        name = requested.strip()
        if not name or any(ch in name for ch in "\t\r\n|"):
            raise CuralinkError(
                f"--type {requested!r}: a mention type must be non-empty, without tabs or '|'"
            )
        return MentionType(name, "as asked")
    from_corpus = _type_from_annotations(annotated, kb)
    if from_corpus is not None:
        return from_corpus
    from_kb = _type_from_kb(kb)
    if from_kb is not None:
        return from_kb
    raise CuralinkError(
        f"{where}: cannot tell which type to give detected mentions (no annotated mention is linked "
        "to a concept of the knowledge base, and the knowledge base does not say what it names); "
        "pass --type, e.g. --type Disease"
    )


def _type_from_annotations(annotated: Iterable[Annotated], kb: KnowledgeBase) -> MentionType | None:
    counts = annotated_type_counts(annotated, kb)
    if not counts:
        return None
    name, count = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[0]
    total = sum(counts.values())
    return MentionType(
        name, f"the type of {count} of the {total} annotated mentions linked to this knowledge base"
    )


def annotated_type_counts(
    annotated: Iterable[Annotated], kb: KnowledgeBase, leave_out: Collection[str] = ()
) -> Counter[str]:
    """Mention type -> how many of the annotated (not detected) mentions of that type are linked to a
    concept of `kb`, the documents in `leave_out` (an evaluation's split) excepted."""
    counts: Counter[str] = Counter()
    left_out = set(leave_out)
    for row in annotated:
        if row.doc_id not in left_out and any(kb.resolve(part) for part in split_ids(row.concept_id)):
            counts[row.type] += 1
    return counts


def _type_from_kb(kb: KnowledgeBase) -> MentionType | None:
    vocabularies = {concept.vocabulary for concept in kb}
    if len(vocabularies) == 1 and (vocabulary := vocabularies.pop()) in _VOCABULARY_TYPES:
        return MentionType(_VOCABULARY_TYPES[vocabulary], f"{vocabulary} is a disease vocabulary")
    branches: Counter[str] = Counter(
        tree[0] for concept in kb for tree in concept.tree_numbers[:1] if tree[:1] in _MESH_BRANCH_TYPES
    )
    if branches and sum(branches.values()) * 2 > len(kb):
        branch, _ = branches.most_common(1)[0]
        return MentionType(
            _MESH_BRANCH_TYPES[branch], f"most concepts of the knowledge base are in MeSH branch {branch}"
        )
    return None
