"""Checks of a saved name index before FAISS reads it.

`faiss.read_index` trusts every size field of the file: a truncated file is a RuntimeError, but a size
field set to a billion made it allocate 4 GB and spend 5-50 s before failing (measured here). So the
sidecar records the `.faiss` file's length and SHA-256 (a kill -9 or a full disk between the two files,
or any damage, is caught), and the structure of every kind Curalink writes (flat, HNSW, and the IVF
files: IVF-Flat, IVF-SQ8, IVF-PQ) is walked with every size bounded by the bytes that are there. A
failed check raises `IndexDamaged`; the retriever then rebuilds the index.

The file is mapped, not read into a `bytes` copy: a 15 M-name compressed index is ~3.7 GB, and a copy
plus FAISS's own arrays would double the peak. FAISS reads the same mapped (checked) bytes through a
callback, so what it reads is what was checked.
"""

from __future__ import annotations

import hashlib
import mmap
import struct
from pathlib import Path

import faiss

from core.errors import ModelError

FOURCC = {
    "flat": b"IxFI",
    "hnsw": b"IHNf",
    "ivf": b"IwFl",
    "ivf-sq8": b"IwSq",
    "ivf-sq6": b"IwSq",
    "ivf-pq": b"IwPQ",
}
SQ_BITS = {"ivf-sq8": (0, 8), "ivf-sq6": (6, 6)}
"""FAISS's ScalarQuantizer type (QT_8bit, QT_6bit) and bits a dimension of each scalar-quantized kind."""
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


def _vector(data, offset: int, path: Path, name: str, width: int) -> tuple[int, int]:
    """A FAISS vector field at `offset` (u64 length, then items): (length, offset after it), bounded."""
    if len(data) - offset < 8:
        raise IndexDamaged(f"{path}: truncated in the {name}")
    (length,) = struct.unpack_from("<Q", data, offset)
    if length > (len(data) - offset - 8) // width:
        raise IndexDamaged(f"{path}: {name} of {length} entries does not fit in the file")
    return length, offset + 8 + width * length


def _fields(data, offset: int, path: Path, layout: str, name: str) -> tuple[tuple, int]:
    size = struct.calcsize(layout)
    if len(data) - offset < size:
        raise IndexDamaged(f"{path}: truncated in the {name}")
    return struct.unpack_from(layout, data, offset), offset + size


def _check_ivf(data, path: Path, kind: str, dim: int, count: int) -> None:
    """IVF header, coarse quantizer (a flat index of the centroids), direct map, the codec of the kind,
    then the inverted lists, which must hold exactly `count` entries and end the file."""
    offset = _HEADER.size
    (nlist, _nprobe), offset = _fields(data, offset, path, "<QQ", "IVF header")
    if nlist == 0:  # (an nlist too large for the file fails on the centroid table below)
        raise IndexDamaged(f"{path}: an IVF index with no lists")
    _check_header(data, offset, path, FOURCC["flat"], dim, nlist)
    floats, offset = _vector(data, offset + _HEADER.size, path, "coarse centroids", 4)
    if floats != nlist * dim:
        raise IndexDamaged(f"{path}: {floats} centroid numbers for {nlist} lists of dimension {dim}")
    (map_type,), offset = _fields(data, offset, path, "<B", "direct map")
    _, offset = _vector(data, offset, path, "direct map", 8)
    if map_type == 2:
        _, offset = _vector(data, offset, path, "direct map hashtable", 16)
    if kind in SQ_BITS:
        (qtype, _stat, _arg, sq_dim, code_size), offset = _fields(data, offset, path, "<iifQQ", "quantizer")
        _, offset = _vector(data, offset, path, "quantizer ranges", 4)
        (code_again, _by_residual), offset = _fields(data, offset, path, "<QB", "quantizer")
        expected_type, bits = SQ_BITS[kind]
        if (
            qtype != expected_type
            or sq_dim != dim
            or code_size != code_again
            or code_size != (dim * bits + 7) // 8
        ):
            raise IndexDamaged(f"{path}: scalar quantizer of {sq_dim} dimensions and {code_size}-byte codes")
    elif kind == "ivf-pq":
        (_by_residual, code_size, pq_dim, m, nbits), offset = _fields(data, offset, path, "<BQQQQ", "PQ")
        floats, offset = _vector(data, offset, path, "PQ centroids", 4)
        if pq_dim != dim or nbits != 8 or m == 0 or code_size != m or floats != dim * 256:
            raise IndexDamaged(f"{path}: product quantizer of {pq_dim} dimensions, {m} x {nbits} bits")
    else:
        code_size = 4 * dim
    (fourcc, lists, list_code_size, layout), offset = _fields(data, offset, path, "<4sQQ4s", "inverted lists")
    if fourcc != b"ilar" or lists != nlist or list_code_size != code_size or layout not in (b"full", b"sprs"):
        raise IndexDamaged(f"{path}: inverted lists that do not match the index ({fourcc!r}, {lists} lists)")
    length, start = _vector(data, offset, path, "inverted list sizes", 8)
    sizes = struct.unpack_from(f"<{length}Q", data, offset + 8)
    if layout == b"full":
        counts = sizes if length == nlist else None
    else:
        pairs = list(zip(sizes[::2], sizes[1::2]))
        valid = length % 2 == 0 and all(i < nlist for i, _ in pairs)
        counts = [n for _, n in pairs] if valid else None
    if counts is None or sum(counts) != count:
        raise IndexDamaged(f"{path}: inverted list sizes do not add up to {count} vectors")
    if len(data) - start != count * (code_size + 8):
        raise IndexDamaged(
            f"{path}: {len(data) - start} bytes of list entries for {count} vectors (truncated)"
        )


