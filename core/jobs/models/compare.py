"""Old vs new on the held-out slice: the same documents, the same KB, the same metric keys as the CLI."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from core.documents import Candidate, Document
from core.evaluate.metrics import first_hit_rank, hit_rate
from core.evaluate.retrieval import evaluate_retriever
from core.kb.knowledge_base import KnowledgeBase
from core.progress import NEVER_CANCELLED, CancelToken

SMALL_KB_NAMES = 20_000
"""Per-epoch held-out accuracy needs a full re-encoding of the KB each epoch: only for small KBs."""


def retriever_metrics(
    folder: str | Path,
    documents: Sequence[Document],
    kb: KnowledgeBase,
    *,
    index_dir: str | Path | None = None,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    """acc@1/5/10, recall@20/64 of a saved retriever version (its name index cached in `index_dir`)."""
    from core.retrieve.rescnn_retriever import RescnnRetriever

    if not documents:
        return {}
    retriever = RescnnRetriever.load(folder, index_dir=index_dir)
    return evaluate_retriever(retriever, documents, kb, cancel=cancel)


def epoch_evaluator(documents: Sequence[Document], kb: KnowledgeBase):
    """A callback for `finetune_rescnn`: held-out acc@1 of the model being trained (small KBs only)."""
    if not documents or len(kb.names) > SMALL_KB_NAMES:
        return None

    def evaluate(model) -> dict:
        from core.retrieve.encoder import RescnnEncoder
        from core.retrieve.rescnn import load_tokenizer
        from core.retrieve.rescnn_retriever import RescnnRetriever

        encoder = RescnnEncoder(model, load_tokenizer(model.config.base_model), backend="torch")
        metrics = evaluate_retriever(RescnnRetriever(encoder), documents, kb)
        model.train()  # RescnnEncoder put it in eval mode
        return {"acc@1": metrics["acc@1"], "acc@5": metrics["acc@5"]}

    return evaluate


DEV_SAMPLE_NAMES = 20_000
"""Names the per-epoch dev check of `train retriever` encodes at most (about the cost of SMALL_KB_NAMES)."""


def dev_evaluator(
    documents: Sequence[Document], kb: KnowledgeBase, *, max_names: int = DEV_SAMPLE_NAMES, seed: int = 13
):
    """A callback for `train_rescnn`'s early stopping: dev acc@1 and recall@20 of the model being trained, against the
    whole KB when it is small, else against the dev mentions' gold concepts plus a fixed random sample
    of other concepts up to `max_names` names (the same sample every epoch, so epochs compare; the
    figure is higher than against the whole KB and only steers when to stop)."""
    import random

    from core.evaluate.retrieval import evaluation_items
    from core.kb.knowledge_base import KnowledgeBase as KB

    if not documents:
        return None
    target = kb
    if len(kb.names) > max_names:
        gold = {
            resolved
            for item in evaluation_items(documents)
            for part in item.gold
            if (resolved := kb.resolve(part)) is not None
        }
        concepts = [kb.concepts[c] for c in sorted(gold)]
        budget = max_names - sum(len(c.names) for c in concepts)
        others = [c for c in kb if c.concept_id not in gold]
        random.Random(seed).shuffle(others)
        for concept in others:
            if budget <= 0:
                break
            concepts.append(concept)
            budget -= len(concept.names)
        target = KB(concepts)

    def evaluate(model) -> dict:
        from core.retrieve.encoder import RescnnEncoder
        from core.retrieve.rescnn import load_tokenizer
        from core.retrieve.rescnn_retriever import RescnnRetriever

        encoder = RescnnEncoder(model, load_tokenizer(model.config.base_model), backend="torch")
        metrics = evaluate_retriever(RescnnRetriever(encoder), documents, target)
        model.train()
        return {
            "acc@1": metrics["acc@1"],
            "acc@5": metrics["acc@5"],
            "recall@20": metrics["recall@20"],
            "dev_names": len(target.names),
        }

    return evaluate


def ranked_metrics(
    documents: Sequence[Document],
    ranked: Sequence[Sequence[Sequence[Candidate]]],
    kb: KnowledgeBase,
    candidates: int,
) -> dict:
    """acc@1, acc@5 and recall@<candidates> of ranked candidate lists (a reranker's output)."""
    ranks: list[int | None] = []
    for document, per_document in zip(documents, ranked, strict=True):
        for mention, found in zip(document.mentions, per_document, strict=True):
            gold = kb.ids_of(mention.concept_id)
            ranks.append(first_hit_rank([kb.ids_of(c.concept_id) for c in found], gold))
    if not ranks:
        return {}
    return {
        "acc@1": round(100 * hit_rate(ranks, 1), 2),
        "acc@5": round(100 * hit_rate(ranks, 5), 2),
        f"recall@{candidates}": round(100 * hit_rate(ranks, candidates), 2),
        "mentions": len(ranks),
    }
