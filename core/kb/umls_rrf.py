"""UMLS Rich Release Format: MRCONSO.RRF names, with MRSTY.RRF semantic types and MRDEF.RRF definitions.

A full MRCONSO has ~15 million rows, so nothing is held per file: real releases are sorted by
CUI, we group consecutive rows of one CUI into a concept, and read MRSTY and MRDEF alongside in
the same CUI order (a merge join), one CUI at a time.

A CUI that comes back after other CUIs (an unsorted or concatenated file) is yielded again as
a second concept with the same id and a warning naming the line; core.kb.knowledge_base
merges the names of repeated ids. We notice repeats with a 1.25 MB bitmap over all possible
CUIs (C + 7 digits), not a set of strings, so memory stays constant. The semantic types and
definition go to the first fragment only (the side files are read once, in order).

Rows are dropped by language (default English), by source vocabulary (SAB, optional) and by
suppression flag (O, E, Y by default). The preferred name is the row with TS=P, STT=PF,
ISPREF=Y; when filtering removed it, the best-ranked remaining row in that order of keys,
the first seen on ties.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterator
from pathlib import Path

from core.errors import InputError
from core.kb.concept import Concept
from core.kb.source_file import read_lines, require_file
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress

logger = logging.getLogger(__name__)

VOCABULARY = "UMLS"
MRCONSO_FIELDS = (
    "CUI", "LAT", "TS", "LUI", "STT", "SUI", "ISPREF", "AUI", "SAUI",
    "SCUI", "SDUI", "SAB", "TTY", "CODE", "STR", "SRL", "SUPPRESS", "CVF",
)  # fmt: skip
MRSTY_FIELDS = ("CUI", "TUI", "STN", "STY", "ATUI", "CVF")
MRDEF_FIELDS = ("CUI", "AUI", "ATUI", "SATUI", "SAB", "DEF", "SUPPRESS", "CVF")
DEFAULT_SUPPRESS = frozenset({"O", "E", "Y"})
_CUI_SPACE = 10_000_000
_MAX_REPEAT_WARNINGS = 10


def read_umls_rrf(
    path: str | Path,
    *,
    languages: str | Collection[str] | None = ("ENG",),
    sources: Collection[str] | None = None,
    suppress: Collection[str] = DEFAULT_SUPPRESS,
    mrsty: str | Path | None = None,
    mrdef: str | Path | None = None,
    side_files: bool = True,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> Iterator[Concept]:
    """Stream UMLS concepts from MRCONSO.RRF (a file, or the META folder holding it).

    `languages` / `sources` None keep every LAT / SAB. MRSTY.RRF and MRDEF.RRF are taken
    from `mrsty` / `mrdef`, else from the MRCONSO folder when `side_files` is true.
    """
    conso = _mrconso_path(path)
    keep_languages = (
        None if languages is None else {languages} if isinstance(languages, str) else set(languages)
    )
    keep_sources = None if sources is None else set(sources)
    sty_path = _side_path(conso, mrsty, "MRSTY.RRF", side_files)
    def_path = _side_path(conso, mrdef, "MRDEF.RRF", side_files)
    with (
        _SideTable(sty_path, MRSTY_FIELDS, "MRSTY") as types,
        _SideTable(def_path, MRDEF_FIELDS, "MRDEF") as defs,
    ):
        yield from _concepts(
            conso, keep_languages, keep_sources, set(suppress), types, defs, progress, cancel
        )


def _concepts(
    conso: Path,
    keep_languages: set[str] | None,
    keep_sources: set[str] | None,
    drop_flags: set[str],
    types: _SideTable,
    definitions: _SideTable,
    progress: ProgressFn,
    cancel: CancelToken,
) -> Iterator[Concept]:
    seen = bytearray(_CUI_SPACE // 8)
    group = _Group("")
    repeats = 0
    count = 0
    for number, line in read_lines(conso, progress=progress, cancel=cancel, message=f"reading {conso.name}"):
        if not line:
            continue
        fields = _fields(conso, number, line, MRCONSO_FIELDS, "MRCONSO")
        cui = fields[0]
        if cui != group.cui:
            if group.names:
                yield group.concept(types, definitions, keep_sources, drop_flags)
                count += 1
            index = _cui_index(conso, number, cui)
            if seen[index >> 3] & (1 << (index & 7)):
                repeats += 1
                if repeats <= _MAX_REPEAT_WARNINGS:
                    logger.warning(
                        "%s, line %d: %s appears again after other CUIs (file not sorted by CUI)",
                        conso,
                        number,
                        cui,
                    )
            seen[index >> 3] |= 1 << (index & 7)
            group = _Group(cui)
        if keep_languages is not None and fields[1] not in keep_languages:
            continue
        if keep_sources is not None and fields[11] not in keep_sources:
            continue
        if fields[16] in drop_flags:
            continue
        group.add(fields)
    if group.names:
        yield group.concept(types, definitions, keep_sources, drop_flags)
        count += 1
    if repeats:
        logger.warning(
            "%s: %d CUIs appear in more than one run of rows; their fragments are merged by id",
            conso,
            repeats,
        )
    logger.info("%s: %d UMLS concepts", conso, count)


def _mrconso_path(path: str | Path) -> Path:
    path = Path(path)
    if path.is_dir():
        for name in ("MRCONSO.RRF", "MRCONSO.RRF.gz"):
            if (path / name).is_file():
                return require_file(path / name)
        raise InputError(path, "no MRCONSO.RRF in this folder")
    return require_file(path)


def _side_path(conso: Path, given: str | Path | None, name: str, auto: bool) -> Path | None:
    if given is not None:
        return require_file(given)
    if not auto:
        return None
    for candidate in (conso.parent / name, conso.parent / f"{name}.gz"):
        if candidate.is_file() and candidate.stat().st_size > 0:
            logger.info("using %s", candidate)
            return candidate
    return None


def _fields(path: Path, number: int, line: str, names: tuple[str, ...], table: str) -> list[str]:
    """The fields of one RRF row, which has exactly len(names) fields and a trailing '|'."""
    fields = line.split("|")
    if len(fields) != len(names) + 1 or fields[-1] != "":
        found = len(fields) - 1 if fields[-1] == "" else len(fields)
        ending = "" if fields[-1] == "" else " and no trailing '|'"
        raise InputError(
            path,
            f"{found} fields{ending}; {table} rows have {len(names)} fields, each followed by '|' "
            f"({'|'.join(names)}|)",
            line=number,
        )
    return fields


def _cui_index(path: Path, number: int, cui: str) -> int:
    if len(cui) != 8 or cui[0] != "C" or not cui[1:].isdigit():
        raise InputError(path, f"CUI {cui!r} is not 'C' followed by 7 digits", line=number)
    return int(cui[1:])


class _Group:
    """The kept rows of one CUI: names in file order, and the best-ranked preferred name."""

    __slots__ = ("cui", "names", "best", "best_rank")

    def __init__(self, cui: str):
        self.cui = cui
        self.names: dict[str, None] = {}
        self.best = ""
        self.best_rank = -1

    def add(self, fields: list[str]) -> None:
        name = fields[14].strip()
        if not name:
            return
        self.names.setdefault(name, None)
        rank = (fields[2] == "P") * 4 + (fields[4] == "PF") * 2 + (fields[6] == "Y")
        if rank > self.best_rank:
            self.best, self.best_rank = name, rank

    def concept(
        self, types: _SideTable, definitions: _SideTable, sources: set[str] | None, drop_flags: set[str]
    ) -> Concept:
        semantic_types = tuple(dict.fromkeys(row[1] for row in types.rows_for(self.cui)))
        return Concept(
            concept_id=f"UMLS:{self.cui}",
            vocabulary=VOCABULARY,
            preferred_name=self.best,
            synonyms=tuple(name for name in self.names if name != self.best),
            semantic_types=semantic_types,
            definition=_pick_definition(definitions.rows_for(self.cui), sources, drop_flags),
        )


def _pick_definition(rows: list[list[str]], sources: set[str] | None, drop_flags: set[str]) -> str:
    """The first unsuppressed definition, from the kept sources when one of them has one."""
    usable = [row for row in rows if row[6] not in drop_flags and row[5].strip()]
    if sources is not None:
        preferred = [row for row in usable if row[4] in sources]
        usable = preferred or usable
    return usable[0][5].strip() if usable else ""


class _SideTable:
    """MRSTY / MRDEF read in step with MRCONSO: both sorted by CUI, so one pass serves all."""

    def __init__(self, path: Path | None, names: tuple[str, ...], table: str):
        self.path = path
        self.names = names
        self.table = table
        self._lines = read_lines(path) if path is not None else None
        self._pending: tuple[int, list[str]] | None = None
        self._last = ""
        self._advance()

    def __enter__(self) -> _SideTable:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._lines is not None:
            self._lines.close()

    def _advance(self) -> None:
        if self._lines is None or self.path is None:
            return
        for number, line in self._lines:
            if not line:
                continue
            fields = _fields(self.path, number, line, self.names, self.table)
            if fields[0] < self._last:
                raise InputError(
                    self.path,
                    f"not sorted by CUI ({fields[0]} after {self._last}); UMLS releases are sorted, "
                    "so sort it with: LC_ALL=C sort -t'|' -k1,1 -s",
                    line=number,
                )
            self._last = fields[0]
            self._pending = (number, fields)
            return
        self._pending = None

    def rows_for(self, cui: str) -> list[list[str]]:
        """The rows of `cui`, skipping CUIs MRCONSO never asked for; empty once passed."""
        rows: list[list[str]] = []
        while self._pending is not None and self._pending[1][0] <= cui:
            if self._pending[1][0] == cui:
                rows.append(self._pending[1])
            self._advance()
        return rows
