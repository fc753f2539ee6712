"""A FAISS inner-product index over every name of every concept, saved beside a JSON row sidecar.

Three kinds, chosen by size (`NameIndex.kind_for`), measured with
`core.evaluate.bench_retrieval.compare_index_kinds` on MEDIC (73k names, 800 distinct NCBI mention
strings, fetching 256 names as retrieval does, quiet 2-core machine):
- exact `IndexFlatIP` below `HNSW_THRESHOLD` names (3,690 queries/s at 73k);
- HNSW (M=32, efConstruction 80, efSearch 128) up to `IVF_THRESHOLD`: 8.9 s to build, 5,210
  queries/s, 98.65 % of the exact top-64 names and 99.75 % of the exact top-1 kept (efSearch 64:
  8,541 q/s, 97.1 %; efSearch 256: 3,032 q/s, 99.45 %); no training, takes `add` directly;
- IVF-Flat (nlist = 4 sqrt(n), nprobe 32) above: k-means on a sample, cheap to build (1.9 s at 73k)
  and each later `add` joins the existing lists, but it kept only 83.5 % of the exact top-64 names
  at nprobe 32 (78.9 % at 16), so it is reserved for sizes where HNSW's build time and graph memory
  are out of reach on a laptop.
File names carry the KB fingerprint and the model version, so an index is rebuilt only when either
changes.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

import faiss
import numpy as np

from core.errors import ModelError
from core.kb.knowledge_base import NameEntry
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from core.retrieve.base import ConceptCodes

log = logging.getLogger(__name__)

HNSW_THRESHOLD = 50_000
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 80
HNSW_EF_SEARCH = 128
IVF_THRESHOLD = 5_000_000
IVF_NPROBE = 32
IVF_TRAIN_PER_LIST = 40
SEARCH_BATCH = 4096


def index_stem(kb_fingerprint: str, model_version: str) -> str:
    return f"{kb_fingerprint}-{model_version}"


def adopt_legacy_index(folder: Path, legacy_stem: str, stem: str) -> None:
    """Rename an index saved under an older naming scheme to `stem` (no rebuild of the same vectors)."""
    if legacy_stem == stem or NameIndex.exists(folder, stem) or not NameIndex.exists(folder, legacy_stem):
        return
    try:
        for suffix in (".faiss", ".json"):
            (folder / f"{legacy_stem}{suffix}").replace(folder / f"{stem}{suffix}")
    except OSError as exc:  # a read-only copy: the index is rebuilt in memory
        log.warning("%s: could not rename index %s (%s)", folder, legacy_stem, exc)


class NameIndex:
    """Vectors of names plus, row for row, the (name, concept id, preferred) each vector stands for."""

    def __init__(self, dim: int, kind: str = "flat", expected_size: int = 0):
        if kind not in ("flat", "hnsw", "ivf"):
            raise ModelError(f"unknown index kind {kind!r} (flat, hnsw or ivf)")
        self.dim = dim
        self.kind = kind
        self.rows: list[NameEntry] = []
        self.codes = ConceptCodes()
        if kind == "flat":
            self.faiss = faiss.IndexFlatIP(dim)
        elif kind == "ivf":
            nlist = max(1, int(4 * np.sqrt(max(expected_size, 1))))
            self.faiss = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, nlist, faiss.METRIC_INNER_PRODUCT)
            self.faiss.nprobe = IVF_NPROBE
        else:
            self.faiss = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
            self.faiss.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
            self.faiss.hnsw.efSearch = HNSW_EF_SEARCH

    @classmethod
    def kind_for(cls, size: int, threshold: int = HNSW_THRESHOLD) -> str:
        if size < threshold:
            return "flat"
        return "hnsw" if size < IVF_THRESHOLD else "ivf"

    @classmethod
    def build(
        cls,
        vectors: np.ndarray,
        rows: Sequence[NameEntry],
        *,
        kind: str | None = None,
        progress: ProgressFn = no_progress,
        cancel: CancelToken = NEVER_CANCELLED,
    ) -> NameIndex:
        index = cls(vectors.shape[1], kind or cls.kind_for(len(rows)), len(rows))
        if index.kind == "ivf" and len(rows):
            index.train(vectors)
        index.add(vectors, rows, progress=progress, cancel=cancel)
        return index

    def __len__(self) -> int:
        return len(self.rows)

    def train(self, vectors: np.ndarray, seed: int = 0) -> None:
        """IVF only: k-means on an evenly drawn sample (enough for stable lists, far cheaper than all)."""
        nlist = self.faiss.nlist
        sample = min(len(vectors), nlist * IVF_TRAIN_PER_LIST)
        picks = np.random.default_rng(seed).choice(len(vectors), size=sample, replace=False)
        self.faiss.train(np.ascontiguousarray(vectors[np.sort(picks)], dtype=np.float32))

    def add(
        self,
        vectors: np.ndarray,
        rows: Sequence[NameEntry],
        *,
        progress: ProgressFn = no_progress,
        cancel: CancelToken = NEVER_CANCELLED,
    ) -> None:
        """Append names (new synonyms, curator additions) without rebuilding."""
        if len(vectors) != len(rows):
            raise ValueError(f"{len(vectors)} vectors for {len(rows)} names")
        if len(rows) and vectors.shape[1] != self.dim:
            raise ModelError(f"vectors of dim {vectors.shape[1]} for an index of dim {self.dim}")
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        step = 50_000
        for start in range(0, len(rows), step):
            cancel.raise_if_cancelled()
            self.faiss.add(vectors[start : start + step])
            self.rows.extend(rows[start : start + step])
            self.codes.extend(rows[start : start + step])
            progress(min(start + step, len(rows)), len(rows), "indexing names")

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Batched top-k (scores, row ids); ids are -1 where fewer than k names exist."""
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        if len(self.rows) == 0 or len(queries) == 0:
            return (
                np.full((len(queries), k), -np.inf, dtype=np.float32),
                np.full((len(queries), k), -1, dtype=np.int64),
            )
        scores = np.empty((len(queries), k), dtype=np.float32)
        ids = np.empty((len(queries), k), dtype=np.int64)
        for start in range(0, len(queries), SEARCH_BATCH):
            s, i = self.faiss.search(queries[start : start + SEARCH_BATCH], k)
            scores[start : start + len(s)] = s
            ids[start : start + len(i)] = i
        return scores, ids

    def save(self, folder: str | Path, stem: str) -> Path:
        """`<stem>.faiss` + `<stem>.json` (kind, dim and the name rows)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{stem}.faiss"
        faiss.write_index(self.faiss, str(path))
        sidecar = {
            "kind": self.kind,
            "dim": self.dim,
            "rows": [[r.name, r.concept_id, int(r.preferred)] for r in self.rows],
        }
        (folder / f"{stem}.json").write_text(json.dumps(sidecar, ensure_ascii=False))
        return path

    @classmethod
    def load(cls, folder: str | Path, stem: str) -> NameIndex:
        folder = Path(folder)
        path, sidecar_path = folder / f"{stem}.faiss", folder / f"{stem}.json"
        if not path.is_file() or not sidecar_path.is_file():
            raise ModelError(f"{folder}: no index {stem} (.faiss + .json)")
        try:
            sidecar = json.loads(sidecar_path.read_text())
        except json.JSONDecodeError as exc:
            raise ModelError(f"{sidecar_path}: not valid JSON ({exc})") from exc
        index = cls.__new__(cls)
        index.dim = int(sidecar["dim"])
        index.kind = sidecar["kind"]
        index.faiss = faiss.read_index(str(path))
        if index.kind == "hnsw":
            index.faiss.hnsw.efSearch = HNSW_EF_SEARCH
        elif index.kind == "ivf":
            index.faiss.nprobe = IVF_NPROBE
        index.rows = [NameEntry(name, cid, bool(pref)) for name, cid, pref in sidecar["rows"]]
        index.codes = ConceptCodes(index.rows)
        if index.faiss.ntotal != len(index.rows):
            raise ModelError(
                f"{path}: {index.faiss.ntotal} vectors but {len(index.rows)} rows in the sidecar"
            )
        return index

    @staticmethod
    def exists(folder: str | Path, stem: str) -> bool:
        folder = Path(folder)
        return (folder / f"{stem}.faiss").is_file() and (folder / f"{stem}.json").is_file()
