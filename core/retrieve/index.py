"""A FAISS inner-product index over every name of every concept, saved beside a JSON row sidecar.

Exact `IndexFlatIP` below `HNSW_THRESHOLD` names; above it HNSW (M=32, efSearch=128), chosen over
IVF-Flat because it needs no training pass, accepts `add` without re-clustering, and measured a
higher recall@64 per query-millisecond on MEDIC-sized and 1M synthetic sets (see the report and
`core.evaluate.bench_retrieval`). File names carry the KB fingerprint and the model version, so an
index is rebuilt only when either changes.
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

log = logging.getLogger(__name__)

HNSW_THRESHOLD = 50_000
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 80
HNSW_EF_SEARCH = 128
SEARCH_BATCH = 4096


def index_stem(kb_fingerprint: str, model_version: str) -> str:
    return f"{kb_fingerprint}-{model_version}"


class NameIndex:
    """Vectors of names plus, row for row, the (name, concept id, preferred) each vector stands for."""

    def __init__(self, dim: int, kind: str = "flat"):
        if kind not in ("flat", "hnsw"):
            raise ModelError(f"unknown index kind {kind!r} (flat or hnsw)")
        self.dim = dim
        self.kind = kind
        self.rows: list[NameEntry] = []
        if kind == "flat":
            self.faiss = faiss.IndexFlatIP(dim)
        else:
            self.faiss = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
            self.faiss.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
            self.faiss.hnsw.efSearch = HNSW_EF_SEARCH

    @classmethod
    def kind_for(cls, size: int, threshold: int = HNSW_THRESHOLD) -> str:
        return "flat" if size < threshold else "hnsw"

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
        index = cls(vectors.shape[1], kind or cls.kind_for(len(rows)))
        index.add(vectors, rows, progress=progress, cancel=cancel)
        return index

    def __len__(self) -> int:
        return len(self.rows)

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
        index.rows = [NameEntry(name, cid, bool(pref)) for name, cid, pref in sidecar["rows"]]
        if index.faiss.ntotal != len(index.rows):
            raise ModelError(
                f"{path}: {index.faiss.ntotal} vectors but {len(index.rows)} rows in the sidecar"
            )
        return index

    @staticmethod
    def exists(folder: str | Path, stem: str) -> bool:
        folder = Path(folder)
        return (folder / f"{stem}.faiss").is_file() and (folder / f"{stem}.json").is_file()
