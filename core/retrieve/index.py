"""A FAISS inner-product index over every name of every concept, saved as `<stem>.faiss`, its name rows
(`<stem>.rows`, core.retrieve.name_rows: compact and memory-mapped) and a JSON sidecar.

Five kinds, chosen by size (`NameIndex.kind_for`); measured with
`bench.retrieval.compare_index_kinds` on MEDIC (73k names, 800 distinct NCBI mention
strings, fetching 256 names as retrieval does, quiet 2-core machine) and with `curalink bench index`
on synthetic MRCONSO names (README, "A UMLS-size name index"):
- exact `IndexFlatIP` below `HNSW_THRESHOLD` names (3,690 queries/s at 73k);
- HNSW (M=32, efConstruction 80, efSearch 128) below `COMPRESSED_THRESHOLD` (200,000): 8.9 s to build, 5,210
  queries/s, 98.65 % of the exact top-64 names and 99.75 % of the exact top-1 kept (efSearch 64:
  8,541 q/s, 97.1 %; efSearch 256: 3,032 q/s, 99.45 %); no training, takes `add` directly; but it
  keeps every float (1 KB a name at 256 dimensions) plus its graph, 1.2 GB at a million names;
- IVF-SQ8 (`COMPRESSED_KIND`) above: one byte a dimension (a quarter of the floats), k-means lists,
  `nprobe` tuned at build so the exact top-64 is kept (see `core.retrieve.index_build`); IVF-PQ (64
  bytes a name) was measured beside it and lost too much of the top-64 (README);
- IVF-SQ6 (`LAPTOP_KIND`) from `LAPTOP_THRESHOLD` names: six bits a dimension, so a full UMLS stays
  under 4 GiB; on trained vectors it kept 96.7 % of the exact top-64 where SQ8 kept 98.5 % (README);
- `ivf` (IVF-Flat, the kind earlier versions used above five million names) still loads and can be
  asked for, but is no longer chosen: IVF-SQ8 keeps the same lists at a quarter of the memory.
The sidecar records the kind, the search setting and the recall against exact search measured at
build. File names carry the KB fingerprint and the model version, so an index is rebuilt only when
either changes. Every file is written by temp-and-rename, the sidecar last, recording the `.faiss` and
`.rows` files' lengths and hashes; `load` refuses anything that does not check out (`IndexDamaged`), and the
retriever rebuilds it.

A name taken out of the KB after the build (a withdrawn curator synonym) keeps its vector: its row is
hidden (`hide`), and the hidden rows are saved in the sidecar (`hidden`), so the index saved for the KB
without that name is found at the next start instead of rebuilt (75-90 s on MEDIC). A full build has
none: that is where hidden rows are compacted away.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path

import faiss
import numpy as np

from core.atomic_files import atomic_path, write_text_atomic
from core.errors import CuralinkError, ModelError
from core.kb.knowledge_base import NameEntry
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from core.retrieve.base import ConceptCodes
from core.retrieve.index_file import IndexDamaged, file_digest, read_checked_index
from core.retrieve.name_rows import NameRows

log = logging.getLogger(__name__)

KINDS = ("flat", "hnsw", "ivf", "ivf-sq8", "ivf-sq6", "ivf-pq")
IVF_KINDS = ("ivf", "ivf-sq8", "ivf-sq6", "ivf-pq")
HNSW_THRESHOLD = 50_000
COMPRESSED_THRESHOLD = 200_000
"""From this many names the compressed kind: HNSW keeps every float plus its graph (~1.2 GB at a million
names). At the MeSH 2024 recipe's 305,000 names that was the largest part of `link --detect`'s memory,
which must stay under 1.5 GB with the KB and the dictionary tagger loaded beside it (issue 30);
IVF-SQ8 holds a quarter of the floats and is built chunk by chunk."""
COMPRESSED_KIND = "ivf-sq8"
LAPTOP_THRESHOLD = 10_000_000
"""From here the smaller codes of `LAPTOP_KIND`: IVF-SQ8 and the mapped rows pass ~3 GiB at 10 M names and
4 GiB at ~14 M (a full English UMLS is ~15 M), IVF-SQ6 keeps 15 M names at 2.8 GiB."""
LAPTOP_KIND = "ivf-sq6"
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 80
HNSW_EF_SEARCH = 128
IVF_NPROBE = 32
"""The search setting of an IVF index whose sidecar records none (built before tuning at build)."""
IVF_TRAIN_PER_LIST = 40
IVF_KMEANS_ITERATIONS = 10
"""FAISS's default is 25; list quality hardly changes after 10 and k-means is most of the build."""
PQ_DIMS_PER_BYTE = 4
"""IVF-PQ: one 8-bit code per 4 dimensions (64 bytes a 256-dimensional name)."""
SEARCH_BATCH = 4096
SIDECAR_FORMAT = 5
"""1 (no `format` key): kind, dim, rows; 2 adds the `.faiss` file's length and SHA-256; 3 adds the
search setting (`search`) and the recall measured at build (`recall`); 4 moves the rows to the `.rows`
file (`rows_file`: count, length, SHA-256); 5 adds the hidden rows (`hidden`: ascending row numbers,
absent when none). Formats 1-4 still load."""


