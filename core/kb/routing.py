"""Type routing: which concepts may answer a mention of a given type (Disease, Chemical, Gene, ...).

A project can hold several vocabularies, or one that covers everything (all of MeSH, UMLS); a gene
mention must never be offered a disease. A *route* names the concepts a type may link to, as a
comma-separated list of selectors, any of which admits a concept:

- `tree:C`  a MeSH tree-number branch (the number or any of its dotted prefixes: `F03`, `D12.776`);
- `group:DISO`  a UMLS semantic group (its semantic types, SEMANTIC_GROUPS);
- `sty:T047`  one semantic type as the vocabulary stores it (a UMLS TUI, a CTD slim category);
- `vocab:MEDIC`  every concept of one vocabulary (a KB source, as `kb import` named it);
- `all`  every concept (no filter, no warning).

The table (mention type -> route, types matched without regard to case) is the project setting
`type_routes` over DEFAULT_ROUTES. Where routing cannot work it is switched off, never guessed:
a vocabulary whose concepts carry no tree number and no semantic type, and that no `vocab:` selector
names, answers every type (warned once); a mention type no route names gets all concepts (warned once
per type, and counted for the link summary).
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from core.errors import CuralinkError
from core.kb.knowledge_base import KnowledgeBase

log = logging.getLogger(__name__)

SETTING_KEY = "type_routes"


class _SettingReader(Protocol):
    def setting(self, key: str, default: Any = None) -> Any: ...


class ProjectSettings(Protocol):
    """A `core.store.Project` as `TypeRouter.for_project` reads it: core.kb sits below the store, so it
    names the one attribute it uses rather than importing the class (that import would be a cycle)."""

    settings: _SettingReader


ALL = "all"

# UMLS semantic groups (NLM SemGroups), the groups a biomedical mention type usually means. Retired
# chemical types (T109/T110/T111/T115/T118/T119/T124) are kept so older UMLS releases route too.
SEMANTIC_GROUPS: dict[str, frozenset[str]] = {
    "DISO": frozenset("T019 T020 T033 T037 T046 T047 T048 T049 T050 T184 T190 T191".split()),
    "CHEM": frozenset(
        "T103 T104 T109 T110 T111 T114 T115 T116 T118 T119 T120 T121 T122 T123 T124 T125 T126 T127 T129 "
        "T130 T131 T192 T195 T196 T197 T200".split()
    ),
    "GENE": frozenset("T028 T085 T086 T087 T088".split()),
    "ANAT": frozenset("T017 T018 T021 T022 T023 T024 T025 T026 T029 T030 T031".split()),
    "LIVB": frozenset(
        "T001 T002 T004 T005 T007 T008 T010 T011 T012 T013 T014 T015 T016 T096 T097 T098 T099 T100 "
        "T101 T194 T204".split()
    ),
    "PHYS": frozenset("T032 T039 T040 T041 T042 T043 T044 T045 T201".split()),
    "PROC": frozenset("T058 T059 T060 T061 T062 T063 T065".split()),
    "DEVI": frozenset("T074 T075 T203".split()),
}

_DISEASE = "tree:C,tree:F03,group:DISO,vocab:MEDIC"
_CHEMICAL = "tree:D,group:CHEM"
_GENE = "group:GENE,tree:G05.360.340,tree:D12.776"
_SPECIES = "tree:B,group:LIVB"
DEFAULT_ROUTES: dict[str, str] = {
    # diseases: MeSH C (Diseases) and F03 (Mental Disorders); NCBI-disease's four classes are all diseases
    **dict.fromkeys(
        [
            "Disease",
            "SpecificDisease",
            "DiseaseClass",
            "Modifier",
            "CompositeMention",
            "DiseaseOrPhenotypicFeature",
        ],
        _DISEASE,
    ),
    **dict.fromkeys(["Chemical", "ChemicalEntity", "Drug"], _CHEMICAL),
    # genes: MeSH Genes (G05.360.340) and Proteins (D12.776), UMLS GENE
    **dict.fromkeys(["Gene", "GeneOrGeneProduct", "Protein"], _GENE),
    **dict.fromkeys(["Species", "OrganismTaxon", "Organism"], _SPECIES),
}

_TREE = re.compile(r"^[A-Z](\d{2}(\.\d{3})*)?$")
_KINDS = ("tree", "group", "sty", "vocab")


@dataclass(frozen=True)
class Route:
    """One parsed route: the selectors of each kind (empty everywhere for `all`)."""

    trees: tuple[str, ...] = ()
    types: frozenset[str] = frozenset()
    vocabularies: frozenset[str] = frozenset()
    spec: str = ALL

    @property
    def is_all(self) -> bool:
        return self.spec == ALL


def parse_route(spec: str, *, mention_type: str = "") -> Route:
    """A route from its text; a clear error names the selector that cannot be read."""
    where = f"route for {mention_type!r}" if mention_type else "route"
    parts = [p.strip() for p in str(spec).split(",") if p.strip()]
    if not parts:
        raise CuralinkError(f"{where}: empty; give selectors such as tree:C,group:DISO,vocab:MEDIC or 'all'")
    if any(p.lower() == ALL for p in parts):
        if len(parts) > 1:
            raise CuralinkError(f"{where}: 'all' cannot be combined with other selectors")
        return Route()
    trees: list[str] = []
    types: set[str] = set()
    vocabularies: set[str] = set()
    for part in parts:
        kind, separator, value = part.partition(":")
        kind, value = kind.strip().lower(), value.strip()
        if not separator or kind not in _KINDS or not value:
            raise CuralinkError(
                f"{where}: cannot read {part!r}; a selector is {', '.join(k + ':VALUE' for k in _KINDS)} or 'all'"
            )
        if kind == "tree":
            if not _TREE.match(value.upper()):
                raise CuralinkError(
                    f"{where}: {part!r} is not a MeSH tree branch (a letter, then two digits and .ddd groups: C, F03, D12.776)"
                )
            trees.append(value.upper())
        elif kind == "group":
            group = SEMANTIC_GROUPS.get(value.upper())
            if group is None:
                raise CuralinkError(
                    f"{where}: unknown semantic group {value!r}; known: {', '.join(sorted(SEMANTIC_GROUPS))}"
                )
            types |= group
        elif kind == "sty":
            types.add(value)
        else:
            vocabularies.add(value.upper())
    return Route(tuple(dict.fromkeys(trees)), frozenset(types), frozenset(vocabularies), ",".join(parts))


# the semantic type that stands for each group where a concept must be given one (core.kb.mesh_typing)
GROUP_REPRESENTATIVE: dict[str, str] = {
    "DISO": "T047",  # Disease or Syndrome
    "CHEM": "T103",  # Chemical
    "GENE": "T028",  # Gene or Genome
    "ANAT": "T023",  # Body Part, Organ, or Organ Component
    "LIVB": "T001",  # Organism
    "PHYS": "T039",  # Physiologic Function
    "PROC": "T061",  # Therapeutic or Preventive Procedure
    "DEVI": "T074",  # Medical Device
}


def route_semantic_type(spec: str) -> str | None:
    """A semantic type the route admits (its first `sty:`, or its first group's representative), to
    type a concept that has none of its own; None for a route of trees and vocabularies only."""
    parse_route(spec)
    for part in spec.split(","):
        kind, _, value = part.strip().partition(":")
        if kind.lower() == "sty":
            return value.strip()
        if kind.lower() == "group":
            return GROUP_REPRESENTATIVE.get(value.strip().upper())
    return None


def route_table(stored: object) -> dict[str, str]:
    """The table in force: DEFAULT_ROUTES with the project's own routes (setting `type_routes`) over them."""
    table = dict(DEFAULT_ROUTES)
    if stored is None:
        return table
    if not isinstance(stored, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in stored.items()
    ):
        raise CuralinkError(
            f"project setting {SETTING_KEY!r} is not a table of mention type -> route text: {stored!r} "
            "(curalink -p P kb routes reset restores the defaults)"
        )
    for mention_type, spec in stored.items():
        parse_route(spec, mention_type=mention_type)
        for existing in [t for t in table if t.lower() == mention_type.lower()]:
            del table[existing]
        table[mention_type] = spec
    return table


def set_route(stored: object, mention_type: str, spec: str) -> dict[str, str]:
    """The project's own routes with `mention_type` set to `spec` (checked), ready to store."""
    name = mention_type.strip()
    if not name or any(ch in name for ch in "\t\r\n|"):
        raise CuralinkError(f"mention type {mention_type!r}: must be non-empty, without tabs or '|'")
    route = parse_route(spec, mention_type=name)
    route_table(stored)  # the project's other routes must read too
    own = {k: v for k, v in (stored or {}).items() if k.lower() != name.lower()}
    own[name] = route.spec
    return own


def _admits(
    route: Route, tree_numbers: Iterable[str], semantic_types: Iterable[str], vocabulary: str
) -> bool:
    if vocabulary.upper() in route.vocabularies:
        return True
    if any(t in route.types for t in semantic_types):
        return True
    return any(_in_branch(n, b) for n in tree_numbers for b in route.trees)


def _in_branch(tree_number: str, branch: str) -> bool:
    """`C` holds every C.. number; `F03` holds F03 and F03.xxx, not F030."""
    if len(branch) == 1:
        return tree_number.startswith(branch)
    return tree_number == branch or tree_number.startswith(branch + ".")


class TypeRouter:
    """Per mention type, the concept ids that may answer it (None: all), computed once per route."""

    def __init__(self, kb: KnowledgeBase, table: Mapping[str, str] | None = None):
        self.kb = kb
        self.table = {
            k.lower(): (k, parse_route(v, mention_type=k)) for k, v in (table or DEFAULT_ROUTES).items()
        }
        named = {v for _, route in self.table.values() for v in route.vocabularies}
        described: Counter[str] = Counter()
        sizes: Counter[str] = Counter()
        for concept in kb:
            sizes[concept.vocabulary] += 1
            if concept.tree_numbers or concept.semantic_types:
                described[concept.vocabulary] += 1
        self.open_vocabularies = frozenset(v for v in sizes if not described[v] and v.upper() not in named)
        self.warnings: list[str] = []
        for vocabulary in sorted(self.open_vocabularies):
            self._warn(
                f"vocabulary {vocabulary or '(unnamed)'}: its {sizes[vocabulary]} concepts carry no tree numbers "
                "or semantic types and no route names it (vocab:...), so type routing is off for them: "
                "they are offered to every mention type",
                # a project of one vocabulary has nothing to route between: said, but not as a warning
                level=logging.WARNING if len(sizes) > 1 else logging.INFO,
            )
        self.unrouted: Counter[str] = Counter()
        self._admitted: dict[str, frozenset[str] | None] = {}

    @classmethod
    def for_project(cls, project: ProjectSettings, kb: KnowledgeBase) -> TypeRouter:
        return cls(kb, route_table(project.settings.setting(SETTING_KEY)))

    @property
    def active(self) -> bool:
        """False when no concept of the KB can be told apart by type (every vocabulary is open)."""
        return any(c.vocabulary not in self.open_vocabularies for c in self.kb)

    def route_key(self, mention_type: str) -> str:
        """The route a mention of this type takes ('' = all concepts); counts and warns for unknown types."""
        found = self.table.get(mention_type.strip().lower())
        if found is None:
            if not self.unrouted[mention_type]:
                self._warn(
                    f"mention type {mention_type or '(none)'!r}: no route names it, so its mentions are "
                    f"matched against all concepts (set one: kb routes set {mention_type or 'TYPE'} SPEC)"
                )
            self.unrouted[mention_type] += 1
            return ""
        route = found[1]
        return "" if route.is_all else route.spec

    def admitted_for(self, mention_type: str) -> frozenset[str] | None:
        """The concept ids a mention of this type may be linked to (None: all); counts nothing."""
        found = self.table.get(mention_type.strip().lower())
        if found is None or found[1].is_all:
            return None
        return self.admitted(found[1].spec)

    def admitted(self, key: str, *, warn_empty: bool = True) -> frozenset[str] | None:
        """The concept ids a route admits (concepts of open vocabularies always); None for all concepts.
        `warn_empty=False`: a route that admits nothing is not warned about (detection only asks)."""
        if not key:
            return None
        if key not in self._admitted:
            route = parse_route(key)
            admitted = frozenset(
                c.concept_id
                for c in self.kb
                if c.vocabulary in self.open_vocabularies
                or _admits(route, c.tree_numbers, c.semantic_types, c.vocabulary)
            )
            if len(admitted) == len(self.kb):
                admitted = None
            elif not admitted and warn_empty:
                types = sorted(name for name, r in self.table.values() if r.spec == key)
                self._warn(
                    f"route {key} (types {', '.join(types)}): no concept of the knowledge base fits it, "
                    "so those mentions get no suggestion"
                )
            self._admitted[key] = admitted
        return self._admitted[key]

    def restricted_kb(self, mention_type: str) -> KnowledgeBase:
        """The KB cut to what a mention of this type may name (dictionary detection of typed mentions)."""
        admitted = self.admitted(self.route_key(mention_type))
        if admitted is None:
            return self.kb
        return KnowledgeBase(c for c in self.kb if c.concept_id in admitted)

    def _warn(self, message: str, level: int = logging.WARNING) -> None:
        if message not in self.warnings:
            self.warnings.append(message)
            log.log(level, message)
