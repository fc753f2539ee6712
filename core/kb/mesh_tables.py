"""MeSH as tables (`--format mesh-tsv`): descriptors with every term, or supplementary concept names.

Two layouts, told apart by the header line (gzip or plain):
- descriptor terms (NLM `desc20XX` as a table, one row a term): `DescriptorUI, DescriptorName, ConceptUI,
  TermUI, TermName, ConceptPreferredTermYN, IsPermutedTermYN, LexicalTag, RecordPreferredTermYN`; a
  descriptor's rows are consecutive. Permuted terms ("Agents, Anabolic", "Naviculare, Os") are dropped
  unless asked for, as NLM itself dropped them from 2019 (`permuted_terms`, as core.kb.mesh_xml); the
  uninverted forms running text uses come from core.kb.variants anyway.
- supplementary concept names: `mesh_id, preferred_name, names (|-separated), sources`, one row a record.

Neither carries tree numbers or semantic types; core.kb.mesh_typing gives each record its type from a
tree-number table, the pharmacological actions, the project's annotations or its sources. Rows stream;
a bad row is refused with its file and line.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from core.errors import InputError
from core.kb.concept import Concept
from core.kb.mesh_typing import ACTION_HEADER, MeshTyping, read_actions, read_tree_numbers
from core.kb.source_file import read_lines, require_file
from core.limits import check_id
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress

logger = logging.getLogger(__name__)

VOCABULARY = "MESH"
DESCRIPTOR_HEADER = (
    "DescriptorUI",
    "DescriptorName",
    "ConceptUI",
    "TermUI",
    "TermName",
    "ConceptPreferredTermYN",
    "IsPermutedTermYN",
    "LexicalTag",
    "RecordPreferredTermYN",
)
SUPPLEMENTARY_HEADER = ("mesh_id", "preferred_name", "names", "sources")
HEADERS = {DESCRIPTOR_HEADER: "descriptor", SUPPLEMENTARY_HEADER: "supplementary"}
_DESCRIPTOR_ID = re.compile(r"^D\d{6}(\d{3})?$")
_SUPPLEMENTARY_ID = re.compile(r"^C\d{6}(\d{3})?$")


def table_kind(first_line: str) -> str | None:
    """'descriptor' or 'supplementary' for a mesh-tsv header line, 'actions' for the pharmacological-
    action table (given with --actions, not imported), else None."""
    fields = tuple(field.strip() for field in first_line.split("\t"))
    if fields == ACTION_HEADER:
        return "actions"
    return HEADERS.get(fields)


def read_mesh_tables(
    path: str | Path,
    *,
    tree_numbers: str | Path | None = None,
    actions: str | Path | None = None,
    annotated_types: Mapping[str, str] | None = None,
    permuted_terms: bool = False,
    on_summary: Callable[[str], None] | None = None,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> Iterator[Concept]:
    """Stream the descriptors or supplementary concepts of a mesh-tsv table, typed (core.kb.mesh_typing).

    `tree_numbers`: a MeSH tree-number table to join on the descriptor id; `actions`: the pharmacological-
    action table; `annotated_types`: concept id -> semantic type from the project's annotations
    (core.kb.mesh_typing.annotation_semantic_types); `on_summary` hears how many records each rule typed.
    """
    path = require_file(path)
    typing = MeshTyping(
        tree_numbers=read_tree_numbers(tree_numbers, cancel=cancel) if tree_numbers else None,
        actions=read_actions(actions, cancel=cancel) if actions else None,
        annotated=annotated_types,
    )
    lines = read_lines(path, progress=progress, cancel=cancel)
    kind = None
    for number, line in lines:
        kind = table_kind(line)
        if kind is None:
            raise InputError(
                path,
                f"header {line[:80]!r} is neither MeSH descriptor terms ({', '.join(DESCRIPTOR_HEADER[:2])}, ...) "
                f"nor supplementary names ({', '.join(SUPPLEMENTARY_HEADER)})",
                line=number,
            )
        if kind == "actions":
            raise InputError(
                path,
                "this is the pharmacological-action table, not a vocabulary: give it with --actions "
                "when importing the descriptor or supplementary table",
                line=number,
            )
        break
    if kind is None:
        raise InputError(path, "the file is empty")
    if kind == "descriptor":
        concepts = _descriptors(path, lines, typing, permuted_terms)
    else:
        concepts = _supplementary(path, lines, typing)
    count = 0
    for concept in concepts:
        count += 1
        yield concept
    if count == 0:
        raise InputError(path, "no records after the header")
    summary = f"{count:,} MeSH {kind} records; {typing.summary()}"
    logger.info("%s: %s", path, summary)
    if on_summary is not None:
        on_summary(summary)


def _checked_id(path: Path, number: int, raw: str, pattern: re.Pattern[str], what: str) -> str:
    value = raw.strip()
    if not pattern.match(value):
        raise InputError(
            path,
            f"{what} {value!r} is not a MeSH {what} (expected {pattern.pattern[1]}+6 or 9 digits)",
            line=number,
        )
    check_id(value, what, source=path, line=number)
    return value


def _descriptors(
    path: Path, lines: Iterator[tuple[int, str]], typing: MeshTyping, permuted_terms: bool
) -> Iterator[Concept]:
    done: set[str] = set()
    current = ""
    name = ""
    terms: list[str] = []
    for number, line in lines:
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != len(DESCRIPTOR_HEADER):
            raise InputError(
                path,
                f"{len(fields)} tab-separated columns; expected {len(DESCRIPTOR_HEADER)} (the header's)",
                line=number,
            )
        ui = _checked_id(path, number, fields[0], _DESCRIPTOR_ID, "DescriptorUI")
        term = fields[4].strip()
        if not term or not fields[1].strip():
            raise InputError(path, "empty DescriptorName or TermName", line=number, item=ui)
        if fields[6].strip() not in ("Y", "N"):
            raise InputError(
                path, f"IsPermutedTermYN is {fields[6]!r}; expected Y or N", line=number, item=ui
            )
        if ui != current:
            if current:
                yield _descriptor(current, name, terms, typing)
                done.add(current)
            if ui in done:
                raise InputError(
                    path,
                    "the rows of this descriptor are not together (it appeared earlier)",
                    line=number,
                    item=ui,
                )
            current, name, terms = ui, fields[1].strip(), []
        if permuted_terms or fields[6].strip() == "N":
            terms.append(term)
    if current:
        yield _descriptor(current, name, terms, typing)


def _descriptor(ui: str, name: str, terms: list[str], typing: MeshTyping) -> Concept:
    trees, semantic_types = typing.types(ui)
    return Concept(
        concept_id=ui,
        vocabulary=VOCABULARY,
        preferred_name=name,
        synonyms=tuple(term for term in dict.fromkeys(terms) if term != name),
        semantic_types=semantic_types,
        tree_numbers=trees,
    )


def _supplementary(path: Path, lines: Iterator[tuple[int, str]], typing: MeshTyping) -> Iterator[Concept]:
    seen: set[str] = set()
    for number, line in lines:
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != len(SUPPLEMENTARY_HEADER):
            raise InputError(
                path,
                f"{len(fields)} tab-separated columns; expected {len(SUPPLEMENTARY_HEADER)} (the header's)",
                line=number,
            )
        ui = _checked_id(path, number, fields[0], _SUPPLEMENTARY_ID, "mesh_id")
        if ui in seen:
            raise InputError(path, "a second row for this supplementary concept", line=number, item=ui)
        seen.add(ui)
        name = fields[1].strip()
        if not name:
            raise InputError(path, "empty preferred_name", line=number, item=ui)
        names = [part.strip() for part in fields[2].split("|") if part.strip()]
        trees, semantic_types = typing.types(ui, [s.strip() for s in fields[3].split(",")])
        yield Concept(
            concept_id=ui,
            vocabulary=VOCABULARY,
            preferred_name=name,
            synonyms=tuple(n for n in dict.fromkeys(names) if n != name),
            semantic_types=semantic_types,
            tree_numbers=trees,
        )
