"""`curalink bench cross-encoder-feature`: does the packed cross-encoder earn its place as a ranker
feature (issue 25, item 7)?

NCBI-disease against MEDIC 2012 (with CTD's tree numbers, as the other NCBI benches). In two steps, so a
GPU machine needs neither the retriever's index nor faiss:

1. `--save-candidates FILE --retriever DIR` (any machine): the ResCNN's top 20 for every query string the
   one query plan makes of the train, dev and test mentions, as a candidate file
   (core.retrieve.candidate_file).
2. `--candidates FILE`: the compact cross-encoder is trained from the base model on NCBI train with the
   product's trainer (listwise loss, early stopping on dev: no dev acc@1 gain for `patience` epochs, or
   `max_epochs`), its fusion weight chosen on dev as `train reranker` does; then four rankers are fitted
   and every row is measured on NCBI test:

   - fitted on train, without and with the cross-encoder's score: the product's `train ranker` and
     `train ranker --with-reranker`. The cross-encoder trained on these very mentions, so its score on
     them is better than on new text and the ranker may lean on it too much;
   - fitted on dev, without and with it: the cross-encoder never trained on dev (it only stopped on it),
     so this pair compares the feature without that leak, on fewer mentions.

   Every ranker takes its annotation prior from train + dev (left out per document, as linking does) and
   is applied to test with the same prior, as a project with train and dev gold links its test split.
   Choices (early stopping, fusion weight) are made on dev; test is measured only.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path

from bench.quality import calibration_figures, linked_only
from core.documents import Candidate, Document
from core.jobs.models.ranker import DEFAULT_CANDIDATES, DEFAULT_TFIDF_UNION, examples, order_metrics
from core.kb.knowledge_base import KnowledgeBase
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from core.rank.features import NameSimilarity
from core.rank.model import RankerModel, fit_ranker
from core.rank.stage import RankingStage, annotation_prior

log = logging.getLogger(__name__)

CANDIDATES = DEFAULT_CANDIDATES
PACKING = "compact"
MAX_LENGTH = 256
SPLIT_FILES = {
    "train": "NCBItrainset_corpus.txt",
    "dev": "NCBIdevelopset_corpus.txt",
    "test": "NCBItestset_corpus.txt",
}


def ncbi_splits(
    data_dir: str | Path, limit: int | None = None
) -> tuple[KnowledgeBase, dict[str, list[Document]]]:
    """MEDIC (+ CTD tree numbers) and the three NCBI-disease splits, gold-linked mentions only.

    `limit`: the first N abstracts of each split (a smoke run of the whole path, not a measurement)."""
    from bench.ncbi_retrieval import load_ncbi_inputs
    from core.formats.pubtator import read

    kb, _, _ = load_ncbi_inputs(data_dir)
    splits = {
        name: linked_only(list(read(Path(data_dir) / "ncbi-disease" / file))[:limit])
        for name, file in SPLIT_FILES.items()
    }
    return kb, splits


def save_inputs(
    data_dir: str | Path, retriever_dir: str | Path, path: str | Path, *, progress: ProgressFn = no_progress
) -> dict:
    """Step 1: the ResCNN's candidates for every query string of the three splits, written to `path`."""
    from core.retrieve.candidate_file import save_candidates
    from core.retrieve.query_plan import query_strings
    from core.retrieve.rescnn_retriever import RescnnRetriever

    kb, splits = ncbi_splits(data_dir)
    retriever = RescnnRetriever.load(Path(retriever_dir))
    retriever.index(kb, progress=progress)
    strings = [s for documents in splits.values() for s in query_strings(documents)]
    save_candidates(path, retriever, kb, strings, CANDIDATES)
    return {"candidates": str(path), "retriever": str(retriever_dir), "query_strings": len(set(strings))}


def _fit(
    linker, kb: KnowledgeBase, documents, prior_documents, similarity, use_ce: bool, candidates=None
) -> RankerModel:
    """A ranker fitted on `documents` as core.jobs.models.ranker.fit_for_documents does, its prior from
    `prior_documents` (fit_for_documents takes the prior from the fitted documents themselves).
    `candidates`: the documents' (reranked) candidates, when not the linker's own suggestions."""
    started = time.perf_counter()
    stage = RankingStage(None, kb, annotation_prior(prior_documents), similarity)
    data = examples(
        stage,
        linker,
        documents,
        linker.suggest(documents) if candidates is None else candidates,
        use_cross_encoder=use_ce,
        union=DEFAULT_TFIDF_UNION,
    )
    model = fit_ranker(data.rows, data.labels, data.groups, mentions=data.mention_of_row)
    model.uses_cross_encoder = use_ce
    model.tfidf_union = DEFAULT_TFIDF_UNION
    model.prior_smoothing = stage.prior.smoothing
    model.metrics = {
        **model.metrics,
        "mentions": data.mentions,
        "fit_seconds": round(time.perf_counter() - started, 1),
    }
    return model


