"""Retriever speed and memory, side by side on identical inputs (`curalink bench retriever`).

End-to-end mentions/s is encode + top-64 search + collapse to concepts. The bi-encoder's index is
real vectors for a sample of names padded with random unit vectors up to the full name count: search
cost depends on size and dimension only, and encoding every MEDIC name with MiniLM would dominate the
run. The scale run indexes synthetic names (MEDIC words recombined), encodes a sample for the rate,
and fills the index with perturbed copies of the sampled vectors; 15M figures are linear
extrapolations (encode) and measured-rate extrapolations (build), stated as such.
"""

from __future__ import annotations

import logging
import resource
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import faiss
import numpy as np

from core.kb.knowledge_base import KnowledgeBase, NameEntry
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from core.retrieve.index import NameIndex

log = logging.getLogger(__name__)


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _throughput(retriever, queries: Sequence[str], k: int) -> float:
    retriever.retrieve(list(queries[:64]), k=k)  # warm-up: ONNX session, allocator, faiss threads
    started = time.perf_counter()
    retriever.retrieve(list(queries), k=k)
    return round(len(queries) / (time.perf_counter() - started), 1)


def _repeat(mentions: Sequence[str], count: int) -> list[str]:
    return [mentions[i % len(mentions)] for i in range(max(count, len(mentions)))]


def _untrained_model(folder: Path) -> Path:
    """Speed does not depend on the weights: an untrained ResCNN stands in when none is given."""
    from core.retrieve.rescnn import RescnnConfig, build_model, save_model

    save_model(build_model(RescnnConfig()), folder)
    return folder


def compare_index_kinds(vectors: np.ndarray, queries: np.ndarray, k: int = 64) -> dict[str, dict]:
    """Build time, query time and recall@k against exact search for flat, HNSW and IVF-Flat."""
    rows = [NameEntry(str(i), str(i), False) for i in range(len(vectors))]
    report: dict[str, dict] = {}
    exact_ids = None
    for kind in ("flat", "hnsw", "ivf"):
        started = time.perf_counter()
        if kind == "ivf":
            nlist = int(4 * np.sqrt(len(vectors)))
            quantizer = faiss.IndexFlatIP(vectors.shape[1])
            index = faiss.IndexIVFFlat(quantizer, vectors.shape[1], nlist, faiss.METRIC_INNER_PRODUCT)
            index.train(vectors[: min(len(vectors), 50 * nlist)])
            index.add(vectors)
            index.nprobe = 16
            build = time.perf_counter() - started
            started = time.perf_counter()
            _, ids = index.search(queries, k)
        else:
            name_index = NameIndex.build(vectors, rows, kind=kind)
            build = time.perf_counter() - started
            started = time.perf_counter()
            _, ids = name_index.search(queries, k)
        search = time.perf_counter() - started
        if kind == "flat":
            exact_ids = ids
        recall = float(np.mean([len(set(a) & set(b)) / k for a, b in zip(ids.tolist(), exact_ids.tolist())]))
        report[kind] = {
            "build_s": round(build, 2),
            "queries_per_s": round(len(queries) / search, 1),
            f"recall@{k}_vs_exact": round(recall, 4),
        }
    return report


def synthetic_names(kb: KnowledgeBase, count: int, seed: int = 0) -> list[str]:
    """Plausible disease-like names: 2-6 words drawn from the KB's own vocabulary."""
    rng = np.random.default_rng(seed)
    words = sorted({w for e in kb.names for w in e.name.split() if w.isalpha()})
    lengths = rng.integers(2, 7, size=count)
    picks = rng.integers(0, len(words), size=int(lengths.sum()))
    names, cursor = [], 0
    for length in lengths.tolist():
        names.append(" ".join(words[i] for i in picks[cursor : cursor + length]))
        cursor += length
    return names