def index_stem(kb_fingerprint: str, model_version: str) -> str:
    return f"{kb_fingerprint}-{model_version}"


def adopt_legacy_index(folder: Path, legacy_stem: str, stem: str) -> None:
    """Rename an index saved under an older naming scheme to `stem` (no rebuild of the same vectors)."""
    if legacy_stem == stem or NameIndex.exists(folder, stem) or not NameIndex.exists(folder, legacy_stem):
        return
    try:
        for suffix in (".faiss", ".rows", ".json"):
            if (folder / f"{legacy_stem}{suffix}").exists():
                (folder / f"{legacy_stem}{suffix}").replace(folder / f"{stem}{suffix}")
    except OSError as exc:  # a read-only copy: the index is rebuilt in memory
        log.warning("%s: could not rename index %s (%s)", folder, legacy_stem, exc)


class NameIndex:
    """Vectors of names plus, row for row, the (name, concept id, preferred) each vector stands for."""

    def __init__(self, dim: int, kind: str = "flat", expected_size: int = 0):
        if kind not in KINDS:
            raise ModelError(f"unknown index kind {kind!r} ({', '.join(KINDS)})")
        if kind == "ivf-pq" and dim % PQ_DIMS_PER_BYTE:
            raise ModelError(f"IVF-PQ needs a dimension divisible by {PQ_DIMS_PER_BYTE}, not {dim}")
        self.dim = dim
        self.kind = kind
        self.rows = NameRows()
        self.codes = ConceptCodes()
        self.search_params: dict[str, int] = {}
        self.recall: dict | None = None
        """Recall against exact search measured at build (`core.retrieve.index_build`), or None."""
        self.build_report = None  # timings of the streaming build that made it (not saved)
        self.hidden: np.ndarray | None = None
        """A mask over the rows: True for a name withdrawn since the build (searches skip it), or None."""
        if kind == "flat":
            self.faiss = faiss.IndexFlatIP(dim)
        elif kind in IVF_KINDS:
            nlist = max(1, int(4 * np.sqrt(max(expected_size, 1))))
            # "np": no polysemous training (minutes of extra k-means for a Hamming filter never used)
            codec = {
                "ivf": "Flat",
                "ivf-sq8": "SQ8",
                "ivf-sq6": "SQ6",
                "ivf-pq": f"PQ{dim // PQ_DIMS_PER_BYTE}np",
            }[kind]
            self.faiss = faiss.index_factory(dim, f"IVF{nlist},{codec}", faiss.METRIC_INNER_PRODUCT)
            self.faiss.cp.niter = IVF_KMEANS_ITERATIONS
            self.set_search({"nprobe": IVF_NPROBE})
        else:
            self.faiss = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
            self.faiss.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
            self.set_search({"efSearch": HNSW_EF_SEARCH})

    @classmethod
    def kind_for(
        cls,
        size: int,
        threshold: int = HNSW_THRESHOLD,
        compressed_threshold: int = COMPRESSED_THRESHOLD,
        laptop_threshold: int = LAPTOP_THRESHOLD,
    ) -> str:
        """Exact below `threshold`, HNSW up to `compressed_threshold`, IVF-SQ8 up to `laptop_threshold`,
        IVF-SQ6 from there."""
        if size < threshold:
            return "flat"
        if size < compressed_threshold:
            return "hnsw"
        return COMPRESSED_KIND if size < laptop_threshold else LAPTOP_KIND

    @property
    def approximate(self) -> bool:
        return self.kind != "flat"

    @property
    def needs_training(self) -> bool:
        return self.kind in IVF_KINDS

    def set_search(self, params: dict[str, int]) -> None:
        """The search setting (`nprobe` for IVF kinds, `efSearch` for HNSW); others are refused."""
        knob = "nprobe" if self.kind in IVF_KINDS else "efSearch" if self.kind == "hnsw" else None
        value = params.get(knob) if knob else None
        if knob is None or set(params) != {knob} or not isinstance(value, int) or value < 1:
            raise ModelError(f"search setting {params!r} for a {self.kind} index")
        if knob == "nprobe":
            self.faiss.nprobe = min(value, self.faiss.nlist)
        else:
            self.faiss.hnsw.efSearch = value
        self.search_params = {knob: value}

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
        """All vectors in memory (small KBs, tests); `core.retrieve.index_build` streams large ones.
        Approximate kinds get their search setting tuned against exact search on a sample of names."""
        from core.retrieve.index_build import tune_search

        index = cls(vectors.shape[1], kind or cls.kind_for(len(rows)), len(rows))
        if index.needs_training and len(rows):
            index.train(vectors)
        index.add(vectors, rows, progress=progress, cancel=cancel)
        if index.approximate and len(rows):
            tune_search(index, vectors, cancel=cancel)
        return index

    def __len__(self) -> int:
        return len(self.rows)

    def hide(self, row_ids: Sequence[int]) -> int:
        """Hide these rows from every search (their names left the KB); returns how many were newly hidden."""
        hidden = self.hidden if self.hidden is not None else np.zeros(len(self.rows), dtype=bool)
        wanted = np.asarray(sorted(set(row_ids)), dtype=np.int64)
        if len(wanted) and (wanted[0] < 0 or wanted[-1] >= len(hidden)):
            raise ModelError(f"hiding rows outside the index's {len(hidden)} rows")
        count = int((~hidden[wanted]).sum()) if len(wanted) else 0
        if count:
            hidden[wanted] = True
            self.hidden = hidden
        return count

    def visible_rows(self):
        """The rows that searches can return (all but the hidden ones), in row order."""
        if self.hidden is None:
            return iter(self.rows)
        return (row for row, hidden in zip(self.rows, self.hidden.tolist()) if not hidden)

    def visible_count(self) -> int:
        return len(self.rows) - (int(self.hidden.sum()) if self.hidden is not None else 0)

    def train(self, vectors: np.ndarray, seed: int = 0) -> None:
        """IVF only: k-means on an evenly drawn sample (enough for stable lists, far cheaper than all)."""
        sample = min(len(vectors), self.training_size())
        picks = np.random.default_rng(seed).choice(len(vectors), size=sample, replace=False)
        self.faiss.train(np.ascontiguousarray(vectors[np.sort(picks)], dtype=np.float32))

    def training_size(self) -> int:
        """Vectors the IVF k-means wants (0 for kinds without training)."""
        return self.faiss.nlist * IVF_TRAIN_PER_LIST if self.needs_training else 0

    def add_at(self, vectors: np.ndarray, positions: np.ndarray) -> None:
        """Vectors for rows already in `self.rows`, in any order (IVF kinds; the others take them in
        order only): the streaming build adds its training sample first, then the rest."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        positions = np.asarray(positions, dtype=np.int64)
        if self.kind in IVF_KINDS:
            self.faiss.add_with_ids(vectors, positions)
            return
        if (
            len(positions)
            and not (positions == np.arange(self.faiss.ntotal, self.faiss.ntotal + len(positions))).all()
        ):
            raise ModelError(f"a {self.kind} index takes vectors in row order only")
        self.faiss.add(vectors)

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
        if not len(self.rows):  # a build: the compact table at once (a cancel discards the index)
            self.rows = NameRows.of(rows)
            self.codes = ConceptCodes.of_rows(self.rows)
        step = 50_000
        for start in range(0, len(rows), step):
            cancel.raise_if_cancelled()
            self.faiss.add(vectors[start : start + step])
            if len(self.rows) < self.faiss.ntotal:
                self.rows.extend(rows[start : start + step])
                self.codes.extend(rows[start : start + step])
                if self.hidden is not None:  # appended names are visible
                    self.hidden = np.concatenate(
                        [self.hidden, np.zeros(len(self.rows) - len(self.hidden), bool)]
                    )
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
        """`<stem>.faiss`, `<stem>.rows` (the name rows) and `<stem>.json` (kind, dim, both files'
        lengths and hashes, the search setting and recall).

        The sidecar goes last: a crash before it leaves a sidecar whose hashes no longer match, so the
        index is rebuilt, never trusted half-written. A failed write (disk full) raises
        FileWriteError naming the file and leaves the previous pair as it was."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{stem}.faiss"
        with atomic_path(path) as temporary:
            faiss.write_index(self.faiss, str(temporary))
            size, digest = temporary.stat().st_size, file_digest(temporary)
        self._save_rows_and_sidecar(folder, stem, size, digest)
        return path

    def _save_rows_and_sidecar(self, folder: Path, stem: str, faiss_bytes: int, faiss_sha256: str) -> None:
        rows_path = folder / f"{stem}.rows"
        self.rows.save(rows_path)
        sidecar = {
            "format": SIDECAR_FORMAT,
            "kind": self.kind,
            "dim": self.dim,
            "faiss_bytes": faiss_bytes,
            "faiss_sha256": faiss_sha256,
            "search": self.search_params,
            "recall": self.recall,
            "rows_file": {
                "count": len(self.rows),
                "bytes": rows_path.stat().st_size,
                "sha256": file_digest(rows_path),
            },
        }
        if self.hidden is not None and self.hidden.any():
            sidecar["hidden"] = np.flatnonzero(self.hidden).tolist()
        write_text_atomic(folder / f"{stem}.json", json.dumps(sidecar, ensure_ascii=False))

    @classmethod
    def load(cls, folder: str | Path, stem: str, dim: int | None = None) -> NameIndex:
        """The saved pair, checked (sidecar shape, file length and hash, FAISS structure, vector count and
        `dim` when given); anything else raises IndexDamaged naming the file and the problem."""
        folder = Path(folder)
        path, sidecar_path = folder / f"{stem}.faiss", folder / f"{stem}.json"
        if not path.is_file() or not sidecar_path.is_file():
            raise ModelError(f"{folder}: no index {stem} (.faiss + .json)")
        for file in (path, sidecar_path, folder / f"{stem}.rows"):  # (a missing .rows resolves to itself)
            real = os.path.realpath(file)
            if os.path.dirname(real) != os.path.realpath(folder):
                raise IndexDamaged(f"{file}: a symbolic link to {real}; an index is read only from {folder}")
        sidecar = _read_sidecar(sidecar_path)
        if dim is not None and sidecar["dim"] != dim:
            raise IndexDamaged(
                f"{sidecar_path}: vectors of dimension {sidecar['dim']}, the model makes {dim}"
            )
        index = cls.__new__(cls)
        index.dim = sidecar["dim"]
        index.kind = sidecar["kind"]
        rows_file = sidecar.get("rows_file")
        count = rows_file["count"] if rows_file else len(sidecar["rows"])
        index.faiss, file_bytes = read_checked_index(
            path,
            index.kind,
            index.dim,
            count,
            sidecar.get("faiss_bytes"),
            sidecar.get("faiss_sha256"),
        )
        index.recall = sidecar.get("recall")
        index.build_report = None
        index.search_params = {}
        if index.approximate:  # an older sidecar has no setting: the defaults it was built for
            default = {"efSearch": HNSW_EF_SEARCH} if index.kind == "hnsw" else {"nprobe": IVF_NPROBE}
            try:
                index.set_search(sidecar.get("search") or default)
            except ModelError as exc:
                raise IndexDamaged(f"{sidecar_path}: {exc}") from exc
        if rows_file:
            index.rows = _load_rows(folder, stem, rows_file, count)
        else:  # formats 1-3: the rows in the sidecar itself
            index.rows = NameRows.of(NameEntry(name, cid, bool(pref)) for name, cid, pref in sidecar["rows"])
        index.codes = ConceptCodes.of_rows(index.rows)
        index.hidden = _hidden_mask(sidecar_path, sidecar.get("hidden"), count)
        if index.faiss.ntotal != len(index.rows) or index.faiss.d != index.dim:
            raise IndexDamaged(
                f"{path}: {index.faiss.ntotal} vectors of dimension {index.faiss.d}, but {len(index.rows)} "
                f"rows of dimension {index.dim} in the sidecar"
            )
        if "faiss_sha256" not in sidecar or not rows_file:  # an older sidecar, now checked: the index is
            # written in the current format (hashes recorded, rows in their file), the .faiss untouched
            try:
                index._save_rows_and_sidecar(folder, stem, file_bytes, file_digest(path))
            except CuralinkError as exc:  # a read-only copy: checked again next time
                log.warning("%s", exc)
        return index

    @staticmethod
    def exists(folder: str | Path, stem: str) -> bool:
        folder = Path(folder)
        return (folder / f"{stem}.faiss").is_file() and (folder / f"{stem}.json").is_file()


