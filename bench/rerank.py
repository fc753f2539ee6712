"""The packed-reranker benchmark (issue 4): accuracy and speed per packing level and candidate count.

On NCBI-disease with candidates from the char n-gram TF-IDF retriever by default (a saved ResCNN
folder or a candidate file can be passed as `retriever`), every packing level is trained to one stated
stopping rule (no dev gain for `PATIENCE` evaluations, or `max_epochs`) and measured on a fixed slice of
test abstracts; or a trained cross-encoder folder is measured as it is (`model`). A wall-clock cap
(`train_seconds`) stays an option, and a row it cut short is marked as such (`trained: false`), never
reported as a trained result; `train_seconds=0` measures speed only (accuracy is left out). Speed counts
the scoring passes only (packing is timed separately), as the paper does (methods.md B.9). Each row
reports acc@1 of the pure reranker and of the retriever-fused score (core.rerank.fusion, weight chosen
on the dev slice) side by side.
"""

from __future__ import annotations

import logging
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

from core.documents import Candidate, Document
from core.formats import pubtator
from core.kb.knowledge_base import KnowledgeBase
from core.kb.medic import read_medic
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from core.rerank.cross_encoder import CrossEncoder
from core.rerank.device import build_engine, choose_engine, select_device
from core.rerank.fusion import choose_weight, refuse
from core.rerank.packing import PACKING_LEVELS
from core.rerank.reranker import CrossEncoderReranker
from core.rerank.training import (
    CPU_TRAIN_BATCH_TOKENS,
    DEFAULT_LEARNING_RATE,
    GPU_TRAIN_BATCH_TOKENS,
    TrainingConfig,
    gold_ids,
    is_correct,
    ranked_accuracy,
    rerank_accuracy,
    train,
)
from core.retrieve.query_plan import plan_documents, query_strings, retrieve_planned

log = logging.getLogger(__name__)

TRAIN_FILE = "NCBItrainset_corpus.txt"
DEV_FILE = "NCBIdevelopset_corpus.txt"
TEST_FILE = "NCBItestset_corpus.txt"
COLUMNS = (
    "packing",
    "candidates",
    "retriever_acc@1",
    "acc@1",
    "acc@1_fused",
    "fusion_weight",
    "train_examples_per_s",
    "mentions_per_s",
    "tokens",
    "token_bound",
    "speedup",
    "of_token_bound",
)


def _candidates(retriever, documents: Sequence[Document], k: int) -> list[list[list[Candidate]]]:
    """Per document, per mention: the merged candidates of its query plan, as the linker retrieves them."""
    return retrieve_planned(retriever, plan_documents(documents), k)


def _top(candidates: Sequence[Sequence[Sequence[Candidate]]], k: int) -> list[list[list[Candidate]]]:
    return [[list(row[:k]) for row in doc] for doc in candidates]


def retriever_accuracy(
    documents: Sequence[Document], candidates: Sequence[Sequence[Sequence[Candidate]]], kb: KnowledgeBase
) -> float:
    total = correct = 0
    for document, per_doc in zip(documents, candidates):
        for mention, row in zip(document.mentions, per_doc):
            if gold_ids(mention):
                total += 1
                correct += bool(row) and is_correct(mention, row[0].concept_id, kb)
    return correct / total if total else 0.0


QUICK = {"speed_docs": 10, "dev_docs": 4, "train_docs": 60, "max_epochs": 2}
FULL = {"speed_docs": 20, "dev_docs": 6, "train_docs": None, "max_epochs": None}
PATIENCE = 3
"""Dev evaluations (one per epoch) without a gain before a row's training stops."""
DEFAULT_MAX_EPOCHS = 16


def _retriever(retriever, kb: KnowledgeBase):
    """ "tfidf" (default), a saved ResCNN folder, a candidate file (.json, core.retrieve.candidate_file),
    or an object with index(kb) / retrieve(mentions, k)."""
    if retriever is None or retriever == "tfidf":
        from core.retrieve.tfidf import TfidfRetriever

        retriever = TfidfRetriever()
    elif isinstance(retriever, (str, Path)) and str(retriever).endswith(".json"):
        from core.retrieve.candidate_file import CandidateFileRetriever

        retriever = CandidateFileRetriever(retriever)
    elif isinstance(retriever, (str, Path)):
        from core.retrieve.rescnn_retriever import RescnnRetriever

        retriever = RescnnRetriever.load(retriever)
    retriever.index(kb)
    return retriever