def bench_retriever(
    kb: KnowledgeBase,
    mentions: Sequence[str],
    *,
    model_dir: str | Path | None = None,
    queries: int = 3000,
    biencoder_names: int = 5000,
    scale_names: int = 1_000_000,
    scale_encode_sample: int = 20_000,
    extrapolate_to: int = 15_000_000,
    include_biencoder: bool = True,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    """One JSON-able report; `--quick` passes small sizes (e.g. scale_names=100_000, queries=1000)."""
    from core.retrieve.rescnn_retriever import RescnnRetriever
    from core.retrieve.tfidf import TfidfRetriever

    report: dict = {"kb_names": len(kb.names), "queries": max(queries, len(mentions))}
    query_texts = _repeat(mentions, queries)
    with tempfile.TemporaryDirectory(prefix="bench-retriever-") as tmp:
        folder = Path(model_dir) if model_dir else _untrained_model(Path(tmp) / "untrained")
        report["model"] = str(folder) if model_dir else "untrained ResCNN (speed only)"

        # ResCNN: encode every name, build the index, then end-to-end linking throughput
        for backend in ("onnx", "torch"):
            cancel.raise_if_cancelled()
            progress(0, None, f"ResCNN ({backend}): encoding {len(kb.names)} names")
            rescnn = RescnnRetriever.load(folder, backend=backend)
            started = time.perf_counter()
            vectors = rescnn.encoder.encode([e.name for e in kb.names], cancel=cancel)
            encode_s = time.perf_counter() - started
            started = time.perf_counter()
            rescnn.kb, rescnn.name_index = kb, NameIndex.build(vectors, list(kb.names))
            report[f"rescnn_{backend}"] = {
                "encode_all_names_s": round(encode_s, 1),
                "names_per_s": round(len(kb.names) / encode_s, 1),
                "index_kind": rescnn.name_index.kind,
                "index_build_s": round(time.perf_counter() - started, 2),
                "mentions_per_s": _throughput(rescnn, query_texts, 64),
            }
        report["linking_peak_rss_mb"] = peak_rss_mb()
        names_vectors = vectors
        mention_vectors = rescnn.encoder.encode(query_texts[:1000])
        report["index_kinds_on_kb"] = compare_index_kinds(names_vectors, mention_vectors)

        progress(0, None, "n-gram TF-IDF")
        tfidf = TfidfRetriever()
        started = time.perf_counter()
        tfidf.index(kb)
        report["tfidf"] = {
            "index_s": round(time.perf_counter() - started, 1),
            "mentions_per_s": _throughput(tfidf, query_texts, 64),
        }

        best = max(report["rescnn_onnx"]["mentions_per_s"], report["rescnn_torch"]["mentions_per_s"])
        if include_biencoder:
            cancel.raise_if_cancelled()
            progress(0, None, "MiniLM bi-encoder")
            report["biencoder"] = _bench_biencoder(kb, query_texts, biencoder_names)
            report["rescnn_over_biencoder"] = round(best / report["biencoder"]["mentions_per_s"], 1)

        if scale_names:
            cancel.raise_if_cancelled()
            report["scale"] = _scale_run(
                kb, rescnn, query_texts, scale_names, scale_encode_sample, extrapolate_to, cancel
            )
    report["peak_rss_mb"] = peak_rss_mb()
    report["targets"] = {
        "rescnn_mentions_per_s>=3000": best >= 3000,
        "rescnn_over_biencoder>=10": report.get("rescnn_over_biencoder", 0) >= 10,
        "encode_all_names<=60s": min(
            report["rescnn_onnx"]["encode_all_names_s"], report["rescnn_torch"]["encode_all_names_s"]
        )
        <= 60,
        "linking_peak_rss<=1536MB": report["linking_peak_rss_mb"] <= 1536,
    }
    return report


def _bench_biencoder(kb: KnowledgeBase, query_texts: list[str], sample: int) -> dict:
    from core.retrieve.biencoder import BiEncoderRetriever

    biencoder = BiEncoderRetriever()
    names = [e.name for e in kb.names[:sample]]
    started = time.perf_counter()
    real = biencoder.encode(names)
    rate = len(names) / (time.perf_counter() - started)
    rng = np.random.default_rng(0)
    filler = rng.normal(size=(len(kb.names) - len(names), real.shape[1])).astype(np.float32)
    filler /= np.linalg.norm(filler, axis=1, keepdims=True)
    biencoder.kb = kb
    biencoder.name_index = NameIndex.build(np.vstack([real, filler]), list(kb.names))
    subset = query_texts[: max(200, len(query_texts) // 5)]
    return {
        "names_per_s": round(rate, 1),
        "encode_all_names_s_extrapolated": round(len(kb.names) / rate, 1),
        "mentions_per_s": _throughput(biencoder, subset, 64),
        "queries_timed": len(subset),
    }


def _scale_run(kb, rescnn, query_texts, size: int, sample: int, extrapolate_to: int, cancel) -> dict:
    names = synthetic_names(kb, min(sample, size))
    started = time.perf_counter()
    vectors = rescnn.encoder.encode(names, cancel=cancel)
    encode_rate = len(names) / (time.perf_counter() - started)
    rng = np.random.default_rng(1)
    blocks = []
    for start in range(0, size, len(vectors)):
        block = vectors[: min(len(vectors), size - start)]
        block = block + rng.normal(scale=0.05, size=block.shape).astype(np.float32)
        blocks.append(block / np.linalg.norm(block, axis=1, keepdims=True))
    all_vectors = np.vstack(blocks)
    del blocks
    rows = [NameEntry("", "", False)] * size
    cancel.raise_if_cancelled()
    rss_before = peak_rss_mb()
    started = time.perf_counter()
    index = NameIndex.build(all_vectors, rows)
    build_s = time.perf_counter() - started
    latencies = []
    for text in query_texts[:300]:
        started = time.perf_counter()
        index.search(rescnn.encoder.encode([text]), 64)
        latencies.append((time.perf_counter() - started) * 1000)
    started = time.perf_counter()
    index.search(rescnn.encoder.encode(query_texts[:1000]), 64)
    batched = 1000 / (time.perf_counter() - started)
    factor = extrapolate_to / size
    return {
        "names": size,
        "index_kind": index.kind,
        "encode_names_per_s": round(encode_rate, 1),
        "encode_s_extrapolated": round(size / encode_rate, 1),
        "build_s": round(build_s, 1),
        "index_vectors_mb": round(all_vectors.nbytes / 2**20, 1),
        "peak_rss_mb": peak_rss_mb(),
        "peak_rss_before_build_mb": rss_before,
        "query_p50_ms": round(float(np.percentile(latencies, 50)), 2),
        "query_p95_ms": round(float(np.percentile(latencies, 95)), 2),
        "batched_mentions_per_s": round(batched, 1),
        f"extrapolated_{extrapolate_to}": {
            "encode_s": round(extrapolate_to / encode_rate, 0),
            "build_s": round(build_s * factor, 0),
            "vectors_gb": round(all_vectors.nbytes * factor / 2**30, 1),
        },
    }
