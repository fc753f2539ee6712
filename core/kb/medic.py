"""MEDIC in the DNorm / BioSyn format: `ID[|altID...]||Preferred name[|synonym...]`, one concept a line.

This is the MEDIC the NCBI-disease corpus was annotated against (2012), and the layout of the
BioSyn `*_dictionary.txt` files (one name a line, the id repeated): consecutive lines with the
same id field are merged into one concept, so both load the same way. Bare OMIM numbers become
`OMIM:...`, MeSH ids stay bare (core.kb.identifiers). Names are XML-unescaped (the 2012 file writes
"Wissler&apos;s Syndrome"); the BioSyn dictionaries and CTD hold none.
"""

from __future__ import annotations

import html
import logging
import re
from collections.abc import Iterator
from pathlib import Path

from core.errors import InputError
from core.kb.concept import Concept
from core.kb.identifiers import canonical_id
from core.kb.source_file import read_lines, require_file
from core.limits import check_optional_id
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress

logger = logging.getLogger(__name__)
_SPACE = re.compile(r"\s")

VOCABULARY = "MEDIC"
LAYOUT = "'ID[|altID...]||name[|synonym...]'"


def read_medic(
    path: str | Path,
    *,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> Iterator[Concept]:
    """Stream the concepts of a MEDIC (DNorm) file; memory holds one concept at a time."""
    path = require_file(path)
    key = ""
    ids: list[str] = []
    names: list[str] = []
    count = 0
    for number, line in read_lines(path, progress=progress, cancel=cancel):
        if not line.strip():
            continue
        line_ids, line_names = _parse_line(path, number, line)
        id_field = "|".join(line_ids)
        if id_field != key:
            if names:
                yield _concept(ids, names)
                count += 1
            key, ids, names = id_field, line_ids, []
        names.extend(line_names)
    if names:
        yield _concept(ids, names)
        count += 1
    if count == 0:
        raise InputError(path, f"no concepts, only blank lines; expected {LAYOUT}")
    logger.info("%s: %d MEDIC concepts", path, count)


def _parse_line(path: Path, number: int, line: str) -> tuple[list[str], list[str]]:
    if "\t" in line:
        raise InputError(
            path, f"a tab in a MEDIC line (is this a TSV or CTD file?); expected {LAYOUT}", line=number
        )
    id_part, separator, name_part = line.partition("||")
    if not separator:
        hint = (
            " (XML?)"
            if line.lstrip().startswith("<")
            else " (a '#' comment: CTD?)"
            if line.startswith("#")
            else ""
        )
        raise InputError(path, f"no '||' between the ids and the names{hint}; expected {LAYOUT}", line=number)
    ids = [part.strip() for part in id_part.split("|")]
    if not ids[0]:
        raise InputError(path, f"no concept id before '||'; expected {LAYOUT}", line=number)
    for raw in ids:
        if _SPACE.search(raw) is not None:
            raise InputError(path, f"id {raw!r} contains spaces; expected {LAYOUT}", line=number)
        check_optional_id(raw, "id", source=path, line=number)
    # The 2012 MEDIC file is XML-escaped ("Wissler&apos;s Syndrome", "Sj&#246;gren"): names as written.
    names = [html.unescape(name.strip()) if "&" in name else name.strip() for name in name_part.split("|")]
    names = [name for name in names if name]
    if not names:
        raise InputError(path, f"no name after '||'; expected {LAYOUT}", line=number, item=f"id {ids[0]}")
    return ids, names


def _concept(ids: list[str], names: list[str]) -> Concept:
    unique = list(dict.fromkeys(names))
    return Concept(
        concept_id=canonical_id(ids[0], VOCABULARY),
        vocabulary=VOCABULARY,
        preferred_name=unique[0],
        synonyms=tuple(unique[1:]),
        alt_ids=tuple(dict.fromkeys(canonical_id(alt, VOCABULARY) for alt in ids[1:] if alt)),
    )
