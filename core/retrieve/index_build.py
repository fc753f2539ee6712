"""Build a name index from vectors that arrive chunk by chunk, and tune its search against exact search.

A UMLS-size KB (15 M names) has 15 GB of float vectors: more than a laptop holds. So the build never
keeps them: the names are encoded in chunks (in parallel, `core.retrieve.parallel_encode`), each chunk
goes into the index and is dropped. An IVF index needs k-means lists first, so a random sample of the
names is encoded first, trains the lists, and is added with its row numbers; the rest follows in order.

The recall kept against exact search is measured on the way: a few hundred names (a random sample)
serve as probe queries, their exact top-k is kept up to date with numpy over every chunk (independent
of FAISS), and at the end the index's search setting (`nprobe`, `efSearch`) is raised step by step
until the index keeps `BUILD_RECALL_TARGET` of that top-k. The chosen setting and the recall are logged
and stored in the sidecar. The probes are names of the KB itself, not mentions; a mention sits farther
from its names, so the target carries a margin above the 95 % asked of real queries, and
`curalink bench index` measures the recall on mention-like variants separately.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from core.kb.knowledge_base import NameEntry
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from core.retrieve.base import NAME_OVERFETCH, ConceptCodes
from core.retrieve.index import NameIndex
from core.retrieve.name_rows import NameRows

log = logging.getLogger(__name__)

RECALL_AT = 64
"""Retrieval returns 64 concepts, fetching `RECALL_AT * NAME_OVERFETCH` names."""
BUILD_RECALL_TARGET = 0.97
PROBE_QUERIES = 256
NPROBE_STEPS = (
    4,
    8,
    16,
    32,
    48,
    64,
    96,
    128,
    192,
    256,
    384,
    512,
    768,
    1024,
    1536,
    2048,
    3072,
    4096,
    6144,
    8192,
)
EF_SEARCH_STEPS = (64, 128, 192, 256, 384, 512, 768, 1024)

ChunkEncoder = Callable[[Sequence[str]], Iterator[np.ndarray]]
"""Texts -> their vectors, one array per consecutive chunk of the texts, in order."""


@dataclass
class BuildReport:
    kind: str
    names: int
    seconds: dict[str, float] = field(default_factory=dict)
    recall: dict | None = None


class ExactTopK:
    """The exact top-k rows of fixed probe queries, updated chunk by chunk (numpy, no FAISS)."""

    def __init__(self, queries: np.ndarray, k: int):
        self.queries = np.ascontiguousarray(queries, dtype=np.float32)
        self.k = k
        self.scores = np.full((len(queries), 0), -np.inf, dtype=np.float32)
        self.ids = np.zeros((len(queries), 0), dtype=np.int64)

    def update(self, vectors: np.ndarray, positions: np.ndarray) -> None:
        scores = np.hstack([self.scores, self.queries @ vectors.T])
        ids = np.hstack(
            [self.ids, np.broadcast_to(np.asarray(positions, dtype=np.int64), (len(scores), len(positions)))]
        )
        if scores.shape[1] > self.k:
            keep = np.argpartition(-scores, self.k - 1, axis=1)[:, : self.k]
            scores, ids = np.take_along_axis(scores, keep, 1), np.take_along_axis(ids, keep, 1)
        self.scores, self.ids = scores, ids

    def ranked(self) -> np.ndarray:
        """Row ids, best first (ties broken by row id, as FAISS's flat search does)."""
        order = np.lexsort((self.ids, -self.scores), axis=1)
        return np.take_along_axis(self.ids, order, 1)


def recall_at(found: np.ndarray, exact: np.ndarray, k: int = RECALL_AT) -> float:
    """Mean share of each query's exact top-k rows that `found` (its first k columns) also holds."""
    k = min(k, exact.shape[1])
    if k == 0 or len(exact) == 0:
        return 1.0
    return float(np.mean([len(set(a[:k]) & set(b[:k])) / k for a, b in zip(found.tolist(), exact.tolist())]))


def tune_search(
    index: NameIndex,
    vectors: np.ndarray | None = None,
    *,
    probes: np.ndarray | None = None,
    exact: np.ndarray | None = None,
    target: float = BUILD_RECALL_TARGET,
    cancel: CancelToken = NEVER_CANCELLED,
    seed: int = 0,
) -> dict:
    """Raise the search setting until `index` keeps `target` of the exact top-64 of the probe queries;
    record the setting and the recall on the index (and return the record). Either all `vectors` (the
    exact answer is computed here) or `probes` with their `exact` ranked row ids."""
    if probes is None:
        picks = np.sort(
            np.random.default_rng(seed).choice(len(vectors), min(PROBE_QUERIES, len(vectors)), replace=False)
        )
        probes = vectors[picks]
        truth = ExactTopK(probes, min(RECALL_AT, len(vectors)))
        truth.update(vectors, np.arange(len(vectors)))
        exact = truth.ranked()
    fetch = min(len(index), RECALL_AT * NAME_OVERFETCH)
    knob = "nprobe" if index.needs_training else "efSearch"
    steps = NPROBE_STEPS if knob == "nprobe" else EF_SEARCH_STEPS
    if knob == "nprobe":
        steps = tuple(s for s in steps if s < index.faiss.nlist) + (index.faiss.nlist,)
    kept, chosen, tried = 0.0, steps[-1], []
    for step in steps:
        cancel.raise_if_cancelled()
        index.set_search({knob: step})
        started = time.perf_counter()
        _, found = index.search(probes, fetch)
        ms = (time.perf_counter() - started) * 1000 / max(1, len(probes))
        kept = recall_at(found, exact)
        tried.append([step, round(kept, 4), round(ms, 3)])
        if kept >= target:
            chosen = step
            break
    index.set_search({knob: chosen})
    if kept < target:
        log.warning(
            "%s index over %d names keeps only %.1f %% of the exact top-%d at its widest search (%s %d)",
            index.kind, len(index), 100 * kept, RECALL_AT, knob, chosen,
        )  # fmt: skip
    index.recall = {
        f"recall_at_{RECALL_AT}_vs_exact": round(kept, 4),
        "target": target,
        knob: chosen,
        "probe_queries": len(probes),
        "probes": "names of the KB itself",
        "tried": tried,
    }
    log.info(
        "%s index over %d names: %s %d keeps %.1f %% of the exact top-%d (target %.0f %%)",
        index.kind, len(index), knob, chosen, 100 * kept, RECALL_AT, 100 * target,
    )  # fmt: skip
    return index.recall


def build_streaming(
    rows: Sequence[NameEntry],
    encode_chunks: ChunkEncoder,
    dim: int,
    *,
    kind: str | None = None,
    threshold: int | None = None,
    compressed_threshold: int | None = None,
    laptop_threshold: int | None = None,
    target: float = BUILD_RECALL_TARGET,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
    on_vectors: Callable[[np.ndarray, np.ndarray], None] | None = None,
    seed: int = 0,
) -> tuple[NameIndex, BuildReport]:
    """Encode `rows`' names through `encode_chunks` and build one index, never holding all the vectors
    (flat and HNSW keep them anyway). `on_vectors(vectors, positions)` sees every chunk (the benchmark
    keeps its own exact answer with it). Cancel is checked between chunks."""
    n = len(rows)
    given = (
        ("threshold", threshold),
        ("compressed_threshold", compressed_threshold),
        ("laptop_threshold", laptop_threshold),
    )
    sizes = {k: v for k, v in given if v}
    index = NameIndex(dim, kind or NameIndex.kind_for(n, **sizes), n)
    report = BuildReport(index.kind, n)
    clock = dict.fromkeys(("encode_wait", "train", "add", "exact", "tune"), 0.0)
    names = [r.name for r in rows]
    index.rows = NameRows.of(rows)
    index.codes = ConceptCodes.of_rows(index.rows)
    rng = np.random.default_rng(seed)
    truth: ExactTopK | None = None
    done = 0

    def encoded(positions: np.ndarray, message: str) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        nonlocal done
        cursor, waited = 0, time.perf_counter()
        for vectors in encode_chunks([names[i] for i in positions.tolist()]):
            clock["encode_wait"] += time.perf_counter() - waited
            cancel.raise_if_cancelled()
            at = positions[cursor : cursor + len(vectors)]
            cursor += len(vectors)
            done += len(vectors)
            progress(min(done, n), n, message)
            yield vectors, at
            waited = time.perf_counter()

    def add(vectors: np.ndarray, at: np.ndarray) -> None:
        started = time.perf_counter()
        if truth is not None:
            truth.update(vectors, at)
        clock["exact"] += time.perf_counter() - started
        started = time.perf_counter()
        index.add_at(vectors, at)
        clock["add"] += time.perf_counter() - started
        if on_vectors is not None:
            on_vectors(vectors, at)

    progress(0, n, "encoding names")
    if index.approximate and n:  # probe names first (a few hundred): their exact top-k grows with the index
        probe_rows = np.sort(rng.choice(n, min(PROBE_QUERIES, n), replace=False))
        probes = np.vstack([v for v, _ in encoded(probe_rows, "encoding probe names")])
        done = 0
        truth = ExactTopK(probes, min(RECALL_AT, n))
    rest = np.arange(n)
    if index.needs_training and n:
        sample = np.sort(rng.choice(n, min(n, index.training_size()), replace=False))
        rest = np.setdiff1d(rest, sample, assume_unique=True)
        vectors = np.vstack([v for v, _ in encoded(sample, "encoding names (training sample)")])
        started = time.perf_counter()
        index.faiss.train(vectors)
        clock["train"] = time.perf_counter() - started
        log.info(
            "%s: k-means of %d lists on %d names in %.1f s",
            index.kind,
            index.faiss.nlist,
            len(sample),
            clock["train"],
        )
        add(vectors, sample)
        del vectors
    for vectors, at in encoded(rest, "encoding names"):
        add(vectors, at)
    if index.faiss.ntotal != n:
        raise RuntimeError(f"{index.faiss.ntotal} vectors encoded for {n} names")
    if truth is not None:
        progress(n, n, "tuning the search against exact search")
        started = time.perf_counter()
        report.recall = tune_search(
            index, probes=truth.queries, exact=truth.ranked(), target=target, cancel=cancel
        )
        clock["tune"] = time.perf_counter() - started
    report.seconds = {k: round(v, 2) for k, v in clock.items()}
    index.build_report = report
    return index, report
