"""Checks of a saved name index before FAISS reads it.

`faiss.read_index` trusts every size field of the file: a truncated file is a RuntimeError, but a size
field set to a billion made it allocate 4 GB and spend 5-50 s before failing (measured here). So the
sidecar records the `.faiss` file's length and SHA-256 (a kill -9 or a full disk between the two files,
or any damage, is caught), and the structure of the flat and HNSW files Curalink writes is walked with
every size bounded by the bytes that are there (IVF files, used above five million names, rely on the
hash). A failed check raises `IndexDamaged`; the retriever then rebuilds the index.
"""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path

from core.errors import ModelError

FOURCC = {"flat": b"IxFI", "hnsw": b"IHNf", "ivf": b"IwFl"}
_HEADER = struct.Struct("<4siqqqBi")  # fourcc, d, ntotal, two dummies, is_trained, metric type
_HNSW_VECTORS = (("assign_probas", 8), ("cum_nneighbor_per_level", 4), ("levels", 4), ("offsets", 8))
_HNSW_NEIGHBORS = 4
_HNSW_SCALARS = 5 * 4  # entry point, max level, efConstruction, efSearch, upper beam


class IndexDamaged(ModelError):
    """A saved index that cannot be trusted (truncated, disagreeing with its sidecar, not FAISS)."""


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _flat_size(count: int, dim: int) -> int:
    return _HEADER.size + 8 + 4 * count * dim


def _check_header(data: bytes, offset: int, path: Path, fourcc: bytes, dim: int, count: int) -> None:
    if len(data) - offset < _HEADER.size:
        raise IndexDamaged(f"{path}: truncated ({len(data)} bytes)")
    found, d, ntotal, _, _, _, metric = _HEADER.unpack_from(data, offset)
    if found != fourcc:
        raise IndexDamaged(
            f"{path}: not a FAISS index of the kind its sidecar names ({found!r}, not {fourcc!r})"
        )
    if d != dim or ntotal != count or metric != 0:  # 0: inner product, the only metric Curalink uses
        raise IndexDamaged(
            f"{path}: holds {ntotal} vectors of dimension {d} (metric {metric}); its sidecar says {count} of {dim}"
        )


def _check_hnsw(data: bytes, path: Path, dim: int, count: int) -> None:
    offset = _HEADER.size
    for name, width in (*_HNSW_VECTORS, ("neighbors", _HNSW_NEIGHBORS)):
        if len(data) - offset < 8:
            raise IndexDamaged(f"{path}: truncated in the HNSW graph ({name})")
        (length,) = struct.unpack_from("<Q", data, offset)
        if length > (len(data) - offset - 8) // width:
            raise IndexDamaged(f"{path}: HNSW {name} of {length} entries does not fit in the file")
        expected = {"levels": count, "offsets": count + 1}.get(name)
        if expected is not None and length != expected:
            raise IndexDamaged(f"{path}: HNSW {name} has {length} entries for {count} vectors")
        offset += 8 + width * length
    offset += _HNSW_SCALARS
    _check_flat(data, offset, path, dim, count)


def _check_flat(data: bytes, offset: int, path: Path, dim: int, count: int) -> None:
    """A flat index from `offset` to the end: header, then the vector table's length field, then exactly
    that many floats."""
    _check_header(data, offset, path, FOURCC["flat"], dim, count)
    if len(data) - offset != _flat_size(count, dim):
        raise IndexDamaged(f"{path}: {len(data)} bytes for {count} vectors of dimension {dim} (truncated)")
    (floats,) = struct.unpack_from("<Q", data, offset + _HEADER.size)
    if floats != count * dim:
        raise IndexDamaged(f"{path}: its vector table claims {floats} numbers; {count} x {dim} are stored")


def checked_faiss_bytes(
    path: Path, kind: str, dim: int, count: int, size: int | None, sha256: str | None
) -> bytes:
    """The bytes of `path` if it is the file its sidecar describes, bounded in every size field; else
    IndexDamaged. (FAISS then deserialises these bytes: the file is read once.)"""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise IndexDamaged(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    if size is not None and len(data) != size:
        raise IndexDamaged(f"{path}: {len(data)} bytes, its sidecar recorded {size} (truncated or replaced)")
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise IndexDamaged(f"{path}: content differs from what its sidecar recorded (damaged or replaced)")
    fourcc = FOURCC.get(kind)
    if fourcc is None:
        raise IndexDamaged(f"{path}: unknown index kind {kind!r} in its sidecar")
    if kind == "flat":
        _check_flat(data, 0, path, dim, count)
        return data
    _check_header(data, 0, path, fourcc, dim, count)
    if kind == "hnsw":
        _check_hnsw(data, path, dim, count)
    return data