def _check_structure(data, path: Path, kind: str, dim: int, count: int) -> None:
    fourcc = FOURCC.get(kind)
    if fourcc is None:
        raise IndexDamaged(f"{path}: unknown index kind {kind!r} in its sidecar")
    if kind == "flat":
        _check_flat(data, 0, path, dim, count)
        return
    _check_header(data, 0, path, fourcc, dim, count)
    if kind == "hnsw":
        _check_hnsw(data, path, dim, count)
    else:
        _check_ivf(data, path, kind, dim, count)


def read_checked_index(
    path: Path, kind: str, dim: int, count: int, size: int | None, sha256: str | None
) -> tuple[faiss.Index, int]:
    """The FAISS index in `path` and the file's length, if it is the file its sidecar describes, bounded
    in every size field; else IndexDamaged. (The mapped file is checked, then FAISS reads those bytes.)"""
    try:
        with path.open("rb") as handle:
            if handle.seek(0, 2) == 0:
                raise IndexDamaged(f"{path}: empty (truncated)")
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return _checked(data, path, kind, dim, count, size, sha256), len(data)
    except (OSError, ValueError) as exc:
        raise IndexDamaged(f"{path}: cannot be read ({getattr(exc, 'strerror', None) or exc})") from exc


def _checked(data: mmap.mmap, path: Path, kind, dim, count, size, sha256) -> faiss.Index:
    if size is not None and len(data) != size:
        raise IndexDamaged(f"{path}: {len(data)} bytes, its sidecar recorded {size} (truncated or replaced)")
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise IndexDamaged(f"{path}: content differs from what its sidecar recorded (damaged or replaced)")
    data.madvise(mmap.MADV_DONTNEED)  # the hash touched every page: let them go before FAISS's copy
    _check_structure(data, path, kind, dim, count)
    position = 0

    def read(wanted: int) -> bytes:
        nonlocal position
        chunk = data[position : position + wanted]
        position += len(chunk)
        done = position - position % mmap.PAGESIZE
        if done:  # pages FAISS has copied are dropped from this process as it goes
            data.madvise(mmap.MADV_DONTNEED, 0, done)
        return chunk

    try:
        return faiss.read_index(faiss.PyCallbackIOReader(read))
    except (RuntimeError, MemoryError) as exc:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[-1]
        raise IndexDamaged(f"{path}: FAISS cannot read it ({reason})") from exc
