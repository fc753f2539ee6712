"""Retriever speed and memory, side by side on identical inputs (`curalink bench retriever`).

End-to-end mentions/s is encode + top-64 search + collapse to concepts, reported three ways, because
a corpus repeats its mentions heavily and ResCNN caches answers by normalised text:
- `distinct_mentions_per_s`: every string distinct and the cache off: the honest model figure,
  the one compared with the baselines (which have no cache);
- `corpus_mentions_per_s_cold`: the given mention stream in order from an empty cache (each distinct
  string encoded and searched once);
- `corpus_mentions_per_s_warm`: the same stream again, all cache hits (a re-opened abstract).
The bi-encoder's index is real vectors for a sample of names padded with random unit vectors up to
the full name count (search cost depends on size and dimension only; encoding every MEDIC name with
MiniLM would dominate the run). The scale run indexes synthetic names (KB words recombined), encodes
a sample for the rate, and fills the index with perturbed copies of the sampled vectors; the 15M
figures are extrapolations, stated as such. Peak memory of linking is read in a child process that
loads the model and the saved index and links the mentions, as `curalink link` would.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import faiss
import numpy as np

from core.kb.knowledge_base import KnowledgeBase, NameEntry
from core.memory import peak_rss_mb
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from core.retrieve.index import IVF_KINDS, NameIndex, index_stem
from core.text.normalize import normalize_name

log = logging.getLogger(__name__)

FULL = dict(
    distinct=3000,
    biencoder_names=5000,
    biencoder_queries=600,
    scale_names=1_000_000,
    scale_encode_sample=20_000,
    other_backend_sample=None,
    latency_queries=300,
)
QUICK = dict(
    distinct=800,
    biencoder_names=1000,
    biencoder_queries=200,
    scale_names=100_000,
    scale_encode_sample=3000,
    other_backend_sample=3000,
    latency_queries=100,
)


def _rate(retriever, queries: Sequence[str], k: int = 64, warm: bool = True) -> float:
    if warm:
        retriever.retrieve(list(queries[:32]), k=k)  # ONNX session, allocator, faiss threads
    started = time.perf_counter()
    retriever.retrieve(list(queries), k=k)
    return round(len(queries) / (time.perf_counter() - started), 1)


def _untrained_model(folder: Path) -> Path:
    """Speed does not depend on the weights: an untrained ResCNN stands in when none is given."""
    from core.retrieve.rescnn import RescnnConfig, build_model, save_model

    save_model(build_model(RescnnConfig()), folder)
    return folder


def distinct_strings(kb: KnowledgeBase, mentions: Sequence[str], count: int) -> list[str]:
    """Distinct normalised mention strings, topped up with KB names when the corpus has too few."""
    seen = dict.fromkeys(normalize_name(m) for m in mentions)
    for entry in kb.names[:: max(1, len(kb.names) // (2 * count + 1))]:
        if len(seen) >= count:
            break
        seen.setdefault(normalize_name(entry.name))
    return [s for s in seen if s][:count]


def compare_index_kinds(
    vectors: np.ndarray,
    queries: np.ndarray,
    k: int = 64,
    *,
    fetch: int = 256,
    hnsw_ef: Sequence[int] = (64, 128, 256),
    ivf_nprobe: Sequence[int] = (16, 32),
    include_hnsw: bool = True,
) -> dict[str, dict]:
    """Build time, queries/s (fetching `fetch` names, as retrieval does) and how much of the exact
    top-k names and top-1 each approximate setting keeps."""
    rows = [NameEntry(str(i), str(i), False) for i in range(len(vectors))]
    report: dict[str, dict] = {}

    def timed_search(index: NameIndex) -> tuple[np.ndarray, float]:
        started = time.perf_counter()
        _, ids = index.search(queries, fetch)
        return ids, time.perf_counter() - started

    started = time.perf_counter()
    flat = NameIndex.build(vectors, rows, kind="flat")
    exact, seconds = timed_search(flat)
    report["flat"] = {
        "build_s": round(time.perf_counter() - started - seconds, 2),
        "queries_per_s": round(len(queries) / seconds, 1),
    }

    def score(label: str, build_s: float, index: NameIndex, set_knob) -> None:
        for knob in set_knob:
            ids, seconds = timed_search(index)
            recall = np.mean([len(set(a[:k]) & set(b[:k])) / k for a, b in zip(ids.tolist(), exact.tolist())])
            report[f"{label}{knob}"] = {
                "build_s": round(build_s, 2),
                "queries_per_s": round(len(queries) / seconds, 1),
                f"recall@{k}_names_vs_exact": round(float(recall), 4),
                "top1_same_as_exact": round(float(np.mean(ids[:, 0] == exact[:, 0])), 4),
            }

    if include_hnsw:
        started = time.perf_counter()
        hnsw = NameIndex.build(vectors, rows, kind="hnsw")
        build = time.perf_counter() - started

        def efs():
            for ef in hnsw_ef:
                hnsw.faiss.hnsw.efSearch = ef
                yield ef

        score("hnsw_ef", build, hnsw, efs())
    started = time.perf_counter()
    ivf = NameIndex.build(vectors, rows, kind="ivf")
    build = time.perf_counter() - started

    def probes():
        for nprobe in ivf_nprobe:
            ivf.faiss.nprobe = nprobe
            yield nprobe

    score("ivf_nprobe", build, ivf, probes())
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


def linking_peak_rss(
    model_dir: str | Path, index_dir: str | Path, kb: KnowledgeBase, mentions: list[str]
) -> dict:
    """Peak RSS of a fresh interpreter that loads the model, the KB and the saved index and links
    `mentions`. A plain subprocess with JSON files, not multiprocessing: spawn re-imports the
    caller's __main__, and fork would count the parent's pages."""
    with tempfile.TemporaryDirectory(prefix="bench-link-") as tmp:
        job = Path(tmp) / "job.json"
        concepts = [dataclasses.asdict(c) for c in kb]
        job.write_text(
            json.dumps(
                {
                    "model_dir": str(model_dir),
                    "index_dir": str(index_dir),
                    "concepts": concepts,
                    "mentions": list(mentions),
                }
            )
        )
        code = "import sys; from bench.retrieval import link_job; link_job(sys.argv[1])"
        done = subprocess.run(
            [sys.executable, "-c", code, str(job)],
            capture_output=True,
            text=True,
            cwd=Path(__file__).resolve().parents[2],
            check=False,
        )
        result = Path(tmp) / "result.json"
        if done.returncode != 0 or not result.is_file():
            raise RuntimeError(f"linking child failed ({done.returncode}): {done.stderr[-2000:]}")
        return json.loads(result.read_text())


def link_job(job_path: str) -> None:
    """Child side of `linking_peak_rss`: writes result.json beside the job file."""
    from core.kb.concept import Concept
    from core.retrieve.rescnn_retriever import RescnnRetriever

    started = time.perf_counter()
    job = json.loads(Path(job_path).read_text())
    kb = KnowledgeBase(
        Concept(**{k: tuple(v) if isinstance(v, list) else v for k, v in c.items()}) for c in job["concepts"]
    )
    retriever = RescnnRetriever.load(job["model_dir"], index_dir=job["index_dir"])
    retriever.index(kb)
    loaded = time.perf_counter() - started
    retriever.retrieve(job["mentions"], k=64)
    result = {
        "peak_rss_mb": peak_rss_mb(),
        "load_s": round(loaded, 1),
        "link_s": round(time.perf_counter() - started - loaded, 1),
        "mentions": len(job["mentions"]),
    }
    (Path(job_path).parent / "result.json").write_text(json.dumps(result))


def bench_retriever(
    kb: KnowledgeBase,
    mentions: Sequence[str],
    *,
    quick: bool = False,
    model_dir: str | Path | None = None,
    include_biencoder: bool = True,
    extrapolate_to: int = 15_000_000,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
    **sizes: int,
) -> dict:
    """One JSON-able report. `mentions`: a corpus's queries in reading order, repeats kept (the CLI passes
    core.retrieve.query_plan.query_strings, what the linker sends).
    `quick` (~1-2 min on 2 quiet cores) samples the torch encoder and scales to 100k names; the full
    run (<= 10 min) encodes every name with both backends and scales to 1M. `sizes` override FULL/QUICK."""
    from core.retrieve.rescnn_retriever import RescnnRetriever
    from core.retrieve.tfidf import TfidfRetriever

    plan = {**(QUICK if quick else FULL), **sizes}
    distinct = distinct_strings(kb, mentions, plan["distinct"])
    stream = list(mentions)
    report: dict = {
        "mode": "quick" if quick else "full",
        "kb_names": len(kb.names),
        "distinct_queries": len(distinct),
        "corpus_mentions": len(stream),
        "corpus_distinct": len({normalize_name(m) for m in stream}),
        "faiss_threads": faiss.omp_get_max_threads(),
    }
    names = [e.name for e in kb.names]
    with tempfile.TemporaryDirectory(prefix="bench-retriever-") as tmp:
        folder = Path(model_dir) if model_dir else _untrained_model(Path(tmp) / "untrained")
        report["model"] = str(folder) if model_dir else "untrained ResCNN (speed only)"
        index_dir = Path(tmp) / "index"

        progress(0, None, f"ResCNN: encoding {len(names)} names")
        rescnn = RescnnRetriever.load(folder, index_dir=index_dir, cache_size=0)
        rescnn.encoder.encode(names[:256])
        started = time.perf_counter()
        vectors = rescnn.encoder.encode(names, cancel=cancel)
        encode_s = time.perf_counter() - started
        started = time.perf_counter()
        rescnn.kb, rescnn.name_index = kb, NameIndex.build(vectors, list(kb.names), cancel=cancel)
        build_s = time.perf_counter() - started
        rescnn.name_index.save(index_dir, index_stem(kb.fingerprint(), rescnn.version))
        rescnn.cache.max_entries = 0
        rescnn.retrieve(distinct[:32], 64)
        result = {
            "backend": rescnn.encoder.backend,
            "threads": rescnn.encoder.threads,
            "encode_all_names_s": round(encode_s, 1),
            "names_per_s": round(len(names) / encode_s, 1),
            "index_kind": rescnn.name_index.kind,
            "index_build_s": round(build_s, 1),
            "distinct_mentions_per_s": _rate(rescnn, distinct, warm=False),
        }
        rescnn.cache.max_entries = 20_000
        result["corpus_mentions_per_s_cold"] = _rate(rescnn, stream, warm=False)
        result["corpus_mentions_per_s_warm"] = _rate(rescnn, stream, warm=False)
        report["rescnn"] = result

        cancel.raise_if_cancelled()
        other = "onnx" if rescnn.encoder.backend == "torch" else "torch"
        progress(0, None, f"ResCNN on the {other} backend")
        other_encoder = RescnnRetriever.load(folder, backend=other).encoder
        sample = (
            names
            if plan["other_backend_sample"] is None
            else names[:: max(1, len(names) // plan["other_backend_sample"])]
        )
        for encoder, label in ((other_encoder, other), (rescnn.encoder, rescnn.encoder.backend)):
            encoder.encode(sample[:256])
            started = time.perf_counter()
            encoder.encode(sample, cancel=cancel)
            report[f"{label}_names_per_s_on_sample"] = round(len(sample) / (time.perf_counter() - started), 1)
        report["backend_sample"] = len(sample)

        cancel.raise_if_cancelled()
        progress(0, None, "index kinds on the KB's names")
        report["index_kinds_on_kb"] = compare_index_kinds(vectors, rescnn.encoder.encode(distinct[:1000]))

        progress(0, None, "n-gram TF-IDF")
        tfidf = TfidfRetriever()
        started = time.perf_counter()
        tfidf.index(kb)
        report["tfidf"] = {
            "index_s": round(time.perf_counter() - started, 1),
            "distinct_mentions_per_s": _rate(tfidf, distinct),
        }

        if include_biencoder:
            cancel.raise_if_cancelled()
            progress(0, None, "MiniLM bi-encoder")
            report["biencoder"] = _bench_biencoder(
                kb, distinct, plan["biencoder_names"], plan["biencoder_queries"]
            )
            report["rescnn_over_biencoder"] = round(
                result["distinct_mentions_per_s"] / report["biencoder"]["distinct_mentions_per_s"], 1
            )
            report["rescnn_cached_corpus_over_biencoder"] = round(
                result["corpus_mentions_per_s_cold"] / report["biencoder"]["distinct_mentions_per_s"], 1
            )

        cancel.raise_if_cancelled()
        progress(0, None, "peak memory of a linking process")
        report["linking_process"] = linking_peak_rss(folder, index_dir, kb, stream or distinct)

        if plan["scale_names"]:
            cancel.raise_if_cancelled()
            progress(0, None, f"scale: {plan['scale_names']} synthetic names")
            report["scale"] = _scale_run(kb, rescnn, distinct, plan, extrapolate_to, cancel)
    report["bench_peak_rss_mb"] = peak_rss_mb()
    report["targets"] = {
        "distinct_mentions_per_s>=3000": result["distinct_mentions_per_s"] >= 3000,
        "corpus_mentions_per_s_cold>=3000": result["corpus_mentions_per_s_cold"] >= 3000,
        "rescnn_over_biencoder>=10": report.get("rescnn_over_biencoder", 0) >= 10,
        "encode_all_names<=60s": result["encode_all_names_s"] <= 60,
        "linking_peak_rss<=1536MB": report["linking_process"]["peak_rss_mb"] <= 1536,
    }
    return report


def _bench_biencoder(kb: KnowledgeBase, distinct: list[str], sample: int, queries: int) -> dict:
    from core.retrieve.biencoder import BiEncoderRetriever

    biencoder = BiEncoderRetriever()
    names = [e.name for e in kb.names[:sample]]
    biencoder.encode(names[:64])
    started = time.perf_counter()
    real = biencoder.encode(names)
    rate = len(names) / (time.perf_counter() - started)
    rng = np.random.default_rng(0)
    filler = rng.normal(size=(max(0, len(kb.names) - len(names)), real.shape[1])).astype(np.float32)
    filler /= np.linalg.norm(filler, axis=1, keepdims=True)
    biencoder.kb = kb
    biencoder.name_index = NameIndex.build(np.vstack([real, filler]), list(kb.names))
    subset = distinct[:queries]
    return {
        "names_per_s": round(rate, 1),
        "encode_all_names_s_extrapolated": round(len(kb.names) / rate, 1),
        "index_kind": biencoder.name_index.kind,
        "distinct_mentions_per_s": _rate(biencoder, subset),
        "queries_timed": len(subset),
    }


def _scale_run(kb, rescnn, distinct: list[str], plan: dict, extrapolate_to: int, cancel) -> dict:
    size, sample = plan["scale_names"], min(plan["scale_encode_sample"], plan["scale_names"])
    names = synthetic_names(kb, sample)
    started = time.perf_counter()
    vectors = rescnn.encoder.encode(names, cancel=cancel)
    encode_rate = len(names) / (time.perf_counter() - started)
    rng = np.random.default_rng(1)
    all_vectors = np.empty((size, vectors.shape[1]), dtype=np.float32)
    for start in range(0, size, len(vectors)):
        block = vectors[: min(len(vectors), size - start)]
        block = block + rng.normal(scale=0.05, size=block.shape).astype(np.float32)
        all_vectors[start : start + len(block)] = block / np.linalg.norm(block, axis=1, keepdims=True)
    rows = [NameEntry("", "", False)] * size
    cancel.raise_if_cancelled()
    rss_before = peak_rss_mb()
    started = time.perf_counter()
    index = NameIndex.build(all_vectors, rows, cancel=cancel)
    build_s = time.perf_counter() - started
    rss_after = peak_rss_mb()
    latencies = []
    for text in distinct[: plan["latency_queries"]]:
        started = time.perf_counter()
        index.search(rescnn.encoder.encode([text]), 256)
        latencies.append((time.perf_counter() - started) * 1000)
    batch = distinct[:1000]
    started = time.perf_counter()
    index.search(rescnn.encoder.encode(batch), 256)
    batched = len(batch) / (time.perf_counter() - started)
    factor = extrapolate_to / size
    # IVF build = k-means on a sample + assigning n vectors to 4 sqrt(n) lists: grows as n^1.5
    build_factor = factor**1.5 if index.kind in IVF_KINDS else factor
    return {
        "names": size,
        "index_kind": index.kind,
        "encode_names_per_s": round(encode_rate, 1),
        "encode_s_extrapolated": round(size / encode_rate, 1),
        "build_s": round(build_s, 1),
        "index_vectors_mb": round(all_vectors.nbytes / 2**20, 1),
        "peak_rss_before_build_mb": rss_before,
        "peak_rss_after_build_mb": rss_after,
        "query_p50_ms": round(float(np.percentile(latencies, 50)), 2),
        "query_p95_ms": round(float(np.percentile(latencies, 95)), 2),
        "batched_mentions_per_s": round(batched, 1),
        f"extrapolated_{extrapolate_to}": {
            "encode_s": round(extrapolate_to / encode_rate),
            "encode_h": round(extrapolate_to / encode_rate / 3600, 1),
            "build_s": round(build_s * build_factor),
            "vectors_gb": round(all_vectors.nbytes * factor / 2**30, 1),
            "note": "encoding and memory linear in names; build "
            + (
                "n^1.5 (IVF lists = 4 sqrt(n))"
                if index.kind in IVF_KINDS
                else "linear (HNSW, optimistic: grows ~n log n)"
            ),
        },
    }
