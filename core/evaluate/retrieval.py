"""Evaluate any `Retriever` on annotated documents with the reference protocol (methods.md A.8).

Every gold-linked mention counts (test sets are not deduplicated). Abbreviations are expanded from
the same document first (optional), composite mentions (gold "A|B") are split into sub-terms that
are retrieved separately, and a gold id missing from the KB is simply an error, as in the reference.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass

from core.documents import Document
from core.evaluate.metrics import RECALL_KS, composite_rank, first_hit_rank, ranking_metrics
from core.kb.identifiers import split_ids
from core.kb.knowledge_base import KnowledgeBase
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from core.retrieve.base import Retriever
from core.retrieve.mentions import abbreviation_expander, split_composite

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EvalItem:
    """One gold mention as queried: its sub-term strings and its canonical gold ids."""

    doc_id: str
    text: str
    queries: tuple[str, ...]
    gold: frozenset[str]


def evaluation_items(
    documents: Iterable[Document], *, expand_abbreviations: bool = True, split_composites: bool = True
) -> list[EvalItem]:
    items: list[EvalItem] = []
    for document in documents:
        expand = abbreviation_expander(document) if expand_abbreviations else (lambda text: text)
        for mention in document.mentions:
            gold = frozenset(split_ids(mention.concept_id))
            if not gold:
                continue
            text = expand(mention.text)
            pieces = split_composite(text) if split_composites and mention.is_composite else [text]
            items.append(EvalItem(document.doc_id, mention.text, tuple(pieces), gold))
    return items


def evaluate_retriever(
    retriever: Retriever,
    documents: Iterable[Document],
    kb: KnowledgeBase,
    *,
    expand_abbreviations: bool = True,
    split_composites: bool = True,
    reindex: bool = True,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
    details: list | None = None,
) -> dict:
    """acc@1/5/10, recall@20/64 (percent), mentions, and end-to-end mentions_per_s (excluding indexing).

    `details`, when given, receives one (item, rank, top candidates) triple per mention for error analysis.
    """
    if reindex:
        retriever.index(kb, progress=progress, cancel=cancel)
    items = evaluation_items(
        documents, expand_abbreviations=expand_abbreviations, split_composites=split_composites
    )
    queries = [q for item in items for q in item.queries]
    k = max(RECALL_KS)
    cancel.raise_if_cancelled()
    started = time.perf_counter()
    results = retriever.retrieve(queries, k=k)
    seconds = time.perf_counter() - started
    ids_cache: dict[str, frozenset[str]] = {}

    def ids_of(concept_id: str) -> frozenset[str]:
        if concept_id not in ids_cache:
            ids_cache[concept_id] = frozenset(kb.ids_of(concept_id))
        return ids_cache[concept_id]

    ranks: list[int | None] = []
    cursor = 0
    for item in items:
        piece_ranks = []
        for candidates in results[cursor : cursor + len(item.queries)]:
            piece_ranks.append(first_hit_rank([ids_of(c.concept_id) for c in candidates], set(item.gold)))
        rank = composite_rank(piece_ranks) if len(piece_ranks) > 1 else piece_ranks[0]
        if details is not None:
            details.append((item, rank, results[cursor][:5]))
        cursor += len(item.queries)
        ranks.append(rank)
    metrics = ranking_metrics(ranks)
    metrics["mentions"] = len(items)
    metrics["queries"] = len(queries)
    metrics["mentions_per_s"] = round(len(queries) / seconds, 1) if seconds > 0 else None
    log.info("%s: %s", getattr(retriever, "name", "retriever"), metrics)
    return metrics


def evaluate_project_retriever(project, split: str = "test", *, with_train_strings: bool = False) -> dict:
    """`curalink -p DIR evaluate retriever`: the project's active retriever on one split's gold mentions.

    `with_train_strings` adds the train+dev gold mention strings to the dictionary as synonyms (the
    reference protocol's second setting)."""
    from core.errors import InputError
    from core.evaluate.ncbi_retrieval import mention_pairs, with_mention_synonyms
    from core.retrieve.rescnn_retriever import RescnnRetriever

    kb = project.knowledge_base()
    if len(kb) == 0:
        raise InputError(str(project.path), "the project has no knowledge base; run `kb import` first")
    model = project.active_model("retriever")
    if model is None:
        raise InputError(str(project.path), "no active retriever; run `train retriever` first")
    documents = list(project.documents(split))
    if not documents:
        raise InputError(str(project.path), f"no documents in split {split!r}")
    if with_train_strings:
        train = [d for s in ("train", "dev") for d in project.documents(s)]
        kb = with_mention_synonyms(kb, mention_pairs(train))
    retriever = RescnnRetriever.load(model.path, index_dir=project.index_dir)  # resolved by the registry
    metrics = evaluate_retriever(retriever, documents, kb)
    metrics.update({"split": split, "with_train_strings": with_train_strings, "model": model.version})
    return metrics
