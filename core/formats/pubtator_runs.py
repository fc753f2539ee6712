"""The cheap first pass over a PubTator file: which blocks belong to which document.

A PubTator block starts with `PMID|t|` (or with `PMID|a|` when no block is open: GNormPlus input
has abstract-only blocks) and ends at a blank line or the next block. Paragraph-split files
(NLM-Chem) repeat the PMID once per paragraph: adjacent blocks of one PMID form a *run*, and a run
is one document. A PMID can also come back later in the file, as an exact repeat of an earlier run
(NCBI-disease train repeats PMID 8528200 whole) or with more paragraphs of the same document.

The first pass keeps one 64-bit hash per run (8 bytes each, so a 30 GB file of 36 million abstracts
needs under 300 MB), and only when some PMID has several runs does a second pass digest those runs
(usually none, or a handful). The plan it returns says, for each such run, whether the reader yields
it, keeps it for a later run of the same document, yields the merged document, or skips it as an
exact repeat. Runs not in the plan are yielded as they end, so memory stays flat.
"""

from __future__ import annotations

import hashlib
import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import numpy as np

from core.formats.files import raw_lines

HEADER = re.compile(rb"^([^\t|]+)\|([ta])\|")


class Action(Enum):
    YIELD = "yield"  # yield this run as a document (also an exact repeat of a one-run document)
    KEEP = "keep"  # hold this run's blocks: a later run of the same PMID completes the document
    MERGE = "merge"  # the last distinct run: yield the held runs and this one as one document
    SKIP_REPEAT = "skip"  # an exact repeat of a run of a merged document: skip it, report it


@dataclass(frozen=True)
class RunInfo:
    action: Action
    first_line: int


def _runs(path: Path, strict: bool) -> Iterator[tuple[int, bytes, int]]:
    """(run index, PMID bytes, first line) for every run, with the reader's block boundaries; `strict`
    raises at a line too long to read (the reader would, and a 3 GB line is not read twice)."""
    previous: bytes | None = None
    block_open = False
    index = -1
    for line_no, raw in raw_lines(path):
        if not isinstance(raw, bytes):  # a line too long to read is no header: the reader reports it
            if strict:
                raise raw
            continue
        if not raw.strip():
            block_open = False
            continue
        match = HEADER.match(raw.lstrip(b"\xef\xbb\xbf") if line_no == 1 else raw)
        if match is None:
            continue
        if match.group(2) == b"t" or not block_open:
            block_open = True
            pmid = match.group(1)
            if pmid != previous:
                index += 1
                previous = pmid
                yield index, pmid, line_no
        # an `|a|` line inside an open block belongs to that block


def plan_runs(path: Path, strict: bool = False) -> dict[int, RunInfo]:
    """Run index -> what to do, for runs whose PMID has other runs in the file; {} for most files."""
    hashes = array("q")
    for _, pmid, _ in _runs(path, strict):
        hashes.append(_key(pmid))
    if not hashes:
        return {}
    values, counts = np.unique(np.frombuffer(hashes, dtype=np.int64), return_counts=True)
    repeated = set(values[counts > 1].tolist())
    if not repeated:
        return {}
    return _plan_repeated(path, repeated)


def _plan_repeated(path: Path, repeated: set[int]) -> dict[int, RunInfo]:
    """Second pass over the runs of PMIDs seen more than once: digest each, decide each."""
    runs: dict[bytes, list[tuple[int, bytes, int]]] = {}  # pmid -> [(run index, digest, first line)]
    for index, pmid, line_no, digest in _digests(path, repeated):
        runs.setdefault(pmid, []).append((index, digest, line_no))
    plan: dict[int, RunInfo] = {}
    for entries in runs.values():
        distinct: list[tuple[int, int]] = []  # (run index, line) of first occurrences
        seen: set[bytes] = set()
        repeats: list[tuple[int, int]] = []
        for index, digest, line_no in entries:
            if digest in seen:
                repeats.append((index, line_no))
            else:
                seen.add(digest)
                distinct.append((index, line_no))
        if len(distinct) == 1:
            # one document, repeated whole: every copy is yielded; the store keeps the first
            for index, line_no in [*distinct, *repeats]:
                plan[index] = RunInfo(Action.YIELD, line_no)
            continue
        for index, line_no in distinct[:-1]:
            plan[index] = RunInfo(Action.KEEP, line_no)
        plan[distinct[-1][0]] = RunInfo(Action.MERGE, distinct[-1][1])
        for index, line_no in repeats:
            plan[index] = RunInfo(Action.SKIP_REPEAT, line_no)
    return plan


def _digests(path: Path, repeated: set[int]) -> Iterator[tuple[int, bytes, int, bytes]]:
    """(run index, PMID, first line, content digest) for the runs whose PMID hash is in `repeated`."""
    current: tuple[int, bytes, int] | None = None
    digest = hashlib.blake2b(digest_size=16)
    index = -1
    previous: bytes | None = None
    block_open = False
    for line_no, raw in raw_lines(path):
        if not isinstance(raw, bytes):
            continue
        stripped = raw.rstrip(b"\r\n")
        if not stripped.strip():
            block_open = False
            continue
        match = HEADER.match(raw.lstrip(b"\xef\xbb\xbf") if line_no == 1 else raw)
        if match is not None and (match.group(2) == b"t" or not block_open):
            block_open = True
            pmid = match.group(1)
            if pmid != previous:
                previous = pmid
                index += 1
                if current is not None:
                    yield (*current, digest.digest())
                    current = None
                if _key(pmid) in repeated:
                    current = (index, pmid, line_no)
                    digest = hashlib.blake2b(digest_size=16)
        if current is not None:
            digest.update(stripped + b"\n")
    if current is not None:
        yield (*current, digest.digest())


def _key(pmid: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(pmid, digest_size=8).digest(), "little", signed=True)
