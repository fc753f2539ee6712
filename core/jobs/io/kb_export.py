"""Export the project's KB in a format `kb import` reads back: TSV (every field), OBO or MEDIC (DNorm).

Curator synonyms (names learnt from accepted corrections, core.learn.synonyms) are left out unless
asked for, so an export without them is the vocabulary as imported; generated name variants
(core.kb.variants) are always left out, as `kb import` makes them again. TSV writes a header naming every
column (id, name, synonyms, alt ids, tree numbers, parents, semantic types, definition), so the file
round-trips through `core.kb.tsv.read_tsv`; OBO is written by fastobo (its escaping), one [Term] per
concept with synonyms as EXACT; MEDIC keeps ids and names only (its layout has nothing else). Tabs,
line breaks and `|` inside a TSV or MEDIC field would break a row, so they become spaces (the name
stays findable; normalisation ignores them anyway). The file is written through a temporary and
renamed, so a failed export leaves no half file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import fastobo

from core.atomic_files import atomic_path
from core.errors import CuralinkError
from core.kb.concept import Concept
from core.kb.variants import SOURCE as VARIANT_SOURCE
from core.learn.synonyms import CURATOR_SOURCE
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

if TYPE_CHECKING:
    from core.store.project import Project

EXPORT_FORMATS = ("tsv", "obo", "medic")
TSV_HEADER = ("id", "name", "synonyms", "alt_ids", "tree_numbers", "parents", "semantic_types", "definition")
_UNSAFE = re.compile(r"[\t\r\n|]+")
_LINE_BREAKS = re.compile(r"[\r\n]+")


def _clean(name: str) -> str:
    return _UNSAFE.sub(" ", name).strip()


def _joined(values) -> str:
    return "|".join(v for v in dict.fromkeys(_clean(v) for v in values) if v)


def _synonyms(concept: Concept, leave_out: set[str]) -> list[str]:
    name = _clean(concept.preferred_name)
    cleaned = (_clean(s) for s in concept.synonyms if s not in leave_out)
    return [s for s in dict.fromkeys(cleaned) if s and s != name]


def _tsv_rows(concepts, curator: dict[str, set[str]]) -> Iterator[str]:
    yield "# Curalink KB export (id, name, synonyms, alt ids, tree numbers, parents, types, definition)\n"
    yield "\t".join(TSV_HEADER) + "\n"
    for concept in concepts:
        fields = (
            concept.concept_id,
            _clean(concept.preferred_name),
            "|".join(_synonyms(concept, curator.get(concept.concept_id, set()))),
            _joined(concept.alt_ids),
            _joined(concept.tree_numbers),
            _joined(concept.parents),
            _joined(concept.semantic_types),
            _UNSAFE.sub(" ", concept.definition).strip(),
        )
        yield "\t".join(fields) + "\n"


def _obo_id(concept_id: str):
    try:
        return fastobo.id.parse(concept_id)
    except (ValueError, SyntaxError) as exc:
        raise CuralinkError(f"concept id {concept_id!r} cannot be written as an OBO identifier") from exc


def _obo_rows(concepts, curator: dict[str, set[str]]) -> Iterator[str]:
    from fastobo.syn import Synonym
    from fastobo.term import AltIdClause, DefClause, IsAClause, NameClause, SynonymClause, TermFrame
    from fastobo.xref import XrefList

    yield "format-version: 1.2\n\n"
    for concept in concepts:
        clauses = [NameClause(_LINE_BREAKS.sub(" ", concept.preferred_name).strip())]
        leave_out = curator.get(concept.concept_id, set())
        clauses += [
            SynonymClause(Synonym(_LINE_BREAKS.sub(" ", s).strip(), "EXACT"))
            for s in dict.fromkeys(concept.synonyms)
            if s not in leave_out and s.strip() and s != concept.preferred_name
        ]
        clauses += [AltIdClause(_obo_id(alt)) for alt in dict.fromkeys(concept.alt_ids)]
        clauses += [IsAClause(_obo_id(parent)) for parent in dict.fromkeys(concept.parents)]
        if concept.definition.strip():
            clauses.append(DefClause(concept.definition.strip(), XrefList()))
        yield str(TermFrame(_obo_id(concept.concept_id), clauses)) + "\n"


def _medic_rows(concepts, curator: dict[str, set[str]]) -> Iterator[str]:
    for concept in concepts:
        ids = "|".join(dict.fromkeys([concept.concept_id, *concept.alt_ids]))
        names = [_clean(concept.preferred_name), *_synonyms(concept, curator.get(concept.concept_id, set()))]
        yield f"{ids}||{'|'.join(names)}\n"


WRITERS = {"tsv": _tsv_rows, "obo": _obo_rows, "medic": _medic_rows}


def export_kb(
    project: Project,
    path: str | Path,
    *,
    fmt: str = "tsv",
    with_curator_synonyms: bool = False,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> int:
    """Write every concept (preferred name, then its synonyms) to `path`; returns the concept count."""
    if fmt not in WRITERS:
        raise CuralinkError(f"unknown KB export format {fmt!r}; choose one of {', '.join(EXPORT_FORMATS)}")
    kb = project.kb.knowledge_base()
    if len(kb) == 0:
        raise CuralinkError(f"{project.path}: the knowledge base is empty; nothing to export")
    curator = {} if with_curator_synonyms else project.kb.names_from_source(CURATOR_SOURCE)
    # generated name variants are not the vocabulary's names: `kb import` generates them again
    for concept_id, names in project.kb.names_from_source(VARIANT_SOURCE).items():
        curator[concept_id] = curator.get(concept_id, set()) | names
    total = len(kb)
    count = 0

    def concepts() -> Iterator[Concept]:
        nonlocal count
        for concept in kb:
            if count % 5000 == 0:
                cancel.raise_if_cancelled()
                progress(count, total, "concepts exported")
            yield concept
            count += 1

    path = Path(path)
    with atomic_path(path) as temporary, temporary.open("w", encoding="utf-8", newline="\n") as out:
        for row in WRITERS[fmt](concepts(), curator):
            out.write(row)
    progress(count, total, "concepts exported")
    return count