def _row(
    documents, ranked: Sequence[Sequence[Sequence[Candidate]]], kb: KnowledgeBase, calibrated: bool
) -> dict:
    metrics, _, _ = order_metrics(documents, ranked, kb)
    if calibrated:
        figures = calibration_figures(documents, ranked, kb)
        metrics["top1_ece"] = figures["top1_ece"]
        metrics["bulk_accept"] = figures["bulk_accept"]
    return metrics


def _train_encoder(base_model, train_docs, train_c, dev_docs, dev_c, kb, config, device, cancel):
    """A compact cross-encoder trained with the product's trainer, its fusion weight chosen on dev as
    `train reranker` does: (encoder, training result, dev acc@1 by weight, chosen weight)."""
    from core.rerank.cross_encoder import CrossEncoder
    from core.rerank.fusion import choose_weight
    from core.rerank.reranker import CrossEncoderReranker
    from core.rerank.training import ranked_accuracy, train

    encoder = CrossEncoder.from_base(base_model, packing=PACKING, max_length=MAX_LENGTH)
    trained = train(encoder, train_docs, train_c, dev_docs, dev_c, kb, config, device=device, cancel=cancel)
    pure = CrossEncoderReranker(encoder, device=device, fusion_weight=0.0)
    weight, table = choose_weight(pure.rerank(dev_docs, dev_c), lambda r: ranked_accuracy(dev_docs, r, kb))
    encoder.config.fusion_weight = weight
    return encoder, trained, table, weight


def _training(trained, table, weight) -> dict:
    return {
        "epochs": round(trained.epochs, 3),
        "stopped_by": trained.stopped_by,
        "train_seconds": round(trained.train_seconds, 1),
        "train_mentions": trained.train_mentions,
        "dev_acc@1_alone": round(100 * table[0.0], 2),
        "dev_acc@1_fused": round(100 * table[weight], 2),
        "fusion_weight": weight,
    }


def cross_fitted_candidates(
    base_model, train_docs, train_c, dev_docs, dev_c, kb, config, device, folds: int, cancel
) -> tuple[list, list[dict]]:
    """Train's candidates scored out of fold: fold f (every `folds`-th abstract) by a cross-encoder
    trained on the other folds, so no training mention is scored by a model that learnt it."""
    from core.rerank.reranker import CrossEncoderReranker

    scored: list = [None] * len(train_docs)
    report = []
    for fold in range(folds):
        held = [i for i in range(len(train_docs)) if i % folds == fold]
        kept = [i for i in range(len(train_docs)) if i % folds != fold]
        encoder, trained, table, weight = _train_encoder(
            base_model,
            [train_docs[i] for i in kept],
            [train_c[i] for i in kept],
            dev_docs,
            dev_c,
            kb,
            config,
            device,
            cancel,
        )
        reranked = CrossEncoderReranker(encoder, device=device).rerank(
            [train_docs[i] for i in held], [train_c[i] for i in held]
        )
        for i, found in zip(held, reranked, strict=True):
            scored[i] = found
        report.append(_training(trained, table, weight) | {"fold": fold, "held_out_documents": len(held)})
    return scored, report


