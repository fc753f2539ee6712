"""Per-candidate features of the ranker, one row per (mention, candidate).

The feature set is versioned: a stored ranker names the version and the feature names it was trained
with; it reads only the columns it names, and one naming a feature this version does not compute (or
from an unreadable version) is refused (core.rank.model), never applied to columns that mean something
else. Bump `FEATURE_SET_VERSION` whenever a feature is added, removed or computed differently.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.documents import Candidate
from core.kb.knowledge_base import KnowledgeBase
from core.kb.variants import name_variants
from core.rank.coherence import COHERENCE_FEATURES, DocumentContext
from core.rank.hierarchy import HIERARCHY_FEATURES, ConceptHierarchy
from core.rank.prior import AnnotationPrior, log_count
from core.rank.query import MentionQuery
from core.rank.specificity import (
    SHARED_NAME_FEATURES,
    SPECIFICITY_FEATURES,
    NameWords,
    name_words,
    shared_name_rows,
    specificity_rows,
)
from core.retrieve.tfidf import TfidfRetriever
from core.text.normalize import normalize_name

FEATURE_SET_VERSION = 2
BASE_FEATURES = (
    "rescnn_score",
    "rescnn_gap_to_top",
    "rescnn_inverse_rank",
    "rescnn_missing",
    "tfidf_score",
    "tfidf_gap_to_top",
    "cross_encoder_probability",
    "cross_encoder_present",
    "exact_name_match",
    "normalized_name_match",
    "prior_probability",
    "prior_log_string_count",
    "prior_is_top_concept",
    "prior_string_unseen",
    "abbreviation_expanded",
    "concept_log_frequency",
)
FEATURE_GROUPS = {
    "base": BASE_FEATURES,
    "specificity": SPECIFICITY_FEATURES,
    "shared_names": SHARED_NAME_FEATURES,
    "coherence": COHERENCE_FEATURES,
    "hierarchy": HIERARCHY_FEATURES,
}
KEPT_GROUPS = ("base", "coherence", "hierarchy")
"""The groups the ranker computes, chosen on data the retriever never trained on (NCBI dev and BioRED
diseases, docs/ranker.md): coherence and hierarchy raised acc@1 there; specificity and shared names
changed it by one mention in 4,639 and are left out (computed only when a stage is asked for them)."""
FEATURE_NAMES = tuple(name for group in KEPT_GROUPS for name in FEATURE_GROUPS[group])


class NameForms:
    """Each concept's names as written (case-folded) and normalised, and their content and head words
    (core.rank.specificity), computed once per concept."""

    def __init__(self, kb: KnowledgeBase):
        self.kb = kb
        self._forms: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
        self._words: dict[str, NameWords] = {}

    def _names(self, candidate: Candidate) -> list[str]:
        concept = self.kb.get(candidate.concept_id)
        return list(concept.names) if concept is not None else [candidate.name]

    def of(self, candidate: Candidate) -> tuple[frozenset[str], frozenset[str]]:
        found = self._forms.get(candidate.concept_id)
        if found is None:
            names = self._names(candidate)
            found = (
                frozenset(n.casefold().strip() for n in names),
                frozenset(normalize_name(n) for n in names),
            )
            self._forms[candidate.concept_id] = found
        return found

    def words_of(self, candidate: Candidate) -> NameWords:
        found = self._words.get(candidate.concept_id)
        if found is None:
            found = self._words[candidate.concept_id] = name_words(dict.fromkeys(self._names(candidate)))
        return found

    def forget(self, concept_ids: set[str]) -> None:
        """These concepts' names changed (a curator synonym learnt or withdrawn): read them again."""
        for concept_id in concept_ids:
            self._forms.pop(concept_id, None)
            self._words.pop(concept_id, None)


