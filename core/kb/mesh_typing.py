"""Types for MeSH records that carry none of their own: what routes a concept of the mesh-tsv tables.

The MeSH 2024 tables (core.kb.mesh_tables) have no tree numbers and no semantic types, so type routing
(core.kb.routing) would admit none of their concepts. Each record gets its type, in this order:

1. a descriptor's tree numbers from a MeSH tree-number table (dhimmel's 2015 `tree-numbers.tsv`), the
   way the MeSH 2015 table import types it;
2. a pharmacological action (MeSH's `pharmacological_actions` table): the record is a chemical or drug,
   stored as semantic type T121 (Pharmacologic Substance, in the CHEM group every chemical route names);
3. the type the project's own train/dev annotations give the id most often, stored as the semantic type
   that type's route admits (`route_semantic_type`: "Disease" -> T047, "Gene" -> T028, ...);
4. a supplementary record listed from CTD's chemical vocabulary (its `sources` column): a chemical (T103).

A record none of these types stays untyped: KB search finds it, but no typed route admits it.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

from core.documents import split_concept_ids
from core.errors import InputError
from core.kb.identifiers import canonical_id
from core.kb.routing import route_semantic_type, route_table
from core.kb.source_file import read_lines, require_file
from core.kb.tsv import read_tsv
from core.progress import NEVER_CANCELLED, CancelToken

logger = logging.getLogger(__name__)

PHARMACOLOGIC_SUBSTANCE = "T121"  # UMLS: what MeSH's pharmacological actions describe
CHEMICAL = "T103"  # UMLS Chemical: CTD's chemical vocabulary
ACTION_HEADER = ("DescriptorUI", "DescriptorName", "PharmActionUI", "PharmActionName")


def read_tree_numbers(
    path: str | Path, *, cancel: CancelToken = NEVER_CANCELLED
) -> dict[str, tuple[str, ...]]:
    """Descriptor id -> tree numbers, from a table `kb import --format tsv` reads (mesh_id, mesh_name,
    mesh_tree_number); a file without a tree-number column is refused."""
    found: dict[str, tuple[str, ...]] = {}
    for concept in read_tsv(path, cancel=cancel):
        if concept.tree_numbers:
            found[concept.concept_id] = concept.tree_numbers
    if not found:
        raise InputError(
            path, "no tree numbers: expected a header such as mesh_id<TAB>mesh_name<TAB>mesh_tree_number"
        )
    return found


def read_actions(path: str | Path, *, cancel: CancelToken = NEVER_CANCELLED) -> dict[str, tuple[str, ...]]:
    """Record id (D... or C...) -> names of its pharmacological actions, streamed line by line."""
    path = require_file(path)
    actions: dict[str, list[str]] = {}
    for number, line in read_lines(path, cancel=cancel):
        if not line.strip():
            continue
        fields = line.split("\t")
        if number == 1:
            if tuple(f.strip() for f in fields) != ACTION_HEADER:
                raise InputError(
                    path,
                    f"header {line[:80]!r}; expected the pharmacological-action table's {chr(9).join(ACTION_HEADER)!r}",
                    line=number,
                )
            continue
        if len(fields) != len(ACTION_HEADER):
            raise InputError(
                path, f"{len(fields)} tab-separated columns; expected {len(ACTION_HEADER)}", line=number
            )
        record, action = canonical_id(fields[0]), fields[3].strip() or fields[2].strip()
        if not record or record[0] not in "CD" or not action:
            raise InputError(
                path,
                f"expected a MeSH record id (D... or C...) and an action, got {line[:80]!r}",
                line=number,
            )
        actions.setdefault(record, []).append(action)
    logger.info("%s: pharmacological actions of %d records", path, len(actions))
    return {record: tuple(dict.fromkeys(names)) for record, names in actions.items()}


def annotation_semantic_types(
    annotated: Iterable[tuple[str, str]], stored_routes: object = None
) -> dict[str, str]:
    """Concept id -> the semantic type that admits it to the route of the type the (type, concept id)
    pairs give it most; pass only train/dev annotations, never the gold of an evaluated split.
    Composite ids count for each part; types whose route names no semantic type are skipped."""
    table = {name.lower(): spec for name, spec in route_table(stored_routes).items()}
    counts: dict[str, Counter[str]] = {}
    for mention_type, raw in annotated:
        spec = table.get(mention_type.strip().lower())
        if spec is None:
            continue
        for part in split_concept_ids(raw):
            counts.setdefault(canonical_id(part), Counter())[spec] += 1
    typed: dict[str, str] = {}
    for concept_id, by_route in counts.items():
        semantic_type = route_semantic_type(by_route.most_common(1)[0][0])
        if semantic_type:
            typed[concept_id] = semantic_type
    return typed


class MeshTyping:
    """The type rules above for one import, with a count of what each rule typed."""

    def __init__(
        self,
        *,
        tree_numbers: Mapping[str, tuple[str, ...]] | None = None,
        actions: Mapping[str, tuple[str, ...]] | None = None,
        annotated: Mapping[str, str] | None = None,
    ):
        self.tree_numbers = tree_numbers or {}
        self.actions = actions or {}
        self.annotated = annotated or {}
        self.counts: Counter[str] = Counter()

    def types(self, concept_id: str, sources: Iterable[str] = ()) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(tree numbers, semantic types) for one record; at most one of them is non-empty."""
        trees = self.tree_numbers.get(concept_id, ())
        if trees:
            self.counts["tree numbers"] += 1
            return trees, ()
        if concept_id in self.actions:
            self.counts["pharmacological action"] += 1
            return (), (PHARMACOLOGIC_SUBSTANCE,)
        if concept_id in self.annotated:
            self.counts["the project's annotations"] += 1
            return (), (self.annotated[concept_id],)
        if any(source.startswith("CTD") for source in sources):
            self.counts["CTD's chemical vocabulary"] += 1
            return (), (CHEMICAL,)
        self.counts["untyped"] += 1
        return (), ()

    def summary(self) -> str:
        """'typed by tree numbers 27,000, pharmacological action 900, ...; untyped 12'."""
        typed = [f"{rule} {count:,}" for rule, count in self.counts.items() if rule != "untyped"]
        return f"typed by {', '.join(typed) or 'nothing'}; untyped {self.counts['untyped']:,}"