def run_benchmark(
    ncbi_dir: str | Path,
    medic_path: str | Path,
    *,
    quick: bool = False,
    base_model: str | Path | None = None,
    packings: Sequence[str] = PACKING_LEVELS,
    candidate_counts: Sequence[int] = (8, 16),
    speed_docs: int | None = None,
    dev_docs: int | None = None,
    train_docs_limit: int | None = None,
    train_seconds: float | None = None,
    learning_rate: float = DEFAULT_LEARNING_RATE,
    max_length: int = 256,
    max_batch_tokens: int | None = None,
    engine: str = "torch",
    retriever=None,
    save_candidates_to: str | Path | None = None,
    batch_tokens: int | None = None,
    max_epochs: int | None = None,
    timing_repeats: int = 1,
    model: str | Path | None = None,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    """The issue-4 table: one row per (C, packing level), JSON-ready.

    `quick` shrinks the slices (60 train abstracts, 2 epochs). Accuracy and speed are measured on the
    first `speed_docs` NCBI test abstracts (one accuracy pass, then timed passes); every variant trains
    from the same base model to the same stopping rule (dev patience, `max_epochs`), `train_seconds`
    capping it only when given; `model` (a trained cross-encoder folder) is measured without training,
    at its own packing level.
    `engine` is a CPU engine name or "auto" (measured choice on the first row); `retriever` is "tfidf",
    a saved ResCNN folder, a candidate file, or a built retriever; `save_candidates_to` writes the
    retrieved candidates of all three slices to a candidate file for later runs. `batch_tokens` is the
    training batch size in tokens (default: 1,024 on the CPU, 16,384 on a GPU). The speed columns are the
    median of `timing_repeats` scoring passes per level, taken round-robin over the levels of one C
    after an untimed pass (the accuracy pass, which also warms a GPU up).
    """
    preset = QUICK if quick else FULL
    speed_docs = speed_docs if speed_docs is not None else preset["speed_docs"]
    dev_docs = dev_docs if dev_docs is not None else preset["dev_docs"]
    max_epochs = max_epochs if max_epochs is not None else preset["max_epochs"] or DEFAULT_MAX_EPOCHS
    train_docs_limit = train_docs_limit if train_docs_limit is not None else preset["train_docs"]
    speed_only = train_seconds is not None and train_seconds <= 0
    if model is not None:
        packings = (CrossEncoder.load(model).config.packing,)
    ncbi_dir = Path(ncbi_dir)
    kb = KnowledgeBase(read_medic(medic_path))
    train_docs = [] if model is not None else list(pubtator.read(ncbi_dir / TRAIN_FILE))[:train_docs_limit]
    dev = list(pubtator.read(ncbi_dir / DEV_FILE))[:dev_docs]
    test = list(pubtator.read(ncbi_dir / TEST_FILE))[:speed_docs]
    started = time.perf_counter()
    retriever = _retriever(retriever, kb)
    k = max(candidate_counts)
    if save_candidates_to is not None:
        from core.retrieve.candidate_file import save_candidates

        texts = (q for docs in (train_docs, dev, test) for q in query_strings(docs))
        save_candidates(save_candidates_to, retriever, kb, texts, k)
    all_train, all_dev, all_test = (_candidates(retriever, docs, k) for docs in (train_docs, dev, test))
    log.info("retrieval for the benchmark took %.1f s", time.perf_counter() - started)
    choice = select_device("auto")
    if batch_tokens is None:
        batch_tokens = GPU_TRAIN_BATCH_TOKENS if choice.device == "cuda" else CPU_TRAIN_BATCH_TOKENS
    mentions = sum(1 for d in test for m in d.mentions if gold_ids(m))
    rows: list[dict] = []
    engine_report: list[dict] = []
    engine_name = engine
    total = len(packings) * len(candidate_counts)
    timed: list[tuple[CrossEncoderReranker, list, list[float]]] = []
    for c_count in candidate_counts:
        train_c, dev_c, test_c = _top(all_train, c_count), _top(all_dev, c_count), _top(all_test, c_count)
        base_acc = retriever_accuracy(test, test_c, kb)
        # the engine comparison runs on the first row measured, so start with the cheapest level
        for packing in sorted(packings, key=lambda p: -PACKING_LEVELS.index(p) if p in PACKING_LEVELS else 0):
            cancel.raise_if_cancelled()
            progress(len(rows), total, f"{packing}, C={c_count}: training")
            if model is not None:
                encoder, result = CrossEncoder.load(model), None
            else:
                encoder = CrossEncoder.from_base(base_model, packing=packing, max_length=max_length)
                result = train(
                    encoder,
                    train_docs,
                    train_c,
                    dev,
                    dev_c,
                    kb,
                    TrainingConfig(
                        learning_rate=learning_rate,
                        max_seconds=train_seconds,
                        max_epochs=max_epochs,
                        patience=PATIENCE,
                        batch_tokens=batch_tokens,
                    ),
                    device=choice.device,
                    cancel=cancel,
                )
            reranker = CrossEncoderReranker(
                encoder, device=choice.device, max_batch_tokens=max_batch_tokens, fusion_weight=0.0
            )
            if choice.device == "cpu":
                if engine_name == "auto":
                    engine_report = _compare_engines(reranker, encoder, test, test_c, kb)
                    engine_name = reranker.engine.name
                elif engine_name != "torch":
                    reranker.engine = build_engine(encoder, engine_name, choice)
            progress(len(rows), total, f"{packing}, C={c_count}: measuring")
            dev_ranked = reranker.rerank(dev, dev_c, cancel=cancel)
            weight, weights = choose_weight(dev_ranked, lambda r: ranked_accuracy(dev, r, kb))
            ranked = reranker.rerank(test, test_c, cancel=cancel)  # accuracy; also the warm-up pass
            timed.append((reranker, test_c, []))
            row = {"packing": packing, "candidates": c_count, "retriever_acc@1": round(100 * base_acc, 2)}
            if not speed_only:
                row.update(
                    {
                        "acc@1": round(100 * ranked_accuracy(test, ranked, kb), 2),
                        "acc@1_fused": round(100 * ranked_accuracy(test, refuse(ranked, weight), kb), 2),
                        "fusion_weight": weight,
                        "dev_acc@1": round(100 * weights[0.0], 2),
                        "dev_acc@1_fused": round(100 * weights[weight], 2),
                    }
                )
            row.update(_training(result, model))
            rows.append(row)
            log.info("bench row %s", rows[-1])
        # timed passes, round-robin over this C's levels: a machine that slows down for a while slows
        # every level alike instead of one row, so the ratios hold; each level keeps its median pass
        for _ in range(max(1, timing_repeats)):
            for reranker, candidates_c, seconds in timed:
                cancel.raise_if_cancelled()
                reranker.rerank(test, candidates_c, cancel=cancel)
                seconds.append(reranker.last_stats["score_seconds"])
        for row, (reranker, _, seconds) in zip(rows[len(rows) - len(timed) :], timed):
            stats = reranker.last_stats
            median = statistics.median(seconds)
            row.update(
                {
                    "mentions_per_s": round(mentions / median, 2),
                    "tokens": int(stats["tokens"]),
                    "tokens_per_s": round(stats["tokens"] / median, 1),
                    "pack_seconds": round(stats["pack_seconds"], 2),
                    "inputs": int(stats["inputs"]),
                    "timed_passes": [round(x, 3) for x in seconds],
                }
            )
        timed.clear()
    order = {p: i for i, p in enumerate(packings)}
    rows.sort(key=lambda r: (r["candidates"], order[r["packing"]]))
    for row in rows:
        pair = next(
            (r for r in rows if r["packing"] == "pair" and r["candidates"] == row["candidates"]), None
        )
        row["token_bound"] = round(pair["tokens"] / row["tokens"], 2) if pair else None
        row["speedup"] = round(row["mentions_per_s"] / pair["mentions_per_s"], 2) if pair else None
        row["of_token_bound"] = round(row["speedup"] / row["token_bound"], 3) if pair else None
    progress(total, total, "done")
    return {
        "device": f"{choice.description}, engine {engine_name}",
        "retriever": getattr(retriever, "name", type(retriever).__name__),
        "quick": quick,
        "slice": {"test_docs": len(test), "test_mentions": mentions, "dev_docs": len(dev)},
        "train_seconds_budget": train_seconds,
        "stopping_rule": _stopping_rule(model, speed_only, max_epochs, train_seconds),
        "model": str(model) if model is not None else None,
        "max_length": max_length,
        "train_docs": len(train_docs),
        "learning_rate": learning_rate,
        "batch_tokens": batch_tokens,
        "max_epochs": max_epochs,
        "timing_repeats": timing_repeats,
        "engines": engine_report,
        "rows": rows,
    }


def _training(result, model) -> dict:
    """How a row's model came to be: trained (and what stopped it) or loaded. A row cut by the time
    cap before its stopping rule is `trained: false`: its accuracy is not a trained model's."""
    if result is None:
        return {"trained": True, "stopped_by": f"loaded {Path(model).name}"}
    return {
        "train_examples_per_s": round(result.examples_per_s, 2),
        "train_seconds": round(result.train_seconds, 1),
        "train_epochs": round(result.epochs, 3),
        "train_steps": result.steps,
        "stopped_by": result.stopped_by,
        "trained": result.stopped_by != "max_seconds",
    }


def _stopping_rule(model, speed_only: bool, max_epochs: int, train_seconds: float | None) -> str:
    if model is not None:
        return f"none: the trained model {model} is measured as it is"
    if speed_only:
        return "none: speed only (train_seconds 0), accuracy not measured"
    rule = f"no dev acc@1 gain for {PATIENCE} epochs, at most {max_epochs} epochs"
    return rule + (f", cut at {train_seconds:g} s of wall clock" if train_seconds else "")


def _compare_engines(
    reranker: CrossEncoderReranker, encoder: CrossEncoder, documents, candidates, kb
) -> list[dict]:
    """Measure every CPU engine on the slice (speed and acc@1), then keep the measured choice."""
    sample = reranker.pack(documents, candidates)[:48]
    chosen, report = choose_engine(encoder, sample, reranker.choice, max_tokens=reranker.max_batch_tokens)
    for entry in report:
        if "error" in entry:
            continue
        reranker.engine = build_engine(encoder, str(entry["engine"]), reranker.choice)
        entry["acc@1"] = round(100 * rerank_accuracy(reranker, documents, candidates, kb), 2)
        entry["score_seconds"] = round(reranker.last_stats["score_seconds"], 2)
    reranker.engine = chosen
    return report


def render_markdown(result: dict) -> str:
    lines = [
        f"Device: {result['device']}; retriever: {result['retriever']}; slice: {result['slice']}; "
        f"stopping rule: {result['stopping_rule']}; {result['train_docs']} train docs, "
        f"lr {result['learning_rate']}, window {result['max_length']}",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    cut = False
    for row in result["rows"]:
        cells = [str(row.get(c, "")) for c in COLUMNS]
        if not row.get("trained", True) and "acc@1" in row:
            cut = True
            cells = [f"{cell} †" if c.startswith("acc@1") else cell for c, cell in zip(COLUMNS, cells)]
        lines.append("| " + " | ".join(cells) + " |")
    if cut:
        lines += ["", "† training cut by the time cap before its stopping rule: not a trained result"]
    if result.get("engines"):
        lines += [
            "",
            "| engine | seconds (sample) | top1 agreement | max score change | acc@1 | accepted |",
            "|---|---|---|---|---|---|",
        ]
        for e in result["engines"]:
            lines.append(
                f"| {e.get('engine')} | {e.get('seconds', '')} | {e.get('top1_agreement', '')} | "
                f"{e.get('max_score_change', '')} | {e.get('acc@1', '')} | {e.get('accepted')} |"
            )
    return "\n".join(lines)
