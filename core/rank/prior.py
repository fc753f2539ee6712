"""The annotation prior: how often curators and gold linked this normalised string to this concept.

Counts are kept per document, so a document's own annotations can be left out when that document is
scored (leave-one-document-out): during training the model never sees a prior built from the very
link it must predict, and a string seen only in the document being scored gets no prior at all.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from core.documents import Document
from core.retrieve.query_plan import plan_document
from core.text.normalize import normalize_name

DEFAULT_SMOOTHING = 1.0


def prior_key(text: str) -> str:
    """The string the prior is keyed by: the (expanded) mention text, normalised."""
    return normalize_name(text)


@dataclass(frozen=True)
class PriorEvidence:
    """What the prior says about one (string, concept) pair, the scored document's own links left out."""

    probability: float  # count(string, concept) / (count(string) + smoothing)
    string_count: int  # links of this string to any concept
    is_top: bool  # this concept is the string's most frequent one
    concept_count: int  # links to this concept from any string


class AnnotationPrior:
    """Counts of (string, concept) links, kept per document for leave-one-document-out lookups."""

    def __init__(self, smoothing: float = DEFAULT_SMOOTHING):
        self.smoothing = smoothing
        self.pairs: dict[str, Counter[str]] = defaultdict(Counter)
        self.concepts: Counter[str] = Counter()
        self.by_document: dict[str, Counter[tuple[str, str]]] = defaultdict(Counter)

    @classmethod
    def from_links(
        cls, links: Iterable[tuple[str, str, str]], smoothing: float = DEFAULT_SMOOTHING
    ) -> AnnotationPrior:
        """From (document id, mention text, concept id) triples."""
        prior = cls(smoothing)
        for doc_id, text, concept_id in links:
            prior.add(doc_id, text, concept_id)
        return prior

    @classmethod
    def from_documents(
        cls, documents: Iterable[Document], smoothing: float = DEFAULT_SMOOTHING
    ) -> AnnotationPrior:
        """Single-concept links of the documents' mentions, keyed by the query plan's whole-mention query
        (abbreviations expanded), so keys match what the pipeline queries."""
        prior = cls(smoothing)
        for document in documents:
            for mention, plan in zip(document.mentions, plan_document(document), strict=True):
                ids = mention.concept_ids
                if len(ids) != 1:
                    continue
                prior.add(document.doc_id, plan.query, ids[0])
        return prior

    def add(self, doc_id: str, text: str, concept_id: str) -> None:
        key = prior_key(text)
        if not key or not concept_id:
            return
        self.pairs[key][concept_id] += 1
        self.concepts[concept_id] += 1
        self.by_document[doc_id][(key, concept_id)] += 1

    def __len__(self) -> int:
        return sum(self.concepts.values())

    def replace_documents(self, doc_ids: Iterable[str], fresh: AnnotationPrior) -> None:
        """The links of `doc_ids` as `fresh` counts them now (a curator decided, undid or corrected
        there): their old counts are taken out and the new ones put in, so an open desk's prior follows
        its decisions without being rebuilt from every document."""
        for doc_id in doc_ids:
            for (key, concept_id), count in self.by_document.pop(doc_id, Counter()).items():
                self.pairs[key][concept_id] -= count
                if self.pairs[key][concept_id] <= 0:
                    del self.pairs[key][concept_id]
                if not self.pairs[key]:
                    del self.pairs[key]
                self.concepts[concept_id] -= count
                if self.concepts[concept_id] <= 0:
                    del self.concepts[concept_id]
            for (key, concept_id), count in fresh.by_document.get(doc_id, Counter()).items():
                self.pairs[key][concept_id] += count
                self.concepts[concept_id] += count
                self.by_document[doc_id][(key, concept_id)] += count

    def counts(self, text: str, exclude_document: str | None = None) -> Counter[str]:
        """Concept counts of a string, without the links of `exclude_document`."""
        key = prior_key(text)
        found = Counter(self.pairs.get(key, {}))
        own = self.by_document.get(exclude_document) if exclude_document is not None else None
        if own:
            for (own_key, concept_id), count in own.items():
                if own_key == key:
                    found[concept_id] -= count
        return +found  # drops zeros

    def concept_count(self, concept_id: str, exclude_document: str | None = None) -> int:
        count = self.concepts.get(concept_id, 0)
        own = self.by_document.get(exclude_document) if exclude_document is not None else None
        if own:
            count -= sum(n for (_, c), n in own.items() if c == concept_id)
        return count

    def evidence(
        self, text: str, concept_ids: Iterable[str], exclude_document: str | None = None
    ) -> list[PriorEvidence]:
        """One `PriorEvidence` per concept id, in order."""
        found = self.counts(text, exclude_document)
        total = sum(found.values())
        best = max(found.values()) if found else 0
        own = self.by_document.get(exclude_document) if exclude_document is not None else None
        own_concepts: Counter[str] = Counter()
        if own:
            for (_, concept_id), count in own.items():
                own_concepts[concept_id] += count
        out = []
        for concept_id in concept_ids:
            count = found.get(concept_id, 0)
            out.append(
                PriorEvidence(
                    probability=count / (total + self.smoothing) if total else 0.0,
                    string_count=total,
                    is_top=bool(count) and count == best,
                    concept_count=self.concepts.get(concept_id, 0) - own_concepts.get(concept_id, 0),
                )
            )
        return out


def log_count(count: int) -> float:
    return math.log1p(max(count, 0))
