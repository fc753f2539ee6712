"""`Linker`: retrieve -> rerank for a batch of documents; the one entry point the front ends call.

Mention text is prepared as the retriever was evaluated: abbreviations defined in the same document
are expanded, and a composite mention ("breast and ovarian cancer") is also searched part by part, the
parts' candidates merged in by best score so each named concept can surface.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from core.documents import Candidate, Document
from core.errors import CuralinkError
from core.kb.knowledge_base import KnowledgeBase
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress
from core.rerank.base import Reranker
from core.retrieve.base import Retriever
from core.retrieve.mentions import abbreviation_expander, split_composite

log = logging.getLogger(__name__)

DEFAULT_CANDIDATES = 16


@dataclass
class LinkSummary:
    documents: int = 0
    mentions: int = 0
    suggestions: int = 0
    seconds: float = 0.0

    @property
    def mentions_per_s(self) -> float:
        return self.mentions / self.seconds if self.seconds else 0.0


class Linker:
    def __init__(
        self,
        retriever: Retriever,
        reranker: Reranker | None = None,
        *,
        candidates: int = DEFAULT_CANDIDATES,
        retriever_version: str = "",
        reranker_version: str = "",
    ):
        self.retriever = retriever
        self.reranker = reranker
        self.candidates = candidates
        self.retriever_version = retriever_version
        self.reranker_version = reranker_version

    @property
    def device_description(self) -> str:
        retriever = "retriever: CPU"
        if self.reranker is None:
            return f"{retriever}; reranker: not trained"
        return f"{retriever}; reranker: {self.reranker.device_description}"

    @classmethod
    def for_project(
        cls,
        project,
        *,
        kb: KnowledgeBase | None = None,
        device: str = "auto",
        candidates: int = DEFAULT_CANDIDATES,
        use_reranker: bool = True,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken = NEVER_CANCELLED,
    ) -> Linker:
        """The project's active models, with the name index loaded from (or built into) index/."""
        from core.rerank.cross_encoder import CrossEncoder
        from core.rerank.reranker import CrossEncoderReranker
        from core.retrieve.rescnn_retriever import RescnnRetriever

        active = project.active_model("retriever")
        if active is None:
            raise CuralinkError(
                f"{project.path}: no trained retriever yet (run `curalink -p {project.path} train retriever`)"
            )
        kb = kb if kb is not None else project.knowledge_base()
        if len(kb) == 0:
            raise CuralinkError(
                f"{project.path}: the knowledge base is empty (run `curalink kb import` first)"
            )
        retriever = RescnnRetriever.load(Path(active.path), index_dir=project.index_dir)
        retriever.index(kb, progress=progress, cancel=cancel)
        reranker = None
        reranker_version = ""
        ranked = project.active_model("reranker") if use_reranker else None
        if ranked is not None:
            reranker = CrossEncoderReranker(CrossEncoder.load(Path(ranked.path)), device=device)
            reranker_version = ranked.version
            log.info("reranker %s on %s", ranked.version, reranker.device_description)
        return cls(
            retriever,
            reranker,
            candidates=candidates,
            retriever_version=active.version,
            reranker_version=reranker_version,
        )

    def suggest(self, documents: Sequence[Document]) -> list[list[list[Candidate]]]:
        """Per document, per mention: ranked candidates (reranked when a reranker is loaded)."""
        queries: dict[str, None] = {}
        plans: list[list[list[str]]] = []
        for document in documents:
            expand = abbreviation_expander(document)
            per_document = []
            for mention in document.mentions:
                text = expand(mention.text) or mention.text
                parts = [text, *[p for p in split_composite(text) if p != text]]
                per_document.append(parts)
                queries.update(dict.fromkeys(parts))
            plans.append(per_document)
        texts = list(queries)
        found = (
            dict(zip(texts, self.retriever.retrieve(texts, self.candidates), strict=True)) if texts else {}
        )
        candidates = [[_merge([found[p] for p in parts], self.candidates) for parts in doc] for doc in plans]
        if self.reranker is not None and any(any(doc) for doc in candidates):
            candidates = self.reranker.rerank(documents, candidates)
        return candidates

    def link_project(
        self,
        project,
        *,
        split: str | None = None,
        ids: Sequence[str] | None = None,
        batch_documents: int = 32,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken = NEVER_CANCELLED,
    ) -> LinkSummary:
        """Suggest for every mention of the selected documents and store the suggestions."""
        summary = LinkSummary()
        started = time.perf_counter()
        selected = list(project.documents_with_mention_ids(split, ids=ids))
        for first in range(0, len(selected), batch_documents):
            cancel.raise_if_cancelled()
            batch = selected[first : first + batch_documents]
            suggestions = self.suggest([document for document, _ in batch])
            by_mention = {
                mention_id: ranked
                for (_, mention_ids), per_document in zip(batch, suggestions, strict=True)
                for mention_id, ranked in zip(mention_ids, per_document, strict=True)
            }
            summary.suggestions += project.store_suggestions(
                by_mention, retriever_version=self.retriever_version, reranker_version=self.reranker_version
            )
            summary.documents += len(batch)
            summary.mentions += len(by_mention)
            progress(summary.documents, len(selected), "documents linked")
        summary.seconds = time.perf_counter() - started
        return summary


def _merge(lists: Sequence[Sequence[Candidate]], k: int) -> list[Candidate]:
    """One list per concept, keeping each concept's best retriever score across the query parts."""
    if len(lists) == 1:
        return list(lists[0][:k])
    best: dict[str, Candidate] = {}
    for candidates in lists:
        for candidate in candidates:
            kept = best.get(candidate.concept_id)
            if kept is None or candidate.retriever_score > kept.retriever_score:
                best[candidate.concept_id] = replace(candidate)
    return sorted(best.values(), key=lambda c: c.retriever_score, reverse=True)[:k]