class NameSimilarity:
    """Char n-gram TF-IDF cosine between a mention's queries and a concept's best name; also a recall
    source. Works on many mentions at once: one transform, one retrieval, one sparse product."""

    def __init__(self, kb: KnowledgeBase, *, variants: bool = False):
        self.kb = kb
        # the mention's name variants searched and compared too: measured on NCBI dev and BioRED, it
        # changed acc@1 by one mention in 4,639 (docs/ranker.md), so the ranker leaves it off
        self.variants = variants
        self.tfidf = TfidfRetriever()
        self.tfidf.index(kb)
        self.matrix = self.tfidf.matrix_t.T.tocsr() if self.tfidf.matrix_t is not None else None
        self.rows_of: dict[str, list[int]] = {}
        for row, entry in enumerate(self.tfidf.rows):
            self.rows_of.setdefault(entry.concept_id, []).append(row)

    def union(
        self, queries: Sequence[MentionQuery], candidates: Sequence[Sequence[Candidate]], k: int
    ) -> list[tuple[list[Candidate], list[bool]]]:
        """Per mention: the retriever's candidates, then TF-IDF's top-k concepts it missed (retriever
        score 0.0), and flags saying which candidates the retriever did not propose."""
        out = [(list(found), [False] * len(found)) for found in candidates]
        if k <= 0 or self.matrix is None:
            return out
        texts = list(dict.fromkeys(q for query in queries for q in self.strings(query)))
        found_by_text = dict(zip(texts, self.tfidf.retrieve(texts, k), strict=True))
        for query, (merged, missing) in zip(queries, out, strict=True):
            best: dict[str, Candidate] = {}
            for text in self.strings(query):
                for found in found_by_text[text]:
                    kept = best.get(found.concept_id)
                    if kept is None or found.retriever_score > kept.retriever_score:
                        best[found.concept_id] = found
            present = {c.concept_id for c in merged}
            for found in sorted(best.values(), key=lambda c: -c.retriever_score)[:k]:
                if found.concept_id not in present:
                    merged.append(Candidate(found.concept_id, found.name, found.matched_name, 0.0))
                    missing.append(True)
        return out

    def strings(self, query: MentionQuery) -> tuple[str, ...]:
        """What TF-IDF searches and compares for a mention: its query strings (and their variants)."""
        strings = _strings(query)
        return _with_variants(strings) if self.variants else strings

    def scores(
        self, queries: Sequence[MentionQuery], candidates: Sequence[Sequence[Candidate]]
    ) -> list[np.ndarray]:
        """Per mention, per candidate: the best cosine of any of its names with any query string."""
        out = [np.zeros(len(found), dtype=np.float64) for found in candidates]
        if self.matrix is None:
            return out
        texts = list(dict.fromkeys(q for query in queries for q in self.strings(query)))
        if not texts:
            return out
        vectors = self.tfidf.vectorizer.transform([normalize_name(t) for t in texts]).tocsr()
        position = {text: i for i, text in enumerate(texts)}
        # many mentions share a string and its candidates: each (string, concept) pair is scored once
        pair_of: dict[tuple[int, str], int] = {}
        slots: list[list[int]] = []
        for query, found in zip(queries, candidates, strict=True):
            own = [position[t] for t in self.strings(query)]
            slots.append([pair_of.setdefault((q, c.concept_id), len(pair_of)) for c in found for q in own])
        query_rows, name_rows, owners = [], [], []
        for (q, concept_id), pair in pair_of.items():
            rows = self.rows_of.get(concept_id, ())
            query_rows.extend([q] * len(rows))
            name_rows.extend(rows)
            owners.extend([pair] * len(rows))
        best = np.zeros(len(pair_of), dtype=np.float64)
        if query_rows:
            dots = vectors[query_rows].multiply(self.matrix[name_rows]).sum(axis=1)
            np.maximum.at(best, np.asarray(owners), np.asarray(dots).ravel())
        for i, (query, found) in enumerate(zip(queries, candidates, strict=True)):
            width = len(self.strings(query))
            pairs = np.asarray(slots[i], dtype=np.int64).reshape(len(found), width)
            out[i] = best[pairs].max(axis=1) if len(found) else out[i]
        return out


def _strings(query: MentionQuery) -> tuple[str, ...]:
    return query.queries or (query.text,)


def _with_variants(strings: tuple[str, ...]) -> tuple[str, ...]:
    """The query strings, then their name variants (core.kb.variants: uninverted, singular, with and
    without the possessive), each once: "Huntington disease" also finds "Huntington's Disease"."""
    return tuple(dict.fromkeys([*strings, *(v for s in strings for v in name_variants(s))]))


