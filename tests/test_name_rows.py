"""The name index's compact row table: every row comes back exactly (non-ASCII names included), the file
is read through a memory map, appended rows survive a save, a damaged or crafted file is refused, and a
row costs its name's bytes plus 13 (not a Python object each)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from core.kb.knowledge_base import NameEntry
from core.retrieve.index import NameIndex
from core.retrieve.index_file import IndexDamaged, file_digest
from core.retrieve.name_rows import MAGIC, NameRows

ROWS = [
    NameEntry("Behçet's disease", "D001528", True),
    NameEntry("β-thalassemia", "D017086", True),
    NameEntry("beta-Thalassemia", "D017086", False),
    NameEntry("Sjögren syndrome", "D012859", True),
    NameEntry("cafe\u0301 au lait spots", "D002116", True),  # a combining accent: two code points
    NameEntry("", "C000001", False),
    NameEntry("腎臓病", "D007674", False),
    NameEntry("Sjögren syndrome", "OMIM:270150", False),  # one name, two concepts
]


def _vectors(count: int, dim: int = 8, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((count, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_rows_round_trip_exactly_through_a_memory_map(tmp_path: Path) -> None:
    NameRows.of(ROWS).save(tmp_path / "t.rows")
    loaded = NameRows.load(tmp_path / "t.rows", len(ROWS))
    assert list(loaded) == ROWS
    assert loaded[-1] == ROWS[-1] and loaded[2:4] == ROWS[2:4]
    assert isinstance(loaded.names.blob, np.memmap) and isinstance(loaded.codes, np.memmap)
    with pytest.raises(IndexError):
        loaded[len(ROWS)]


def test_an_index_saves_three_files_and_rows_appended_after_loading_are_kept(tmp_path: Path) -> None:
    vectors = _vectors(len(ROWS) + 2)
    NameIndex.build(vectors[: len(ROWS)], ROWS).save(tmp_path, "stem")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stem.faiss", "stem.json", "stem.rows"]
    assert "rows" not in json.loads((tmp_path / "stem.json").read_text())
    loaded = NameIndex.load(tmp_path, "stem")
    added = [NameEntry("Behcet syndrome", "D001528", False), NameEntry("new concept", "C999999", True)]
    loaded.add(vectors[len(ROWS) :], added)  # a curator synonym and a new concept, on the mapped base
    assert list(loaded.rows) == ROWS + added
    # the concept codes still group names by concept: the appended synonym shares Behçet's code
    codes = loaded.codes.codes
    assert codes[len(ROWS)] == codes[0] and codes[len(ROWS) + 1] not in codes[: len(ROWS)]
    loaded.save(tmp_path, "stem")
    again = NameIndex.load(tmp_path, "stem")
    assert list(again.rows) == ROWS + added and again.faiss.ntotal == len(ROWS) + 2


def _write_with_recorded_hash(tmp_path: Path, data: bytes) -> None:
    """Put crafted bytes in stem.rows and record their length and hash, so only the structure tells."""
    (tmp_path / "stem.rows").write_bytes(data)
    sidecar = json.loads((tmp_path / "stem.json").read_text())
    sidecar["rows_file"].update(bytes=len(data), sha256=file_digest(tmp_path / "stem.rows"))
    (tmp_path / "stem.json").write_text(json.dumps(sidecar))


def test_damaged_or_crafted_row_files_are_refused(tmp_path: Path) -> None:
    NameIndex.build(_vectors(len(ROWS)), ROWS).save(tmp_path, "stem")
    whole = (tmp_path / "stem.rows").read_bytes()
    (length,) = struct.unpack_from("<Q", whole, len(MAGIC))
    header = json.loads(whole[len(MAGIC) + 8 : len(MAGIC) + 8 + length])
    start = (len(MAGIC) + 8 + length + 7) // 8 * 8
    last = header["arrays"]["concepts"]
    data_end = start + last["offset"] + last["count"]  # the file's alignment padding comes after
    for cut in (0, 5, len(MAGIC) + 4, len(whole) // 2, data_end - 1):
        (tmp_path / "stem.rows").write_bytes(whole[:cut])  # as a crash or a copy would leave it
        with pytest.raises(IndexDamaged, match="not the file its sidecar recorded"):
            NameIndex.load(tmp_path, "stem")
        _write_with_recorded_hash(tmp_path, whole[:cut])  # the same, made to look recorded
        with pytest.raises(IndexDamaged):
            NameIndex.load(tmp_path, "stem")
    crafted = {
        "a concept code outside": ("concept_codes", "<i4", 1000),
        "offsets do not cover": ("name_ends", "<i8", 1 << 40),
        "preferred flag": ("preferred", "u1", 7),
    }
    for message, (key, dtype, value) in crafted.items():
        data = bytearray(whole)
        struct.pack_into(
            {"<i4": "<i", "<i8": "<q", "u1": "B"}[dtype], data, start + header["arrays"][key]["offset"], value
        )
        _write_with_recorded_hash(tmp_path, bytes(data))
        with pytest.raises(IndexDamaged, match=message):
            NameIndex.load(tmp_path, "stem")
    (tmp_path / "stem.rows").unlink()
    with pytest.raises(IndexDamaged, match="missing"):
        NameIndex.load(tmp_path, "stem")


def test_a_row_costs_its_name_bytes_plus_thirteen(tmp_path: Path) -> None:
    """The rule behind the memory figure: per row an 8-byte end, a 4-byte concept code, a preferred byte
    and the UTF-8 name; each distinct concept id once (plus its 8-byte end); 8-byte alignment at most."""
    rows = [
        NameEntry(f"synthetic name {i} of concept {i // 5}", f"C{i // 5:07d}", i % 5 == 0)
        for i in range(5000)
    ]
    NameRows.of(rows).save(tmp_path / "t.rows")
    names = sum(len(r.name.encode()) for r in rows)
    concepts = len({r.concept_id for r in rows})
    arrays = names + 13 * len(rows) + concepts * (8 + len("C0000000"))
    size = (tmp_path / "t.rows").stat().st_size
    assert arrays <= size <= arrays + 6 * 8 + 1024  # six arrays' padding and the header


def test_a_rows_file_linked_from_outside_the_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "index"
    NameIndex.build(_vectors(len(ROWS)), ROWS).save(folder, "stem")
    outside = tmp_path / "elsewhere.rows"
    (folder / "stem.rows").rename(outside)
    (folder / "stem.rows").symlink_to(outside)
    with pytest.raises(IndexDamaged, match="symbolic link"):
        NameIndex.load(folder, "stem")