def _load_rows(folder: Path, stem: str, recorded: dict, count: int) -> NameRows:
    """The `.rows` file the sidecar names (not a link out of the folder: `load` checked), its length and
    hash as recorded, read through a memory map."""
    path = folder / f"{stem}.rows"
    if not path.is_file():
        raise IndexDamaged(f"{path}: missing (its sidecar names it)")
    if path.stat().st_size != recorded["bytes"] or file_digest(path) != recorded["sha256"]:
        raise IndexDamaged(f"{path}: not the file its sidecar recorded (length or hash differ)")
    return NameRows.load(path, count)


def _hidden_mask(path: Path, recorded: object, count: int) -> np.ndarray | None:
    """The sidecar's hidden rows as a mask: ascending, distinct row numbers inside the index, or
    IndexDamaged."""
    if recorded is None:
        return None
    if not isinstance(recorded, list) or not all(
        isinstance(r, int) and not isinstance(r, bool) and 0 <= r < count for r in recorded
    ):
        raise IndexDamaged(f"{path}: its hidden rows are not row numbers of the index's {count} rows")
    if any(a >= b for a, b in zip(recorded, recorded[1:])):
        raise IndexDamaged(f"{path}: its hidden rows are not in ascending order without repeats")
    mask = np.zeros(count, dtype=bool)
    mask[recorded] = True
    return mask if len(recorded) else None


