"""`curalink bench quality`: one table of every suggestion source on NCBI-disease test against MEDIC.

Every row runs the desk's own path: a `Linker` (core.pipeline) plans each mention with the one query
plan (abbreviations, composite parts merged by rank) and retrieves `CANDIDATES` concepts; the ranker
rows add TF-IDF's union and the annotation prior exactly as `RankingStage` does when linking. Each row
is measured twice: with MEDIC alone and with the train+dev mention strings added to the dictionary
(the papers' protocol, core.evaluate.retrieval.with_mention_synonyms).

Choices, stated because the issue is silent on them:
- "ResCNN + TF-IDF union": ResCNN's top 20 plus TF-IDF's top 8 concepts it missed, ordered by the sum
  of the two cosines (a candidate ResCNN did not propose takes ResCNN's lowest listed score, as the
  ranker's features do). `pool` is the share of mentions whose gold is anywhere in the candidate pool.
- The learned ranker is fitted once, on the train split (NCBI train: what a project's `train ranker`
  learns from) with MEDIC alone as the dictionary (their own strings in the dictionary would make every
  training mention an exact match), its prior left-one-document-out; it is applied in both settings
  with the prior of all its training documents. Fitted on train+dev instead it scored 1.56 points
  lower acc@1 (86.88 vs 88.44, MEDIC alone, retriever v2 of the measuring project).
- The calibration figures (top-1 ECE, bulk accept precision/coverage) are the ranker's, per setting.
- mentions/s counts retrieval (+ ranking) of the test mentions, not building the name index.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.documents import Candidate, Document
from core.evaluate.retrieval import mention_pairs, with_mention_synonyms
from core.jobs.models.ranker import BULK_THRESHOLDS, DEFAULT_TFIDF_UNION, fit_for_documents, order_metrics
from core.kb.knowledge_base import KnowledgeBase
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from core.rank.calibration import expected_calibration_error, precision_coverage
from core.rank.features import FEATURE_NAMES, NameSimilarity
from core.rank.stage import RankingStage, annotation_prior

log = logging.getLogger(__name__)

CANDIDATES = 20
SETTINGS = ("medic", "medic+traindev")
CURVE_THRESHOLDS = tuple(round(t, 3) for t in np.linspace(0.0, 1.0, 101))
_RESCNN = FEATURE_NAMES.index("rescnn_score")
_TFIDF = FEATURE_NAMES.index("tfidf_score")


@dataclass
class QualityInputs:
    """The dictionary, the documents whose strings join it, the test documents, and the documents the
    ranker is fitted on and takes its prior from (default: `train_documents`)."""

    kb: KnowledgeBase
    train_documents: list[Document]
    test_documents: list[Document]
    ranker_documents: list[Document] | None = None


def linked_only(documents: Sequence[Document]) -> list[Document]:
    """Each document with only its gold-linked mentions (what is scored); documents without any dropped."""
    out = []
    for document in documents:
        linked = [m for m in document.mentions if m.concept_ids]
        if linked:
            out.append(document.with_mentions(linked))
    return out


def dictionaries(inputs: QualityInputs) -> dict[str, KnowledgeBase]:
    """MEDIC alone, and MEDIC with the train+dev mention strings as synonyms."""
    extended = with_mention_synonyms(inputs.kb, mention_pairs(inputs.train_documents))
    return {"medic": inputs.kb, "medic+traindev": extended}


def score_row(
    documents: Sequence[Document],
    ranked: Sequence[Sequence[Sequence[Candidate]]],
    kb: KnowledgeBase,
    seconds: float,
    train_seconds: float | None,
) -> dict:
    """acc@1/5, recall@20 of the top 20, pool (gold anywhere in the list), mentions/s, training time."""
    top = [[found[:CANDIDATES] for found in per_document] for per_document in ranked]
    metrics, _, _ = order_metrics(documents, top, kb)
    metrics["pool"] = round(100 * _found_anywhere(documents, ranked, kb), 2)
    metrics["mentions_per_s"] = round(metrics["mentions"] / seconds, 1) if seconds > 0 else None
    metrics["train_s"] = None if train_seconds is None else round(train_seconds, 1)
    return metrics


def _found_anywhere(documents, ranked, kb: KnowledgeBase) -> float:
    hits = total = 0
    for document, per_document in zip(documents, ranked, strict=True):
        for mention, found in zip(document.mentions, per_document, strict=True):
            gold = {i for concept_id in mention.concept_ids for i in kb.ids_of(concept_id)}
            total += 1
            hits += any(kb.ids_of(c.concept_id) & gold for c in found)
    return hits / total if total else 0.0


def fused_union(
    linker, stage: RankingStage, documents: Sequence[Document], retrieved, union: int = DEFAULT_TFIDF_UNION
) -> list[list[list[Candidate]]]:
    """ResCNN's candidates plus TF-IDF's `union` missed concepts, ordered by ResCNN + TF-IDF cosine.

    `stage` supplies the TF-IDF union and scores; its prior should be empty (no prior concepts added)."""
    flat_queries = [q for per_document in linker.plan(documents) for q in per_document]
    flat = [list(found) for per_document in retrieved for found in per_document]
    featured = iter(stage.features(flat_queries, flat, use_cross_encoder=False, union=union))
    out = []
    for per_document in retrieved:
        ranked_document = []
        for _ in per_document:
            merged, rows = next(featured)
            order = np.argsort(-(rows[:, _RESCNN] + rows[:, _TFIDF]), kind="stable") if len(merged) else []
            ranked_document.append([merged[i] for i in list(order)])
        out.append(ranked_document)
    return out


def calibration_figures(documents, ranked, kb: KnowledgeBase, thresholds=BULK_THRESHOLDS) -> dict:
    """Top-1 ECE on these documents and bulk accept precision/coverage at each threshold."""
    _, right, probability = order_metrics(documents, ranked, kb)
    return {
        "top1_ece": round(expected_calibration_error(probability, right), 4),
        "bulk_accept": [precision_coverage(probability, right, t) for t in thresholds],
        "curve": [precision_coverage(probability, right, t) for t in CURVE_THRESHOLDS],
    }


def _timed(function, *args):
    started = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - started


def quality_table(
    inputs: QualityInputs,
    retrievers: dict,
    *,
    rescnn: str | None = "rescnn",
    train_seconds: dict[str, float] | None = None,
    with_ranker: bool = True,
    ranker_model=None,
    cross_encoder=None,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    """{"rows": {row: {setting: metrics}}, "calibration": {setting: figures}, "ranker": {...}}.

    `retrievers` maps a row name to an unindexed `Retriever`; `rescnn` names the one the union, the
    ranker and the cross-encoder rows build on (None: those rows are left out)."""
    from core.pipeline import Linker

    train_seconds = train_seconds or {}
    test = linked_only(inputs.test_documents)
    train = linked_only(
        inputs.ranker_documents if inputs.ranker_documents is not None else inputs.train_documents
    )
    kbs = dictionaries(inputs)
    rows: dict[str, dict[str, dict]] = {}
    calibration: dict[str, dict] = {}
    ranker_info: dict = dict(ranker_model.metrics, loaded=True) if ranker_model is not None else {}
    steps = len(SETTINGS) * (len(retrievers) + 1)
    done = 0
    for setting in SETTINGS:
        kb = kbs[setting]
        for name, retriever in retrievers.items():
            cancel.raise_if_cancelled()
            progress(done, steps, f"{name}, {setting}: indexing")
            retriever.index(kb, cancel=cancel)
            linker = Linker(retriever, candidates=CANDIDATES)
            retrieved, seconds = _timed(linker.retrieve, test)
            rows.setdefault(name, {})[setting] = score_row(
                test, retrieved, kb, seconds, train_seconds.get(name)
            )
            done += 1
            if name != rescnn:
                continue
            similarity = NameSimilarity(kb)  # the TF-IDF index: built once, outside the timings
            plain = RankingStage(None, kb, annotation_prior([]), similarity)
            union, union_s = _timed(fused_union, linker, plain, test, retrieved)
            rows.setdefault(f"{name} + tfidf union", {})[setting] = score_row(
                test, union, kb, seconds + union_s, train_seconds.get(name)
            )
            if with_ranker:
                if ranker_model is None:  # SETTINGS[0]: fitted against MEDIC alone (module docstring)
                    progress(done, steps, "fitting the ranker")
                    ranker_model = fit_for_documents(
                        linker, inputs.kb, train, use_cross_encoder=False, cancel=cancel
                    )
                    ranker_info = dict(ranker_model.metrics)
                stage = RankingStage(ranker_model, kb, annotation_prior(train), similarity)
                started = time.perf_counter()
                ranked = stage.rank(linker.plan(test), retrieved, CANDIDATES, cancel=cancel)
                rank_s = time.perf_counter() - started
                label = f"{name} + tfidf union + ranker"
                rows.setdefault(label, {})[setting] = score_row(
                    test,
                    ranked,
                    kb,
                    seconds + rank_s,
                    (train_seconds.get(name) or 0.0) + ranker_model.metrics.get("train_seconds", 0.0),
                )
                rows[label][setting]["ranker_train_s"] = ranker_model.metrics.get("train_seconds")
                calibration[setting] = calibration_figures(test, ranked, kb)
            if cross_encoder is not None:
                ce = linker_with(retriever, cross_encoder)
                reranked, ce_s = _timed(ce.rank, test, retrieved)
                rows.setdefault(f"{name} + cross-encoder", {})[setting] = score_row(
                    test, reranked, kb, seconds + ce_s, train_seconds.get("cross-encoder")
                )
        done += 1
    progress(steps, steps, "quality table done")
    return {
        "candidates": CANDIDATES,
        "tfidf_union": DEFAULT_TFIDF_UNION,
        "test_mentions": sum(len(d.mentions) for d in test),
        "ranker": ranker_info,
        "rows": rows,
        "calibration": calibration,
    }


def linker_with(retriever, reranker):
    """A linker whose `rank` runs the given cross-encoder reranker (pure order: fusion weight 0)."""
    from core.pipeline import Linker

    reranker.fusion_weight = 0.0
    return Linker(retriever, reranker, candidates=CANDIDATES)


def run_quality(
    data_dir: str | Path,
    *,
    retriever_dir: str | Path | None = None,
    train_out: str | Path | None = None,
    epochs: int = 10,
    biencoder: bool = True,
    cross_encoder_dir: str | Path | None = None,
    ranker_dir: str | Path | None = None,
    device: str = "auto",
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    """Load (`retriever_dir`) or train (into `train_out`, a fixed `epochs` on NCBI train+dev and MEDIC
    synonyms, no time limit) the ResCNN, then build the table with every baseline."""
    from bench.ncbi_retrieval import load_ncbi_inputs, train_ncbi_rescnn
    from core.formats.pubtator import read
    from core.retrieve.exact import ExactMatchRetriever
    from core.retrieve.tfidf import TfidfRetriever

    kb, train, test = load_ncbi_inputs(data_dir)
    ranker_documents = list(read(Path(data_dir) / "ncbi-disease" / "NCBItrainset_corpus.txt"))
    retrievers: dict = {"exact": ExactMatchRetriever(), "tfidf": TfidfRetriever()}
    if biencoder:
        from core.retrieve.biencoder import BiEncoderRetriever

        retrievers["biencoder (MiniLM)"] = BiEncoderRetriever()
    seconds: dict[str, float] = {}
    stopping = ""
    if retriever_dir is None:
        if train_out is None:
            raise ValueError("pass a trained ResCNN folder or a folder to train one into")
        trained = train_ncbi_rescnn(
            kb, train, train_out, epochs=epochs, max_seconds=None, progress=progress, cancel=cancel
        )
        retriever_dir = train_out
        seconds["rescnn"] = trained.seconds
        stopping = f"trained here: {epochs} epochs (no time limit), {trained.steps} steps"
    else:
        stopping = f"loaded from {retriever_dir} (train_s: from its metrics.json)"
        recorded = _recorded_seconds(Path(retriever_dir))
        if recorded is not None:
            seconds["rescnn"] = recorded
    from core.retrieve.rescnn_retriever import RescnnRetriever

    retrievers["rescnn"] = RescnnRetriever.load(Path(retriever_dir))
    cross_encoder = None
    if cross_encoder_dir is not None:
        from core.rerank.cross_encoder import CrossEncoder
        from core.rerank.reranker import CrossEncoderReranker

        cross_encoder = CrossEncoderReranker(CrossEncoder.load(Path(cross_encoder_dir)), device=device)
    ranker_model = None
    if ranker_dir is not None:
        from core.rank.model import RankerModel

        ranker_model = RankerModel.load(Path(ranker_dir))
    result = quality_table(
        QualityInputs(kb, train, test, ranker_documents),
        retrievers,
        train_seconds=seconds,
        ranker_model=ranker_model,
        cross_encoder=cross_encoder,
        progress=progress,
        cancel=cancel,
    )
    result["rescnn"] = stopping
    result["cross_encoder"] = str(cross_encoder_dir) if cross_encoder_dir else "none given (row left out)"
    return result


def _recorded_seconds(folder: Path) -> float | None:
    """The training time a saved ResCNN folder recorded (`train_seconds` or `seconds`), if any."""
    import json

    try:
        metrics = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = metrics.get("train_seconds", metrics.get("seconds")) if isinstance(metrics, dict) else None
    return float(value) if isinstance(value, int | float) else None


def plot_bulk_accept(calibration: dict, path: str | Path, title: str = "") -> Path:
    """Precision against coverage of bulk accept as the threshold moves, one curve per setting."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6.4, 4.6))
    for setting, figures in calibration.items():
        points = [p for p in figures["curve"] if p["precision"] is not None]
        (line,) = axes.plot([p["coverage"] for p in points], [p["precision"] for p in points], label=setting)
        for point in figures["bulk_accept"]:
            if point["precision"] is not None:
                axes.scatter(point["coverage"], point["precision"], s=14, color=line.get_color())
                axes.annotate(f"p≥{point['threshold']}", (point["coverage"], point["precision"]), fontsize=7)
    axes.axhline(95, color="grey", linestyle=":", linewidth=1)
    axes.axvline(60, color="grey", linestyle=":", linewidth=1)
    axes.set_xlabel("coverage: mentions accepted (%)")
    axes.set_ylabel("precision of accepted top-1 (%)")
    axes.set_title(title or "bulk accept by ranker probability, NCBI-disease test")
    axes.legend(loc="lower left")
    axes.grid(alpha=0.3)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
