"""CTD vocabularies: CTD_diseases.tsv(.gz) (MEDIC) and CTD_chemicals.tsv(.gz).

Lines starting with `#` are the header and terms of use; the `# Fields:` comment names the
columns, and we map them by name so CTD's occasional column additions (DrugBankIDs) do not
shift anything. Files without that comment get the published column order, chosen by the file
name ("chemical" / "disease") or the column count. Ids are `MESH:` / `OMIM:` CURIEs, turned
canonical (bare MeSH, `OMIM:...`). Multi-valued fields are `|`-separated.

SlimMappings (MEDIC-Slim categories such as "Metabolic disease") become `semantic_types`: they
are the coarse class a curator needs to judge a candidate. CasRN and DrugBankIDs become
alternative ids (`CAS:...`, `DRUGBANK:...`), so a chemical is found by either.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from core.errors import InputError
from core.kb.concept import Concept
from core.kb.identifiers import canonical_id
from core.kb.source_file import read_lines, require_file
from core.limits import check_id
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress

logger = logging.getLogger(__name__)
_SPACE = re.compile(r"\s")

VOCABULARY = "CTD"
CtdKind = Literal["diseases", "chemicals"]

COLUMNS: dict[str, tuple[str, ...]] = {
    "diseases": (
        "DiseaseName",
        "DiseaseID",
        "AltDiseaseIDs",
        "Definition",
        "ParentIDs",
        "TreeNumbers",
        "ParentTreeNumbers",
        "Synonyms",
        "SlimMappings",
    ),
    "chemicals": (
        "ChemicalName",
        "ChemicalID",
        "CasRN",
        "Definition",
        "ParentIDs",
        "TreeNumbers",
        "ParentTreeNumbers",
        "Synonyms",
    ),
}


def read_ctd(
    path: str | Path,
    *,
    kind: CtdKind | None = None,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> Iterator[Concept]:
    """Stream the concepts of a CTD disease or chemical vocabulary, one row at a time.

    `kind` picks the column order of a file without a `# Fields:` header; the header wins.
    """
    path = require_file(path)
    columns: tuple[str, ...] | None = COLUMNS[kind] if kind else None
    previous_comment = ""
    count = 0
    for number, line in read_lines(path, progress=progress, cancel=cancel):
        if line.startswith("#"):
            comment = line[1:].strip()
            if previous_comment == "Fields:" and "\t" in comment:
                columns = tuple(name.strip() for name in comment.split("\t"))
                _check_header(path, number, columns)
            previous_comment = comment
            continue
        if not line.strip():
            continue
        if columns is None:
            columns = _default_columns(path, line)
        yield _concept(path, number, line, columns)
        count += 1
    if count == 0:
        raise InputError(path, "no CTD rows: every line is blank or a '#' comment")
    logger.info("%s: %d CTD concepts", path, count)


def _check_header(path: Path, number: int, columns: tuple[str, ...]) -> None:
    if len(columns) < 2 or not columns[0].endswith("Name") or not columns[1].endswith("ID"):
        raise InputError(
            path,
            f"the '# Fields:' header names {', '.join(columns)}; expected CTD columns "
            "(DiseaseName, DiseaseID, ... or ChemicalName, ChemicalID, ...)",
            line=number,
        )


def _default_columns(path: Path, line: str) -> tuple[str, ...]:
    lowered = path.name.lower()
    if "chemical" in lowered:
        return COLUMNS["chemicals"]
    if "disease" in lowered:
        return COLUMNS["diseases"]
    found = line.count("\t") + 1
    return COLUMNS["chemicals"] if found == len(COLUMNS["chemicals"]) else COLUMNS["diseases"]


def _split(value: str) -> list[str]:
    return [part.strip() for part in value.split("|") if part.strip()]


def _concept(path: Path, number: int, line: str, columns: tuple[str, ...]) -> Concept:
    fields = line.split("\t")
    if len(fields) != len(columns):
        raise InputError(
            path,
            f"expected {len(columns)} tab-separated CTD columns ({', '.join(columns)}), found {len(fields)}",
            line=number,
        )
    row = dict(zip(columns, fields))
    name = fields[0].strip()
    raw_id = fields[1].strip()
    if not name:
        raise InputError(path, f"empty {columns[0]}", line=number)
    if ":" not in raw_id or _SPACE.search(raw_id) is not None:
        raise InputError(
            path, f"{columns[1]} {raw_id!r} is not a CURIE such as MESH:D003924 or OMIM:125853", line=number
        )
    check_id(raw_id, columns[1], source=path, line=number)
    alt_ids = [canonical_id(alt, VOCABULARY) for alt in _split(row.get("AltDiseaseIDs", ""))]
    alt_ids += [f"CAS:{cas}" for cas in _split(row.get("CasRN", ""))]
    alt_ids += [f"DRUGBANK:{drug}" for drug in _split(row.get("DrugBankIDs", ""))]
    synonyms = [synonym for synonym in dict.fromkeys(_split(row.get("Synonyms", ""))) if synonym != name]
    return Concept(
        concept_id=canonical_id(raw_id, VOCABULARY),
        vocabulary=VOCABULARY,
        preferred_name=name,
        synonyms=tuple(synonyms),
        alt_ids=tuple(dict.fromkeys(alt_ids)),
        semantic_types=tuple(_split(row.get("SlimMappings", ""))),
        definition=row.get("Definition", "").strip(),
        tree_numbers=tuple(_split(row.get("TreeNumbers", ""))),
        parents=tuple(canonical_id(parent, VOCABULARY) for parent in _split(row.get("ParentIDs", ""))),
    )
