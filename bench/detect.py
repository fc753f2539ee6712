"""`curalink bench detect`: linking speed and acc@1 of four linkers on identical gold mentions (CPU).

- collective dual encoder: the span model in force, every mention of a window linked in one pass
  (core.detect.span_detector.SpanDetector.link_mentions);
- one-mention dual encoder: the same model and vectors, one forward pass per mention over a 128-piece
  window holding it (the paper's single-mention baseline reads 128 tokens of context);
- ResCNN: the retriever in force through the one query plan (no reranking), its cross-call answer
  cache emptied first (identical strings within the run are still encoded once, as when linking);
- pair cross-encoder: the reranker in force, else the packaged MiniLM with a fresh head (speed only,
  its acc@1 is then not reported), scoring the retriever's top candidates one (mention, candidate) pair
  per input.

All four run in one process, one after the other, on the same documents; speeds are compared as
ratios within the run (the house rule for a shared machine). Each is warmed up on one document first.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace

import torch

from core.documents import Document
from core.errors import CuralinkError
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from core.rerank.training import is_correct

log = logging.getLogger(__name__)

ONE_MENTION_WINDOW = 128
DEFAULT_DOCUMENTS = 30


def _accuracy(documents: list[Document], ranked, kb) -> float:
    total = correct = 0
    for document, per_document in zip(documents, ranked, strict=True):
        for mention, candidates in zip(document.mentions, per_document, strict=True):
            if not mention.concept_ids:
                continue
            total += 1
            correct += bool(candidates) and is_correct(mention, candidates[0].concept_id, kb)
    return round(100 * correct / total, 2) if total else 0.0


def _timed(run):
    started = time.perf_counter()
    result = run()
    return result, time.perf_counter() - started


def bench_detect(
    project,
    *,
    split: str = "test",
    documents: int = DEFAULT_DOCUMENTS,
    candidates: int = 16,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    from core.detect.span_detector import SpanDetector
    from core.project_detector import load_span_detector
    from core.project_models import load_linker
    from core.rerank.cross_encoder import CrossEncoder
    from core.rerank.reranker import CrossEncoderReranker

    kb = project.kb.knowledge_base()
    docs = [
        d.with_mentions([m for m in d.mentions if m.origin in ("gold", "imported") and m.concept_ids])
        for d in project.documents.documents(split)
    ]
    docs = [d for d in docs if d.mentions][:documents]
    if not docs:
        raise CuralinkError(f"{project.path}: no documents with linked gold mentions in the {split!r} split")
    span = load_span_detector(project, kb=kb, device="cpu")
    if span is None:
        candidates = [row.version for row in project.models.model_versions("detector")]
        if candidates:  # train detector keeps a span model that links worse than the dictionary out of force
            raise CuralinkError(
                f"{project.path}: no detector in force; detector {candidates[-1]} is a candidate "
                f"(`curalink -p {project.path} promote detector {candidates[-1]}` puts it in force)"
            )
        raise CuralinkError(
            f"{project.path}: no trained detector (run `curalink -p {project.path} train detector`)"
        )
    if project.models.active_model("retriever") is None:
        raise CuralinkError(
            f"{project.path}: no trained retriever (run `curalink -p {project.path} train retriever`)"
        )
    mentions = sum(len(d.mentions) for d in docs)
    linker = load_linker(
        project, kb=kb, device="cpu", use_reranker=False, use_ranker=False, candidates=candidates
    )
    one = SpanDetector(
        span.model, span.tokenizer, replace(span.config, window=ONE_MENTION_WINDOW), span.vectors
    )
    active_reranker = project.models.active_model("reranker")
    encoder = (
        CrossEncoder.load(active_reranker.path)
        if active_reranker is not None
        else CrossEncoder.from_base(packing="pair")
    )
    reranker = CrossEncoderReranker(encoder, packing="pair", device="cpu", fusion_weight=0.0)
    rows = []

    def one_at_a_time():
        out = []
        for document in docs:
            cancel.raise_if_cancelled()
            out.append(
                [
                    one.link_mentions([document.with_mentions([m])], candidates)[0][0]
                    for m in document.mentions
                ]
            )
        return out

    retrieved = linker.retrieve(docs)

    def rescnn():
        """Without the answers the calls above left in the retriever's cross-call cache."""
        cache = getattr(linker.retriever, "cache", None)
        if cache is not None:
            cache.clear()
        return linker.retrieve(docs)

    runs = [
        ("collective dual encoder", lambda: span.link_mentions(docs, candidates, cancel=cancel), True),
        ("one-mention dual encoder", one_at_a_time, True),
        (f"ResCNN retriever {linker.retriever_version}", rescnn, True),
        (
            f"pair cross-encoder ({'reranker ' + active_reranker.version if active_reranker else 'untrained MiniLM, speed only'}"
            f", {candidates} candidates)",
            lambda: reranker.rerank(docs, retrieved),
            active_reranker is not None,
        ),
    ]
    warm = docs[:1]
    span.link_mentions(warm, candidates)
    linker.retrieve(warm)
    reranker.rerank(warm, retrieved[:1])
    for number, (name, run, scored) in enumerate(runs):
        cancel.raise_if_cancelled()
        progress(number, len(runs), name)
        ranked, seconds = _timed(run)
        rows.append(
            {
                "name": name,
                "mentions_per_s": round(mentions / seconds, 2) if seconds else 0.0,
                "seconds": round(seconds, 4),  # a fast row took under 5 ms: 2 places read 0.0
                "acc@1": _accuracy(docs, ranked, kb) if scored else None,
            }
        )
    progress(len(runs), len(runs), "done")
    base = rows[1]["mentions_per_s"] or 1.0
    for row in rows:
        row["speedup_vs_one_mention"] = round(row["mentions_per_s"] / base, 2)
    collective = rows[0]["mentions_per_s"]
    return {
        "split": split,
        "documents": len(docs),
        "mentions": mentions,
        "device": f"cpu ({torch.get_num_threads()} threads)",
        "detector": span.version,
        "linkers": rows,
        "collective_vs_one_mention": rows[0]["speedup_vs_one_mention"],
        "collective_vs_cross_encoder": round(collective / rows[3]["mentions_per_s"], 2)
        if rows[3]["mentions_per_s"]
        else None,
    }