def run(
    data_dir: str | Path,
    candidates_path: str | Path,
    *,
    base_model: str | Path | None = None,
    device: str = "auto",
    max_epochs: int = 16,
    patience: int = 3,
    max_seconds: float | None = None,
    learning_rate: float | None = None,
    limit: int | None = None,
    cross_fit: int = 0,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    """Step 2: train the cross-encoder, fit the four rankers (five with `cross_fit` folds: train's
    cross-encoder scores out of fold), measure every row on test."""
    from core.pipeline import Linker
    from core.rerank.reranker import CrossEncoderReranker
    from core.rerank.training import TrainingConfig
    from core.retrieve.candidate_file import CandidateFileRetriever

    kb, splits = ncbi_splits(data_dir, limit)
    train_docs, dev_docs, test_docs = splits["train"], splits["dev"], splits["test"]
    retriever = CandidateFileRetriever(candidates_path)
    retriever.index(kb)
    plain = Linker(retriever, candidates=CANDIDATES)
    progress(0, 7, "training the cross-encoder")
    config = TrainingConfig(max_seconds=max_seconds, max_epochs=max_epochs, patience=patience)
    if learning_rate is not None:
        config.learning_rate = learning_rate
    dev_c = plain.retrieve(dev_docs)
    encoder, trained, table, weight = _train_encoder(
        base_model, train_docs, plain.retrieve(train_docs), dev_docs, dev_c, kb, config, device, cancel
    )
    pure = CrossEncoderReranker(encoder, device=device, fusion_weight=0.0)
    with_ce = Linker(retriever, CrossEncoderReranker(encoder, device=device), candidates=CANDIDATES)
    rows: dict[str, dict] = {
        "retriever (ResCNN)": _row(test_docs, plain.retrieve(test_docs), kb, False),
        "cross-encoder alone": _row(test_docs, pure.rerank(test_docs, plain.retrieve(test_docs)), kb, False),
        f"cross-encoder fused (w={weight:g})": _row(test_docs, with_ce.suggest(test_docs), kb, False),
    }
    similarity = NameSimilarity(kb)
    prior_documents = train_docs + dev_docs
    step = 1
    for fitted_on, documents in (("train", train_docs), ("dev", dev_docs)):
        for use_ce in (False, True):
            cancel.raise_if_cancelled()
            progress(
                step, 7, f"ranker fitted on {fitted_on}, {'with' if use_ce else 'without'} the cross-encoder"
            )
            linker = with_ce if use_ce else plain
            model = _fit(linker, kb, documents, prior_documents, similarity, use_ce)
            stage = RankingStage(model, kb, annotation_prior(prior_documents), similarity)
            ranked = stage.rank(linker.plan(test_docs), linker.suggest(test_docs), CANDIDATES, cancel=cancel)
            label = f"ranker fitted on {fitted_on}, {'with' if use_ce else 'without'} cross-encoder"
            rows[label] = _row(test_docs, ranked, kb, True) | {
                "fitted_mentions": model.metrics["mentions"],
                "fit_seconds": model.metrics["fit_seconds"],
            }
            step += 1
    folds_report: list[dict] = []
    if cross_fit > 1:
        progress(step, 7, f"ranker fitted on train, cross-encoder scores from {cross_fit} folds")
        scored, folds_report = cross_fitted_candidates(
            base_model,
            train_docs,
            plain.retrieve(train_docs),
            dev_docs,
            dev_c,
            kb,
            config,
            device,
            cross_fit,
            cancel,
        )
        model = _fit(with_ce, kb, train_docs, prior_documents, similarity, True, candidates=scored)
        stage = RankingStage(model, kb, annotation_prior(prior_documents), similarity)
        ranked = stage.rank(with_ce.plan(test_docs), with_ce.suggest(test_docs), CANDIDATES, cancel=cancel)
        rows[f"ranker fitted on train, with cross-encoder ({cross_fit}-fold scores)"] = _row(
            test_docs, ranked, kb, True
        ) | {"fitted_mentions": model.metrics["mentions"], "fit_seconds": model.metrics["fit_seconds"]}
    progress(7, 7, "done")
    return {
        "device": pure.device_description,
        "base_model": encoder.config.base_model,
        "documents": {name: len(documents) for name, documents in splits.items()},
        "test_mentions": sum(len(d.mentions) for d in test_docs),
        "limit": limit,
        "cross_encoder": {
            "packing": PACKING,
            "candidates": CANDIDATES,
            "learning_rate": config.learning_rate,
            "max_epochs": max_epochs,
            "patience": patience,
            "max_seconds": max_seconds,
            **_training(trained, table, weight),
            "history": trained.history,
        },
        "cross_fit_folds": folds_report,
        "rows": rows,
    }


def render_markdown(result: dict) -> str:
    """The rows as one Markdown table (acc@1, acc@5, top-1 ECE, bulk accept at p >= 0.95)."""
    lines = [
        "| row | acc@1 | acc@5 | recall@20 | top-1 ECE | p >= 0.95: coverage / precision |",
        "|---|---|---|---|---|---|",
    ]
    for name, row in result["rows"].items():
        accept = next((b for b in row.get("bulk_accept", []) if abs(b["threshold"] - 0.95) < 1e-9), None)
        cell = "-"
        if accept and accept["precision"] is not None:
            cell = f"{accept['coverage']:.2f} / {accept['precision']:.2f} %"
        ece = f"{row['top1_ece']:.3f}" if "top1_ece" in row else "-"
        lines.append(
            f"| {name} | {row['acc@1']:.2f} | {row['acc@5']:.2f} | {row['recall@20']:.2f} | {ece} | {cell} |"
        )
    return "\n".join(lines)
