"""The packed-reranker benchmark (issue 4): accuracy and speed per packing level and candidate count.

On NCBI-disease with candidates from the char n-gram TF-IDF retriever (core.retrieve.tfidf; ResCNN can
replace it through the `retriever` argument), every packing level is trained on a time budget and
measured on a fixed slice of test abstracts, so the whole table fits a small CPU. Speed counts the
scoring passes only (packing is timed separately), as the paper does (methods.md B.9).
"""

from __future__ import annotations

import logging
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
from core.rerank.packing import PACKING_LEVELS
from core.rerank.reranker import CrossEncoderReranker
from core.rerank.training import TrainingConfig, gold_ids, is_correct, rerank_accuracy, train

log = logging.getLogger(__name__)

TRAIN_FILE = "NCBItrainset_corpus.txt"
DEV_FILE = "NCBIdevelopset_corpus.txt"
TEST_FILE = "NCBItestset_corpus.txt"
COLUMNS = (
    "packing",
    "candidates",
    "retriever_acc@1",
    "acc@1",
    "train_examples_per_s",
    "mentions_per_s",
    "tokens",
    "token_bound",
    "speedup",
)


def _candidates(retriever, documents: Sequence[Document], k: int) -> list[list[list[Candidate]]]:
    flat = [m.text for d in documents for m in d.mentions]
    found = retriever.retrieve(flat, k) if flat else []
    out, cursor = [], 0
    for document in documents:
        out.append(found[cursor : cursor + len(document.mentions)])
        cursor += len(document.mentions)
    return out


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


def run_benchmark(
    ncbi_dir: str | Path,
    medic_path: str | Path,
    base_model: str | Path | None = None,
    packings: Sequence[str] = PACKING_LEVELS,
    candidate_counts: Sequence[int] = (8, 16),
    speed_docs: int = 30,
    dev_docs: int = 8,
    train_docs_limit: int | None = None,
    train_seconds: float = 60.0,
    learning_rate: float = 5e-5,
    max_length: int = 512,
    engine: str = "auto",
    retriever=None,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    """The issue-4 table; `engine` is a CPU engine name or "auto" (measured choice on the first row)."""
    ncbi_dir = Path(ncbi_dir)
    kb = KnowledgeBase(read_medic(medic_path))
    train_docs = list(pubtator.read(ncbi_dir / TRAIN_FILE))[:train_docs_limit]
    dev = list(pubtator.read(ncbi_dir / DEV_FILE))[:dev_docs]
    test = list(pubtator.read(ncbi_dir / TEST_FILE))[:speed_docs]
    if retriever is None:
        from core.retrieve.tfidf import TfidfRetriever

        retriever = TfidfRetriever()
        retriever.index(kb)
    k = max(candidate_counts)
    started = time.perf_counter()
    all_train, all_dev, all_test = (_candidates(retriever, docs, k) for docs in (train_docs, dev, test))
    log.info("retrieval for the benchmark took %.1f s", time.perf_counter() - started)
    choice = select_device("auto")
    mentions = sum(1 for d in test for m in d.mentions if gold_ids(m))
    rows: list[dict] = []
    engine_report: list[dict] = []
    engine_name = engine
    total = len(packings) * len(candidate_counts)
    for c_count in candidate_counts:
        train_c, dev_c, test_c = _top(all_train, c_count), _top(all_dev, c_count), _top(all_test, c_count)
        base_acc = retriever_accuracy(test, test_c, kb)
        # the engine comparison runs on the first row measured, so start with the cheapest level
        for packing in sorted(packings, key=lambda p: -PACKING_LEVELS.index(p) if p in PACKING_LEVELS else 0):
            cancel.raise_if_cancelled()
            progress(len(rows), total, f"{packing}, C={c_count}: training")
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
                    eval_every_seconds=train_seconds / 3,
                    patience=3,
                ),
                device=choice.device,
                cancel=cancel,
            )
            reranker = CrossEncoderReranker(encoder, device=choice.device)
            if choice.device == "cpu":
                if engine_name == "auto":
                    engine_report = _compare_engines(reranker, encoder, test, test_c, kb)
                    engine_name = reranker.engine.name
                else:
                    reranker.engine = build_engine(encoder, engine_name, choice)
            progress(len(rows), total, f"{packing}, C={c_count}: measuring")
            ranked_acc = _timed_accuracy(reranker, test, test_c, kb)
            rows.append(
                {
                    "packing": packing,
                    "candidates": c_count,
                    "retriever_acc@1": round(100 * base_acc, 2),
                    "acc@1": round(100 * ranked_acc["acc"], 2),
                    "train_examples_per_s": round(result.examples_per_s, 2),
                    "mentions_per_s": round(mentions / ranked_acc["score_seconds"], 2),
                    "tokens": int(ranked_acc["tokens"]),
                    "train_seconds": round(result.train_seconds, 1),
                    "train_epochs": round(result.epochs, 3),
                    "best_dev_acc@1": round(100 * result.best_dev_acc, 2),
                    "pack_seconds": round(ranked_acc["pack_seconds"], 2),
                    "inputs": int(ranked_acc["inputs"]),
                }
            )
            log.info("bench row %s", rows[-1])
    order = {p: i for i, p in enumerate(packings)}
    rows.sort(key=lambda r: (r["candidates"], order[r["packing"]]))
    for row in rows:
        pair = next(
            (r for r in rows if r["packing"] == "pair" and r["candidates"] == row["candidates"]), None
        )
        row["token_bound"] = round(pair["tokens"] / row["tokens"], 2) if pair else None
        row["speedup"] = round(row["mentions_per_s"] / pair["mentions_per_s"], 2) if pair else None
    progress(total, total, "done")
    return {
        "device": f"{choice.description}, engine {engine_name}",
        "retriever": getattr(retriever, "name", type(retriever).__name__),
        "slice": {"test_docs": len(test), "test_mentions": mentions, "dev_docs": len(dev)},
        "train_seconds_budget": train_seconds,
        "max_length": max_length,
        "train_docs": len(train_docs),
        "learning_rate": learning_rate,
        "engines": engine_report,
        "rows": rows,
    }


def _timed_accuracy(reranker: CrossEncoderReranker, documents, candidates, kb) -> dict[str, float]:
    acc = rerank_accuracy(reranker, documents, candidates, kb)
    stats = reranker.last_stats
    return {"acc": acc, **stats}


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
        f"training budget {result['train_seconds_budget']} s per row on {result['train_docs']} train docs, "
        f"lr {result['learning_rate']}, window {result['max_length']}",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    for row in result["rows"]:
        lines.append("| " + " | ".join(str(row.get(c, "")) for c in COLUMNS) + " |")
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
