"""`evaluate ranker`: the same candidates with and without the ranker on one split's gold, and how
well its probabilities are calibrated (expected calibration error, bulk accept precision/coverage).

Both orders come from the pipeline's own query preparation (`Linker.plan`), so the figures measure
what the desk runs. A mention counts as right at k when a candidate within the top k answers to one
of its gold ids (a composite "A|B" is right with either part).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from core.documents import Candidate, Document
from core.errors import CuralinkError, InputError
from core.evaluate.metrics import first_hit_rank, hit_rate
from core.jobs.models.ranker import DEFAULT_CANDIDATES, KIND
from core.kb.knowledge_base import KnowledgeBase
from core.progress import NEVER_CANCELLED, CancelToken
from core.project_models import load_ranking_stage
from core.rank.calibration import expected_calibration_error, precision_coverage
from core.rank.held_out import METRICS_KEY

if TYPE_CHECKING:
    from core.store.project import Project

BULK_THRESHOLDS = (0.5, 0.8, 0.9, 0.95, 0.99)


def gold_documents(project: Project, split: str) -> list[Document]:
    """The split's documents with only their gold-linked mentions."""
    out = []
    for document in project.documents.documents(split):
        linked = [m for m in document.mentions if m.concept_ids and m.origin in ("gold", "imported")]
        if linked:
            out.append(document.with_mentions(linked))
    return out


def order_metrics(
    documents: Sequence[Document], ranked: Sequence[Sequence[Sequence[Candidate]]], kb: KnowledgeBase
) -> tuple[dict, list[bool], list[float]]:
    """acc@1/5, recall@20 in percent; per mention whether the top-1 is right and its score."""
    ranks: list[int | None] = []
    right, scores = [], []
    for document, per_document in zip(documents, ranked, strict=True):
        for mention, found in zip(document.mentions, per_document, strict=True):
            gold = {i for concept_id in mention.concept_ids for i in kb.ids_of(concept_id)}
            rank = first_hit_rank([kb.ids_of(c.concept_id) for c in found], gold)
            ranks.append(rank)
            right.append(rank == 1)
            scores.append(found[0].score if found else 0.0)
    metrics = {
        "acc@1": round(100 * hit_rate(ranks, 1), 2),
        "acc@5": round(100 * hit_rate(ranks, 5), 2),
        "recall@20": round(100 * hit_rate(ranks, 20), 2),
        "mentions": len(ranks),
    }
    return metrics, right, scores


def evaluate_ranker_for_project(
    project: Project,
    split: str = "test",
    *,
    candidates: int = DEFAULT_CANDIDATES,
    device: str = "auto",
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    from core.project_models import load_linker

    kb = project.kb.knowledge_base()
    if project.models.active_model(KIND) is None:
        raise CuralinkError(
            f"{project.path}: no ranker in force; run `curalink -p {project.path} train ranker`"
        )
    stage, note = load_ranking_stage(project, kb)
    if stage is None:
        raise CuralinkError(note)
    documents = gold_documents(project, split)
    if not documents:
        raise InputError(str(project.path), f"no gold-linked mentions in split {split!r}")
    linker = load_linker(
        project,
        kb=kb,
        device=device,
        candidates=candidates,
        use_reranker=stage.model.uses_cross_encoder,
        use_ranker=False,
        cancel=cancel,
    )
    retrieved = linker.suggest(documents)
    cancel.raise_if_cancelled()
    ranked = stage.rank(linker.plan(documents), retrieved, candidates, cancel=cancel)
    before, _, _ = order_metrics(documents, retrieved, kb)
    after, right, probability = order_metrics(documents, ranked, kb)
    composites = sum(len(m.concept_ids) > 1 for d in documents for m in d.mentions)
    return {
        "split": split,
        "ranker": stage.version,
        "candidates": candidates,
        "composite_mentions": composites,
        "retriever" + (" + cross-encoder" if stage.model.uses_cross_encoder else ""): before,
        "with ranker": after,
        "top1_ece": round(expected_calibration_error(probability, right), 4),
        "bulk_accept": [precision_coverage(probability, right, t) for t in BULK_THRESHOLDS],
        # the held-out bulk-accept curve (101 points) stays in ranker.json; the desk's dialog reads it
        "trained_on": {k: v for k, v in stage.model.metrics.items() if k != METRICS_KEY},
    }
