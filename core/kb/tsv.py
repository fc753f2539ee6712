"""The simplest vocabulary: `id<TAB>name[<TAB>synonym|synonym...]`, `#` comment lines.

A first line such as `mesh_id<TAB>mesh_name` is recognised as a header and skipped; its column
names then say what extra columns hold (`synonyms`, `tree_number`, `definition`, `parents`,
`alt_ids`, `semantic_types`), so tables like dhimmel's MeSH `tree-numbers.tsv` load too.
Consecutive rows with the same id are one concept (one row per tree number there).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import InputError
from core.kb.concept import Concept
from core.kb.identifiers import canonical_id
from core.kb.source_file import read_lines, require_file
from core.limits import check_id
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress

logger = logging.getLogger(__name__)
_SPACE = re.compile(r"\s")

LAYOUT = "id<TAB>name[<TAB>synonym|synonym...]"
_ID_HEADER = re.compile(r"^(?:.*[_ .-])?(?:id|ui|cui|code|identifier|accession)s?$", re.IGNORECASE)
_NAME_HEADER = re.compile(r"name|label|term|string|str|title", re.IGNORECASE)
_MESH = re.compile(r"^[CD]\d{6}(\d{3})?$")
# (role, pattern on the lower-cased header name), first match wins
_ROLES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("synonyms", re.compile(r"syn|alias|names$|entry")),
    ("tree_numbers", re.compile(r"tree")),
    ("definition", re.compile(r"def|description|scope")),
    ("parents", re.compile(r"parent|is_a|broader")),
    ("alt_ids", re.compile(r"alt|xref")),
    ("semantic_types", re.compile(r"type|categor|class")),
)


@dataclass
class _Pending:
    raw_id: str
    names: list[str]
    values: dict[str, list[str]] = field(default_factory=dict)


def read_tsv(
    path: str | Path,
    *,
    vocabulary: str = "",
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> Iterator[Concept]:
    """Stream concepts from a tab-separated table; `vocabulary` resolves bare ids (canonical_id)."""
    path = require_file(path)
    roles: dict[int, str] | None = None
    width = 3
    pending: _Pending | None = None
    count = 0
    for number, line in read_lines(path, progress=progress, cancel=cancel):
        if not line.strip() or line.startswith("#"):
            continue
        fields = [value.strip() for value in line.split("\t")]
        if roles is None:
            header = _header_roles(fields)
            if header is not None:
                roles, width = header, len(fields)
                continue
            roles = {2: "synonyms"}
        row = _parse_row(path, number, line, fields, roles, width)
        if pending is not None and row.raw_id == pending.raw_id:
            pending.names.extend(row.names)
            for role, values in row.values.items():
                pending.values.setdefault(role, []).extend(values)
            continue
        if pending is not None:
            yield _concept(pending, vocabulary)
            count += 1
        pending = row
    if pending is not None:
        yield _concept(pending, vocabulary)
        count += 1
    if count == 0:
        raise InputError(
            path, f"no concepts: every line is blank, a comment or the header; expected {LAYOUT}"
        )
    logger.info("%s: %d concepts", path, count)


def _header_roles(fields: list[str]) -> dict[int, str] | None:
    """Column roles when `fields` is a header line (an id-like then a name-like column name)."""
    if len(fields) < 2 or not _ID_HEADER.match(fields[0]) or not _NAME_HEADER.search(fields[1]):
        return None
    roles: dict[int, str] = {}
    for index, name in enumerate(fields[2:], start=2):
        lowered = name.lower()
        for role, pattern in _ROLES:
            if pattern.search(lowered):
                roles[index] = role
                break
        else:
            logger.info("column %r is not used", name)
    return roles


def _parse_row(
    path: Path, number: int, line: str, fields: list[str], roles: dict[int, str], width: int
) -> _Pending:
    if len(fields) < 2:
        hint = (
            " (XML?)"
            if line.lstrip().startswith("<")
            else " ('||' separators: MEDIC?)"
            if "||" in line
            else ""
        )
        raise InputError(path, f"no tab between the id and the name{hint}; expected {LAYOUT}", line=number)
    if len(fields) > width:
        raise InputError(
            path,
            f"{len(fields)} tab-separated columns; expected {LAYOUT} (CTD file? use --format ctd)",
            line=number,
        )
    raw_id, name = fields[0], fields[1]
    if not raw_id:
        raise InputError(path, "empty id in the first column", line=number)
    if _SPACE.search(raw_id) is not None:
        raise InputError(path, f"id {raw_id!r} contains spaces; expected {LAYOUT}", line=number)
    check_id(raw_id, "id", source=path, line=number)
    if not name:
        raise InputError(path, "empty name in the second column", line=number, item=f"id {raw_id}")
    values: dict[str, list[str]] = {}
    for index, role in roles.items():
        if index < len(fields) and fields[index]:
            if role == "definition":
                values[role] = [fields[index]]
            else:
                values.setdefault(role, []).extend(
                    part.strip() for part in fields[index].split("|") if part.strip()
                )
    names = [name] + values.pop("synonyms", [])
    return _Pending(raw_id, names, values)


def _vocabulary_of(concept_id: str) -> str:
    """The vocabulary a canonical id belongs to, when the caller did not say."""
    prefix, separator, _ = concept_id.partition(":")
    if separator:
        return prefix.upper()
    return "MESH" if _MESH.match(concept_id) else ""


def _concept(pending: _Pending, vocabulary: str) -> Concept:
    concept_id = canonical_id(pending.raw_id, vocabulary)
    names = list(dict.fromkeys(pending.names))
    values = {role: tuple(dict.fromkeys(items)) for role, items in pending.values.items()}
    canonical = {
        role: tuple(canonical_id(v, vocabulary) for v in values.get(role, ()))
        for role in ("parents", "alt_ids")
    }
    return Concept(
        concept_id=concept_id,
        vocabulary=vocabulary.upper() or _vocabulary_of(concept_id),
        preferred_name=names[0],
        synonyms=tuple(names[1:]),
        alt_ids=canonical["alt_ids"],
        semantic_types=values.get("semantic_types", ()),
        definition=" ".join(values.get("definition", ())),
        tree_numbers=values.get("tree_numbers", ()),
        parents=canonical["parents"],
    )
