"""Baseline: character n-gram TF-IDF nearest names (sklearn), exact sparse dot products."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.documents import Candidate
from core.errors import ModelError
from core.kb.knowledge_base import KnowledgeBase
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from core.retrieve.base import ConceptCodes, search_concepts
from core.text.normalize import normalize_name

QUERY_BATCH = 256


class TfidfRetriever:
    """char_wb n-grams (2-3 by default) over normalised names; cosine = dot of L2-normalised rows."""

    name = "tfidf"

    def __init__(self, ngram_range: tuple[int, int] = (2, 3)):
        # imported here: the ranker's features import this module, and the linking process should not
        # pay scikit-learn's 1-2 s import on every desk start when no ranker is in force
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.vectorizer = TfidfVectorizer(
            analyzer="char_wb", ngram_range=ngram_range, dtype=np.float32, sublinear_tf=True
        )
        self.kb: KnowledgeBase | None = None
        self.matrix_t = None

    def index(
        self, kb: KnowledgeBase, *, progress: ProgressFn = no_progress, cancel: CancelToken = NEVER_CANCELLED
    ) -> None:
        self.kb = kb
        self.rows = list(kb.names)
        self.codes = ConceptCodes(self.rows)
        cancel.raise_if_cancelled()
        if not self.rows:
            self.matrix_t = None
            return
        matrix = self.vectorizer.fit_transform([normalize_name(r.name) for r in self.rows])
        self.matrix_t = matrix.T.tocsr()
        progress(len(self.rows), len(self.rows), "n-gram index built")

    def retrieve(self, mentions: Sequence[str], k: int = 64) -> list[list[Candidate]]:
        if self.kb is None:
            raise ModelError("retrieve before index(kb)")
        if self.matrix_t is None:
            return [[] for _ in mentions]
        results: list[list[Candidate]] = []
        for start in range(0, len(mentions), QUERY_BATCH):
            batch = self.vectorizer.transform(
                [normalize_name(m) for m in mentions[start : start + QUERY_BATCH]]
            )
            results.extend(search_concepts(self.kb, self.rows, self._search, batch, k, self.codes))
        return results

    def _search(self, queries, fetch: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact top-`fetch` names by sparse dot product; names sharing no n-gram are left out."""
        scores = (queries @ self.matrix_t).toarray()
        fetch = min(fetch, scores.shape[1])
        top = np.argpartition(-scores, fetch - 1, axis=1)[:, :fetch]
        top = np.sort(top, axis=1)  # ties in name-row order, whatever `fetch` was (argpartition's is not)
        top_scores = np.take_along_axis(scores, top, axis=1)
        order = np.argsort(-top_scores, axis=1, kind="stable")
        ids = np.take_along_axis(top, order, axis=1)
        top_scores = np.take_along_axis(top_scores, order, axis=1)
        return top_scores, np.where(top_scores > 0, ids, -1)
