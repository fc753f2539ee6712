"""Evaluate any `Retriever` on annotated documents, through the desk's own query plan.

Every gold-linked mention counts (test sets are not deduplicated). Each mention is planned by
core.retrieve.query_plan (abbreviations expanded from the same document, composite text split, the
parts' answers merged by rank), exactly as the `Linker` does, and its rank is the first candidate of
that merged list answering to a gold id; a composite gold "A|B" is satisfied by either id (the rule of
core.evaluate.metrics). A gold id missing from the KB is simply an error, as in the reference.
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.documents import Document
from core.evaluate.metrics import RECALL_KS, first_hit_rank, ranking_metrics
from core.kb.identifiers import split_ids
from core.kb.knowledge_base import KnowledgeBase
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from core.retrieve.base import Retriever
from core.retrieve.query_plan import QueryPlan, plan_document
from core.retrieve.routed import retrieve_plans

if TYPE_CHECKING:
    from core.store.project import Project

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EvalItem:
    """One gold mention as the desk queries it: its plan and its canonical gold ids."""

    doc_id: str
    text: str
    plan: QueryPlan
    gold: frozenset[str]

    @property
    def queries(self) -> tuple[str, ...]:
        return self.plan.queries


def evaluation_items(documents: Iterable[Document]) -> list[EvalItem]:
    """Every gold-linked mention with its query plan (unlinked and -1 mentions are left out)."""
    items: list[EvalItem] = []
    for document in documents:
        for mention, plan in zip(document.mentions, plan_document(document), strict=True):
            gold = frozenset(split_ids(mention.concept_id))
            if gold:
                items.append(EvalItem(document.doc_id, mention.text, plan, gold))
    return items


def evaluate_retriever(
    retriever: Retriever,
    documents: Iterable[Document],
    kb: KnowledgeBase,
    *,
    reindex: bool = True,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
    details: list | None = None,
    router=None,
) -> dict:
    """acc@1/5/10, recall@20/64 (percent), mentions, and end-to-end mentions_per_s (excluding indexing).

    `details`, when given, receives one (item, rank, top candidates) triple per mention for error analysis.
    `router` (core.kb.routing.TypeRouter): each mention searched among its type's concepts, as the
    `Linker` does.
    """
    if reindex:
        retriever.index(kb, progress=progress, cancel=cancel)
    items = evaluation_items(documents)
    k = max(RECALL_KS)
    cancel.raise_if_cancelled()
    started = time.perf_counter()
    results = retrieve_plans(retriever, [[item.plan for item in items]], k, router)[0]
    seconds = time.perf_counter() - started
    ids_cache: dict[str, frozenset[str]] = {}

    def ids_of(concept_id: str) -> frozenset[str]:
        if concept_id not in ids_cache:
            ids_cache[concept_id] = frozenset(kb.ids_of(concept_id))
        return ids_cache[concept_id]

    ranks: list[int | None] = []
    for item, candidates in zip(items, results, strict=True):
        rank = first_hit_rank([ids_of(c.concept_id) for c in candidates], set(item.gold))
        if details is not None:
            details.append((item, rank, candidates[:5]))
        ranks.append(rank)
    metrics = ranking_metrics(ranks)
    metrics["mentions"] = len(items)
    metrics["queries"] = sum(len(item.queries) for item in items)
    metrics["split_mentions"] = sum(item.plan.is_split for item in items)
    metrics["expanded_mentions"] = sum(item.plan.expanded for item in items)
    metrics["mentions_per_s"] = round(len(items) / seconds, 1) if seconds > 0 else None
    log.debug("%s: %s", getattr(retriever, "name", "retriever"), metrics)  # callers say what they measured
    return metrics


def mention_pairs(documents: Sequence[Document]) -> list[tuple[str, str]]:
    """(query, id) for every single-concept gold mention: the training pairs and train/dev synonyms.

    The query is the mention as the desk plans it (abbreviations expanded, core.retrieve.query_plan),
    as the reference preprocesses train, dev and test mentions alike."""
    pairs: list[tuple[str, str]] = []
    for document in documents:
        for mention, plan in zip(document.mentions, plan_document(document), strict=True):
            ids = split_ids(mention.concept_id)
            if len(ids) == 1 and not mention.is_composite:
                pairs.append((plan.query, ids[0]))
    return pairs


def with_mention_synonyms(kb: KnowledgeBase, pairs: Sequence[tuple[str, str]]) -> KnowledgeBase:
    """A copy of the KB whose concepts also own the training mention strings."""
    extended = copy.deepcopy(kb)
    by_concept: dict[str, list[str]] = {}
    for text, concept_id in pairs:
        resolved = extended.resolve(concept_id)
        if resolved is not None:
            by_concept.setdefault(resolved, []).append(text)
    for concept_id, names in by_concept.items():
        extended.add_names(concept_id, names)
    return extended


def evaluate_project_retriever(
    project: Project,
    split: str = "test",
    *,
    with_train_strings: bool = False,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    """`curalink -p DIR evaluate retriever`: the project's active retriever on one split's gold mentions.

    `with_train_strings` adds the train+dev gold mention strings to the dictionary as synonyms (the
    reference protocol's second setting)."""
    from core.errors import InputError
    from core.kb.routing import TypeRouter
    from core.retrieve.rescnn_retriever import RescnnRetriever

    kb = project.kb.knowledge_base()
    if len(kb) == 0:
        raise InputError(str(project.path), "the project has no knowledge base; run `kb import` first")
    model = project.models.active_model("retriever")
    if model is None:
        raise InputError(str(project.path), "no active retriever; run `train retriever` first")
    documents = list(project.documents.documents(split))
    if not documents:
        raise InputError(str(project.path), f"no documents in split {split!r}")
    if with_train_strings:
        train = [d for s in ("train", "dev") for d in project.documents.documents(s)]
        kb = with_mention_synonyms(kb, mention_pairs(train))
    retriever = RescnnRetriever.load(model.path, index_dir=project.index_dir)  # resolved by the registry
    router = TypeRouter.for_project(project, kb)  # the project's type routes, as the desk searches
    metrics = evaluate_retriever(retriever, documents, kb, router=router, cancel=cancel)
    metrics.update({"split": split, "with_train_strings": with_train_strings, "model": model.version})
    if router.unrouted:
        metrics["unrouted_types"] = dict(router.unrouted)
    return metrics
