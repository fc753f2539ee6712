"""Does uncertainty-first curation teach the retriever faster than random order? (NCBI-disease, MEDIC)

A simulated curator accepts the gold link of every mention of the next `step` documents of a pool of
NCBI train documents, in queue order; the retriever is then fine-tuned from its current weights on
everything curated so far (the `retrain` code path: `finetune_rescnn`) for `epochs_per_retrain` epochs.
After each round, acc@1 is measured on the rest of NCBI train+dev (never curated, the same documents for
both orders; `eval_documents` of them, sampled once). Both orders start from one zero-shot model
trained on KB synonyms only, for `zero_shot_epochs` epochs.

Every training run is bounded by epochs, so the curves do not depend on the machine's load (there is no
dev set to stop early on: the evaluation documents are the test). `seconds_per_retrain` is an optional
cap per training run, off by default. Why 2 retrain epochs and 1 zero-shot epoch: measured on a 2-core
CPU at the default sizes, a step of 256 strings takes ~2.1 s idle; a retrain epoch is 3-4 steps at 40
documents and 10 at 200 (142 steps over the ten retrains at 2 epochs), a zero-shot epoch 16 steps (~36 s).
With these defaults the whole run took 524 s there under load (load average 2-6), inside the ~10
minutes the sizes below aim at; every retrain sees each curated pair at least twice (6-20 steps, where
the old 20 s budget gave 4-8 under load).

To fit ~10 minutes on a 2-core CPU the dictionary is a MEDIC slice: every concept linked in the pool or
the evaluation documents plus random other MEDIC concepts up to `kb_concepts` (re-encoding all 73k MEDIC names
after every retrain alone takes one to two minutes there); `kb_concepts=None` uses all of MEDIC.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from core.documents import Document
from core.kb.identifiers import split_ids
from core.kb.knowledge_base import KnowledgeBase
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress
from core.retrieve.query_plan import plan_document, plan_documents, retrieve_planned

if TYPE_CHECKING:
    from core.retrieve.train import TrainResult

log = logging.getLogger(__name__)

ORDERS = ("uncertainty", "random")
CANDIDATES = 16
EPOCHS_PER_RETRAIN = 2  # see the module docstring for why
ZERO_SHOT_EPOCHS = 1


def _linked(documents: Sequence[Document], kb: KnowledgeBase) -> list[Document]:
    """Documents keeping their single-concept gold mentions the KB knows (what a curator can accept)."""
    kept = []
    for document in documents:
        mentions = [
            m.with_link(kb.resolve(m.concept_ids[0]))
            for m in document.mentions
            if len(m.concept_ids) == 1 and kb.resolve(m.concept_ids[0])
        ]
        if mentions:
            kept.append(document.with_mentions(mentions))
    return kept


def _kb_slice(kb: KnowledgeBase, documents: Sequence[Document], size: int | None, rng: random.Random):
    if size is None:
        return kb
    needed = {kb.resolve(i) for d in documents for m in d.mentions for i in split_ids(m.concept_id)}
    needed.discard(None)
    others = sorted(set(kb.concepts) - needed)
    extra = rng.sample(others, max(0, min(len(others), size - len(needed))))
    return KnowledgeBase(kb.concepts[c] for c in sorted(needed) + extra)


def _pairs(documents: Sequence[Document]) -> list[tuple[str, str]]:
    """(query, gold id) as the desk plans each mention; composites are dropped by the trainer."""
    return [
        (plan.query, m.concept_id)
        for d in documents
        for m, plan in zip(d.mentions, plan_document(d), strict=True)
    ]


def _retriever(folder: Path, kb: KnowledgeBase, cancel: CancelToken):
    from core.retrieve.rescnn_retriever import RescnnRetriever

    retriever = RescnnRetriever.load(folder)
    retriever.index(kb, cancel=cancel)
    return retriever


def _order_by_margin(retriever, documents: Sequence[Document]) -> list[Document]:
    from core.learn.ordering import document_margin

    found = retrieve_planned(retriever, plan_documents(documents), CANDIDATES)
    margins = [document_margin(per_document) for per_document in found]
    return [d for _, d in sorted(zip(margins, documents, strict=True), key=lambda pair: pair[0])]


def bench_learning(
    data_dir: str | Path,
    out_dir: str | Path,
    *,
    pool: int = 200,
    step: int = 40,
    epochs_per_retrain: int = EPOCHS_PER_RETRAIN,
    zero_shot_epochs: int = ZERO_SHOT_EPOCHS,
    seconds_per_retrain: float | None = None,
    seed: int = 13,
    kb_concepts: int | None = 1500,
    eval_documents: int | None = 250,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    """Run both orders, write `learning_curves.json` and `learning_curves.png` to `out_dir`, return the curves.

    `seconds_per_retrain` (None: no cap) also caps the zero-shot training; each point and `zero_shot`
    report the steps, epochs, training-loop seconds and what stopped the run; `retrain_seconds` is the
    whole `finetune_rescnn` call (loading and saving too), not re-indexing or evaluation.
    """
    if epochs_per_retrain < 1 or zero_shot_epochs < 1:
        raise ValueError("epochs_per_retrain and zero_shot_epochs must be at least 1")
    from bench.ncbi_retrieval import load_ncbi_inputs
    from core.evaluate.retrieval import evaluate_retriever
    from core.learn.warm_start import finetune_rescnn
    from core.retrieve.rescnn import RescnnConfig
    from core.retrieve.train import TrainOptions, train_rescnn

    started = time.perf_counter()
    out_dir = Path(out_dir)
    models = out_dir / "models"
    models.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    full_kb, train_documents, _test = load_ncbi_inputs(data_dir)
    documents = _linked(train_documents, full_kb)
    pool_documents = rng.sample(documents, min(pool, len(documents)))
    chosen = {d.doc_id for d in pool_documents}
    rest = [d for d in documents if d.doc_id not in chosen]
    if eval_documents is not None and eval_documents < len(rest):
        rest = rng.sample(rest, eval_documents)
    kb = _kb_slice(full_kb, pool_documents + rest, kb_concepts, rng)
    rounds = -(-len(pool_documents) // step)
    total = 1 + 2 * rounds
    log.info(
        "pool %d documents, rest %d, KB %d concepts / %d names",
        len(pool_documents),
        len(rest),
        len(kb),
        len(kb.names),
    )

    base = models / "zero-shot"
    zero_shot = train_rescnn(
        kb,
        [],
        RescnnConfig(),
        base,
        epochs=zero_shot_epochs,
        seed=seed,
        options=TrainOptions(kb_names_per_epoch=4096),
        max_seconds=seconds_per_retrain,
        cancel=cancel,
    )
    base_retriever = _retriever(base, kb, cancel)
    base_acc = evaluate_retriever(base_retriever, rest, kb, reindex=False)
    progress(1, total, f"zero-shot acc@1 {base_acc['acc@1']:.1f}")
    curves: dict[str, list[dict]] = {}
    done = 1
    for order in ORDERS:
        order_rng = random.Random(seed + 1)
        remaining = list(pool_documents)
        if order == "random":
            order_rng.shuffle(remaining)
        retriever, folder = base_retriever, base
        curated: list[Document] = []
        points = [{"documents": 0, "mentions": 0, **_point(base_acc)}]
        for round_number in range(1, rounds + 1):
            cancel.raise_if_cancelled()
            if order == "uncertainty":
                remaining = _order_by_margin(retriever, remaining)
            curated += remaining[:step]
            remaining = remaining[step:]
            folder_next = models / f"{order}-{round_number}"
            retrain_started = time.perf_counter()
            result = finetune_rescnn(
                folder,
                kb,
                _pairs(curated),
                folder_next,
                epochs=epochs_per_retrain,
                max_seconds=seconds_per_retrain,
                seed=seed,
                cancel=cancel,
            )
            retrain_seconds = round(time.perf_counter() - retrain_started, 1)
            folder = folder_next
            retriever = _retriever(folder, kb, cancel)
            metrics = evaluate_retriever(retriever, rest, kb, reindex=False)
            points.append(
                {
                    "documents": len(curated),
                    "mentions": sum(len(d.mentions) for d in curated),
                    **_training(result),
                    "retrain_seconds": retrain_seconds,
                    **_point(metrics),
                }
            )
            done += 1
            progress(done, total, f"{order}: {len(curated)} documents, acc@1 {metrics['acc@1']:.1f}")
        curves[order] = points
    summary = {
        "corpus": "NCBI-disease train+dev (pool from it; evaluation on a sample of the rest), MEDIC 2012",
        "pool_documents": len(pool_documents),
        "rest_documents": len(rest),
        "rest_mentions": base_acc["mentions"],
        "step": step,
        "epochs_per_retrain": epochs_per_retrain,
        "zero_shot_epochs": zero_shot_epochs,
        "seconds_per_retrain": seconds_per_retrain,
        "zero_shot": _training(zero_shot),
        "kb_concepts": len(kb),
        "kb_names": len(kb.names),
        "seed": seed,
        "curves": curves,
        "seconds": round(time.perf_counter() - started, 1),
    }
    (out_dir / "learning_curves.json").write_text(json.dumps(summary, indent=2))
    _plot(summary, out_dir / "learning_curves.png")
    return summary


def _training(result: TrainResult) -> dict:
    """What one training run did: the curves are comparable only if the runs trained alike."""
    return {
        "steps": result.steps,
        "epochs": result.epochs,
        "train_seconds": round(result.seconds, 1),
        "stopped_by": result.stopped_by,
    }


def _point(metrics: dict) -> dict:
    return {"acc@1": metrics["acc@1"], "acc@5": metrics["acc@5"], "recall@20": metrics["recall@20"]}


def _plot(summary: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6, 4), dpi=120)
    axes = figure.add_subplot()
    for order, points in summary["curves"].items():
        axes.plot([p["documents"] for p in points], [p["acc@1"] for p in points], marker="o", label=order)
    axes.set_xlabel("documents curated")
    axes.set_ylabel(f"acc@1 on the other {summary['rest_documents']} documents (%)")
    axes.set_title("NCBI-disease: uncertainty-first vs random order")
    axes.grid(alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path)
