"""The ranking stage the `Linker` runs after retrieval (and the cross-encoder, when the ranker uses it).

It adds TF-IDF's candidates the retriever missed, computes the features, orders by the ranker's
score and sets each candidate's `reranker_score` to the calibrated probability: the final score the
desk shows, bulk accept thresholds and the store keeps (no schema change: the column already holds
"the final ranking score").
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import replace

import numpy as np

from core.documents import Candidate, Document
from core.kb.knowledge_base import KnowledgeBase
from core.progress import NEVER_CANCELLED, CancelToken
from core.rank.coherence import DocumentContext
from core.rank.features import KEPT_GROUPS, NameForms, NameSimilarity, mention_features
from core.rank.hierarchy import ConceptHierarchy
from core.rank.model import RankerModel
from core.rank.prior import AnnotationPrior
from core.rank.query import MentionQuery

log = logging.getLogger(__name__)

PRIOR_CANDIDATES = 3
"""At most this many of the prior's concepts for a string join its candidates (most frequent first)."""


def annotation_prior(documents: Iterable[Document], smoothing: float = 1.0) -> AnnotationPrior:
    """The prior over linked documents, keyed by the abbreviation-expanded text as the pipeline queries."""
    return AnnotationPrior.from_documents(documents, smoothing=smoothing)


class RankingStage:
    """The learned `Ranker` (core.rank.base): a ranker model with what its features need: the KB's
    names (TF-IDF), its tree (core.rank.hierarchy; by default the KB's own tree numbers) and the
    annotation prior. `groups` are the feature groups computed (core.rank.features.FEATURE_GROUPS)."""

    def __init__(
        self,
        model: RankerModel | None,
        kb: KnowledgeBase,
        prior: AnnotationPrior,
        similarity: NameSimilarity | None = None,
        *,
        hierarchy: ConceptHierarchy | None = None,
        groups: tuple[str, ...] = KEPT_GROUPS,
    ):
        self.model = model
        self.kb = kb
        self.prior = prior
        self.similarity = similarity if similarity is not None else NameSimilarity(kb)
        self.forms = NameForms(kb)
        self.groups = groups
        self._hierarchy = hierarchy

    @property
    def hierarchy(self) -> ConceptHierarchy:
        """The tree, read from the KB's concepts the first time a hierarchy feature needs it."""
        if self._hierarchy is None:
            self._hierarchy = (
                ConceptHierarchy.from_concepts(self.kb)
                if "hierarchy" in self.groups
                else ConceptHierarchy({})
            )
        return self._hierarchy

    @property
    def version(self) -> str:
        return self.model.version if self.model is not None else ""

    @property
    def uses_cross_encoder(self) -> bool:
        return bool(self.model is not None and self.model.uses_cross_encoder)

    def features(
        self,
        queries: Sequence[MentionQuery],
        candidates: Sequence[Sequence[Candidate]],
        *,
        use_cross_encoder: bool,
        union: int,
    ) -> list[tuple[list[Candidate], np.ndarray]]:
        """Per mention: the candidates with TF-IDF's additions and their feature rows (no model needed).

        Document coherence reads every mention's retriever candidates (`candidates`) before the union."""
        context = DocumentContext(queries, candidates)
        merged = self.similarity.union(queries, candidates, union)
        for query, (found, missing) in zip(queries, merged, strict=True):
            self._add_prior_concepts(query, found, missing)
            if query.admitted is not None:  # additions outside the mention's type route are dropped
                kept = [i for i, c in enumerate(found) if c.concept_id in query.admitted]
                found[:] = [found[i] for i in kept]
                missing[:] = [missing[i] for i in kept]
        tfidf = self.similarity.scores(queries, [found for found, _ in merged])
        return [
            (
                found,
                mention_features(
                    query,
                    found,
                    missing,
                    forms=self.forms,
                    tfidf=scores,
                    prior=self.prior,
                    use_cross_encoder=use_cross_encoder,
                    context=context,
                    hierarchy=self.hierarchy,
                    strings=self.similarity.strings(query),
                    groups=self.groups,
                ),
            )
            for query, (found, missing), scores in zip(queries, merged, tfidf, strict=True)
        ]

    def _add_prior_concepts(self, query: MentionQuery, found: list[Candidate], missing: list[bool]) -> None:
        """Concepts the prior links this string to (other documents only) join the candidates: a
        curator's answer the retriever did not find can still be ranked first."""
        present = {c.concept_id for c in found}
        text = query.queries[0] if query.queries else query.text
        for concept_id, _ in self.prior.counts(text, query.doc_id).most_common(PRIOR_CANDIDATES):
            concept = self.kb.get(concept_id)
            if concept_id in present or concept is None:
                continue
            found.append(Candidate(concept_id, concept.preferred_name, concept.preferred_name, 0.0))
            missing.append(True)

    def rank(
        self,
        queries: Sequence[Sequence[MentionQuery]],
        candidates: Sequence[Sequence[Sequence[Candidate]]],
        k: int,
        *,
        cancel: CancelToken = NEVER_CANCELLED,
    ) -> list[list[list[Candidate]]]:
        """Per document, per mention: the top-k candidates by the ranker, probability in `reranker_score`."""
        model = self.model
        if model is None:
            raise ValueError("a ranking stage without a model only computes features")
        flat_queries = [q for doc in queries for q in doc]
        flat = [list(found) for doc in candidates for found in doc]
        cancel.raise_if_cancelled()
        featured = iter(
            self.features(
                flat_queries, flat, use_cross_encoder=model.uses_cross_encoder, union=model.tfidf_union
            )
        )
        out = []
        for doc_candidates in candidates:
            ranked_doc = []
            for found in doc_candidates:
                merged, rows = next(featured)
                if not found:
                    ranked_doc.append([])
                    continue
                raw = model.raw_scores(rows)
                probability = model.probabilities(rows)
                order = np.argsort(-raw, kind="stable")[:k]
                ranked_doc.append(
                    [replace(merged[i], reranker_score=float(probability[i])) for i in order.tolist()]
                )
            out.append(ranked_doc)
        return out
