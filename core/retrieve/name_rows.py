"""The name index's rows (name, concept, preferred), compact and saved as one memory-mapped binary file.

As Python objects a row cost ~320 bytes (a NameEntry, its name string and its own concept-id string):
4.65 GiB of rows beside a 3.7 GiB IVF-SQ8 index at 15 M names, and the JSON sidecar that held them
built every one of those objects at load. Here a row is its UTF-8 name in one buffer, an 8-byte end
offset, a 4-byte concept code and a preferred byte; distinct concept ids are held once, the same way.
Saved, the arrays sit in `<stem>.rows` and are read through a memory map: a loaded index keeps
resident only the pages its searches touch (a few rows per query).

Rows appended after loading (curator synonyms) go to a small list of NameEntry on top of the mapped
base; `save` writes base and tail as one file again.

File layout: MAGIC, then a little-endian u64 header length, the JSON header (`rows`, `concepts`, and
per array its dtype, offset and count), then the arrays, each at an 8-byte aligned offset.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np

from core.atomic_files import atomic_path
from core.kb.knowledge_base import NameEntry
from core.retrieve.index_file import IndexDamaged

MAGIC = b"CURALINK-NAME-ROWS-1\n"
ARRAYS = {
    "name_ends": "<i8",
    "names": "u1",
    "concept_codes": "<i4",
    "preferred": "u1",
    "concept_ends": "<i8",
    "concepts": "u1",
}


class StringTable:
    """Strings as one UTF-8 buffer and their end offsets (numpy arrays, possibly memory-mapped)."""

    def __init__(self, blob: np.ndarray, ends: np.ndarray):
        self.blob, self.ends = blob, ends

    @classmethod
    def of(cls, strings: Iterable[str]) -> StringTable:
        encoded = [s.encode("utf-8") for s in strings]
        ends = np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), dtype=np.int64)
        return cls(np.frombuffer(b"".join(encoded), dtype=np.uint8), ends)

    def __len__(self) -> int:
        return len(self.ends)

    def __getitem__(self, position: int) -> str:
        start = int(self.ends[position - 1]) if position else 0
        # "replace": a crafted file's bad bytes show as U+FFFD, never an exception in the middle of a search
        return self.blob[start : int(self.ends[position])].tobytes().decode("utf-8", errors="replace")

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(len(self)))


class NameRows(Sequence[NameEntry]):
    """Row-for-row what each index vector stands for; indexing gives a NameEntry."""

    def __init__(
        self,
        names: StringTable | None = None,
        concepts: StringTable | None = None,
        codes: np.ndarray | None = None,
        preferred: np.ndarray | None = None,
    ):
        empty = StringTable(np.zeros(0, np.uint8), np.zeros(0, np.int64))
        self.names = names if names is not None else empty
        self.concepts = concepts if concepts is not None else empty
        self.codes = codes if codes is not None else np.zeros(0, np.int32)
        self.preferred = preferred if preferred is not None else np.zeros(0, np.uint8)
        self.tail: list[NameEntry] = []

    @classmethod
    def of(cls, rows: Iterable[NameEntry]) -> NameRows:
        rows = list(rows)
        code_of: dict[str, int] = {}
        codes = np.fromiter(
            (code_of.setdefault(r.concept_id, len(code_of)) for r in rows), dtype=np.int32, count=len(rows)
        )
        preferred = np.fromiter((r.preferred for r in rows), dtype=np.uint8, count=len(rows))
        return cls(StringTable.of(r.name for r in rows), StringTable.of(code_of), codes, preferred)

    def __len__(self) -> int:
        return len(self.codes) + len(self.tail)

    def __getitem__(self, position):
        if isinstance(position, slice):
            return [self[i] for i in range(*position.indices(len(self)))]
        base = len(self.codes)
        if position < 0:
            position += len(self)
        if not 0 <= position < len(self):
            raise IndexError(position)
        if position >= base:
            return self.tail[position - base]
        concept = self.concepts[int(self.codes[position])]
        return NameEntry(self.names[position], concept, bool(self.preferred[position]))

    def __iter__(self) -> Iterator[NameEntry]:
        return (self[i] for i in range(len(self)))

    def extend(self, rows: Iterable[NameEntry]) -> None:
        self.tail.extend(rows)

    # --- the file --------------------------------------------------------------------------------

    def merged(self) -> NameRows:
        """Base and tail as one table: the tail's names appended to the base's arrays and its concepts
        coded against the base's (a few curator synonyms on a UMLS-size table cost one pass over the
        concept ids, not a Python object per row)."""
        if not self.tail:
            return self
        code_of = {concept_id: code for code, concept_id in enumerate(self.concepts)}
        new_ids: list[str] = []
        for row in self.tail:
            if row.concept_id not in code_of:
                code_of[row.concept_id] = len(code_of)
                new_ids.append(row.concept_id)
        tail_names = StringTable.of(r.name for r in self.tail)
        tail_concepts = StringTable.of(new_ids)
        return NameRows(
            _joined(self.names, tail_names),
            _joined(self.concepts, tail_concepts),
            np.concatenate([self.codes, np.fromiter((code_of[r.concept_id] for r in self.tail), np.int32)]),
            np.concatenate([self.preferred, np.fromiter((r.preferred for r in self.tail), np.uint8)]),
        )

    def save(self, path: Path) -> None:
        """Write base and tail as one file, by temp-and-rename (FileWriteError names it on failure)."""
        whole = self.merged()
        given = {
            "name_ends": whole.names.ends,
            "names": whole.names.blob,
            "concept_ends": whole.concepts.ends,
            "concepts": whole.concepts.blob,
            "concept_codes": whole.codes,
            "preferred": whole.preferred,
        }
        arrays = {key: np.ascontiguousarray(given[key], dtype=dtype) for key, dtype in ARRAYS.items()}
        header = {"rows": len(whole), "concepts": len(whole.concepts), "arrays": {}}
        offset = 0
        for key, data in arrays.items():
            header["arrays"][key] = {"dtype": ARRAYS[key], "offset": offset, "count": len(data)}
            offset += _aligned(data.nbytes)
        encoded = json.dumps(header).encode("utf-8")
        start = _aligned(len(MAGIC) + 8 + len(encoded))
        with atomic_path(path) as temporary, open(temporary, "wb") as out:
            out.write(MAGIC + struct.pack("<Q", len(encoded)) + encoded)
            out.write(b"\0" * (start - out.tell()))
            for data in arrays.values():
                data.tofile(out)
                out.write(b"\0" * (_aligned(data.nbytes) - data.nbytes))

    @classmethod
    def load(cls, path: Path, expected_rows: int) -> NameRows:
        """The file through a memory map, its structure checked (IndexDamaged names what is wrong)."""
        size = path.stat().st_size
        with open(path, "rb") as handle:
            head = handle.read(len(MAGIC) + 8)
            if len(head) < len(MAGIC) + 8 or not head.startswith(MAGIC):
                raise IndexDamaged(f"{path}: not a name-row file")
            (length,) = struct.unpack("<Q", head[len(MAGIC) :])
            if length > min(size, 1 << 20):
                raise IndexDamaged(f"{path}: a header of {length} bytes does not fit")
            try:
                header = json.loads(handle.read(length))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise IndexDamaged(f"{path}: unreadable header ({exc})") from exc
        start = _aligned(len(MAGIC) + 8 + length)
        arrays = {key: _mapped(path, header, key, dtype, start, size) for key, dtype in ARRAYS.items()}
        rows = cls(
            StringTable(arrays["names"], arrays["name_ends"]),
            StringTable(arrays["concepts"], arrays["concept_ends"]),
            arrays["concept_codes"],
            arrays["preferred"],
        )
        _check(path, header, rows, expected_rows)
        return rows


def same_rows(rows: NameRows, hidden: np.ndarray | None, entries: Sequence[NameEntry]) -> bool | None:
    """Whether the rows that are not hidden are exactly `entries` (name and concept id), in any order.

    Compared as (concept code, UTF-8 bytes) pairs sliced from the buffers: a row-by-row comparison of
    decoded NameEntry objects (and a sort of them when the order differs, as after curator synonyms)
    took 0.3-0.8 s on MEDIC's 73,000 names at each desk start. None where the answer needs that closer
    look after all (a concept id listed twice in the file, a name that is not valid Unicode)."""
    whole = rows.merged()
    count = len(whole.codes)
    visible = [True] * count if hidden is None else (np.asarray(hidden, dtype=bool) == 0).tolist()
    if len(visible) != count or sum(visible) != len(entries):
        return False
    code_of: dict[str, int] = {}
    for code, concept_id in enumerate(whole.concepts):
        if code_of.setdefault(concept_id, code) != code:
            return None
    try:
        wanted = [(code_of.get(e.concept_id, -1), e.name.encode("utf-8")) for e in entries]
    except UnicodeEncodeError:
        return None
    ends = np.asarray(whole.names.ends).tolist()
    blob = np.asarray(whole.names.blob).tobytes()
    codes = np.asarray(whole.codes).tolist()
    found = [
        (code, blob[start:end])
        for code, start, end, shown in zip(codes, [0, *ends[:-1]], ends, visible, strict=True)
        if shown
    ]
    return found == wanted or sorted(found) == sorted(wanted)


def _joined(first: StringTable, second: StringTable) -> StringTable:
    offset = first.ends[-1] if len(first.ends) else 0
    return StringTable(
        np.concatenate([first.blob, second.blob]), np.concatenate([first.ends, second.ends + offset])
    )


def _aligned(size: int) -> int:
    return (size + 7) // 8 * 8


def _mapped(path: Path, header: object, key: str, dtype: str, start: int, size: int) -> np.ndarray:
    entry = header.get("arrays", {}).get(key) if isinstance(header, dict) else None
    if not isinstance(entry, dict) or entry.get("dtype") != dtype:
        raise IndexDamaged(f"{path}: no {key} array of {dtype}")
    offset, count = entry.get("offset"), entry.get("count")
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (offset, count)):
        raise IndexDamaged(f"{path}: bad offset or count for {key}")
    width = np.dtype(dtype).itemsize
    if start + offset + count * width > size:
        raise IndexDamaged(f"{path}: {key} ({count} entries at {offset}) runs past the end of the file")
    if count == 0:
        return np.zeros(0, dtype=dtype)
    return np.memmap(path, dtype=dtype, mode="r", offset=start + offset, shape=(count,))


def _check(path: Path, header: dict, rows: NameRows, expected_rows: int) -> None:
    """Every offset and code inside its buffer: a crafted file cannot make a read go astray."""
    n, concepts = len(rows.codes), len(rows.concepts)
    if header.get("rows") != n or len(rows.names) != n or len(rows.preferred) != n or n != expected_rows:
        raise IndexDamaged(f"{path}: {n} name rows, the index has {expected_rows} vectors")
    if header.get("concepts") != concepts:
        raise IndexDamaged(f"{path}: the header's concept count disagrees with its arrays")
    for table, what in ((rows.names, "names"), (rows.concepts, "concept ids")):
        ends = table.ends
        if len(ends) and (ends[0] < 0 or (np.diff(ends) < 0).any() or ends[-1] != len(table.blob)):
            raise IndexDamaged(f"{path}: the {what}' offsets do not cover their buffer in order")
    if n and (rows.codes.min() < 0 or rows.codes.max() >= concepts):
        raise IndexDamaged(f"{path}: a concept code outside the {concepts} concept ids")
    if n and rows.preferred.max() > 1:
        raise IndexDamaged(f"{path}: a preferred flag other than 0 or 1")