def mention_features(
    query: MentionQuery,
    candidates: Sequence[Candidate],
    missing: Sequence[bool],
    *,
    forms: NameForms,
    tfidf: np.ndarray,
    prior: AnnotationPrior,
    use_cross_encoder: bool,
    context: DocumentContext,
    hierarchy: ConceptHierarchy,
    strings: tuple[str, ...] = (),
    groups: tuple[str, ...] = KEPT_GROUPS,
) -> np.ndarray:
    """The feature rows (len(candidates) x the columns of `groups`) of one mention's candidates.

    The prior leaves out the mention's own document (leave-one-document-out), at training and at
    linking alike, so a link is never its own evidence. `strings`: what the mention was searched as
    (NameSimilarity.strings); the specificity words are compared with them."""
    if groups[:1] != ("base",):
        raise ValueError(f"feature groups must start with 'base', not {groups!r}")
    width = sum(len(FEATURE_GROUPS[g]) for g in groups)
    if not candidates:
        return np.zeros((0, width), dtype=np.float64)
    blocks = [_base_rows(query, candidates, missing, forms, tfidf, prior, use_cross_encoder)]
    ids = [c.concept_id for c in candidates]
    for group in groups[1:]:
        if group == "specificity":
            words = [forms.words_of(c) for c in candidates]
            blocks.append(specificity_rows(strings or _strings(query), words))
        elif group == "shared_names":
            normalized = frozenset(normalize_name(q) for q in (query.text, *query.queries))
            preferred = [_preferred(forms.kb, c) for c in candidates]
            matches = [not forms.of(c)[1].isdisjoint(normalized) for c in candidates]
            blocks.append(shared_name_rows(normalized, preferred, matches))
        elif group == "coherence":
            blocks.append(context.rows(query, ids))
        elif group == "hierarchy":
            blocks.append(hierarchy.rows(ids))
        else:
            raise ValueError(f"unknown feature group {group!r}")
    return np.hstack(blocks)


def _preferred(kb: KnowledgeBase, candidate: Candidate) -> str:
    concept = kb.get(candidate.concept_id)
    return concept.preferred_name if concept is not None else candidate.name


def _base_rows(
    query: MentionQuery,
    candidates: Sequence[Candidate],
    missing: Sequence[bool],
    forms: NameForms,
    tfidf: np.ndarray,
    prior: AnnotationPrior,
    use_cross_encoder: bool,
) -> np.ndarray:
    """The columns of BASE_FEATURES: retriever and TF-IDF scores, name matches, the prior."""
    rows = np.zeros((len(candidates), len(BASE_FEATURES)), dtype=np.float64)
    ids = [c.concept_id for c in candidates]
    proposed = [c.retriever_score for c, m in zip(candidates, missing, strict=True) if not m]
    floor = min(proposed) if proposed else 0.0
    top = max(proposed) if proposed else 0.0
    rescnn = np.array(
        [floor if m else c.retriever_score for c, m in zip(candidates, missing, strict=True)],
        dtype=np.float64,
    )
    texts = {q.casefold().strip() for q in (query.text, *query.queries)}
    normalized = {normalize_name(q) for q in (query.text, *query.queries)}
    evidence = prior.evidence(query.queries[0] if query.queries else query.text, ids, query.doc_id)
    rank = 0
    for i, (candidate, is_missing) in enumerate(zip(candidates, missing, strict=True)):
        exact, normal = forms.of(candidate)
        ce = candidate.reranker_score if use_cross_encoder else None
        rank += not is_missing
        found = evidence[i]
        rows[i] = (
            rescnn[i],
            top - rescnn[i],
            0.0 if is_missing else 1.0 / rank,
            float(is_missing),
            tfidf[i],
            float(tfidf.max()) - tfidf[i],
            0.0 if ce is None else float(ce),
            float(ce is not None),
            float(not exact.isdisjoint(texts)),
            float(not normal.isdisjoint(normalized)),
            found.probability,
            log_count(found.string_count),
            float(found.is_top),
            float(found.string_count == 0),
            float(query.expanded),
            log_count(found.concept_count),
        )
    return rows