def _read_sidecar(path: Path) -> dict:
    """The sidecar as a dict of checked types, or IndexDamaged naming the file and what is wrong."""
    try:
        sidecar = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError, MemoryError) as exc:
        raise IndexDamaged(f"{path}: not a readable index sidecar ({type(exc).__name__}: {exc})") from exc
    if not isinstance(sidecar, dict):
        raise IndexDamaged(f"{path}: not an index sidecar (a JSON object is expected)")
    kind, dim, rows = sidecar.get("kind"), sidecar.get("dim"), sidecar.get("rows")
    if kind not in KINDS:
        raise IndexDamaged(f"{path}: unknown index kind {kind!r}")
    if not isinstance(dim, int) or isinstance(dim, bool) or not 0 < dim <= 65536:
        raise IndexDamaged(f"{path}: bad vector dimension {dim!r}")
    if "rows_file" in sidecar:
        _check_rows_record(path, sidecar["rows_file"])
        rows = []
    elif not isinstance(rows, list):
        raise IndexDamaged(f"{path}: no list of name rows")
    for number, row in enumerate(rows, 1):
        if (
            not isinstance(row, list)
            or len(row) != 3
            or not isinstance(row[0], str)
            or not isinstance(row[1], str)
            or row[2] not in (0, 1)
        ):
            raise IndexDamaged(f"{path}: name row {number} is not [name, concept id, 0 or 1]: {row!r:.80}")
    for key in ("faiss_bytes",):
        if key in sidecar and (not isinstance(sidecar[key], int) or sidecar[key] < 0):
            raise IndexDamaged(f"{path}: bad {key} {sidecar[key]!r}")
    if "faiss_sha256" in sidecar and not isinstance(sidecar["faiss_sha256"], str):
        raise IndexDamaged(f"{path}: bad faiss_sha256")
    if not isinstance(sidecar.get("search") or {}, dict) or not isinstance(sidecar.get("recall") or {}, dict):
        raise IndexDamaged(f"{path}: bad search setting or recall record")
    return sidecar


def _check_rows_record(path: Path, record: object) -> None:
    if (
        not isinstance(record, dict)
        or not all(
            isinstance(record.get(k), int) and not isinstance(record.get(k), bool) for k in ("count", "bytes")
        )
        or record["count"] < 0
        or not isinstance(record.get("sha256"), str)
    ):
        raise IndexDamaged(f"{path}: bad rows_file record {record!r:.80}")
