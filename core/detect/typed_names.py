"""Which mention type each dictionary name tags, so one dictionary pass finds every type a project links.

The types: the routes of the project's table (core.kb.routing) that admit some concept of the KB. When
the project's annotations link mentions to the KB, only the routes of their types, each named as the
annotations name it most ("Chemical", "ChemicalEntity"): a disease corpus with all of MeSH as its KB
does not start tagging drugs. Without such annotations every route that admits a concept is tagged,
named by the first type of the table that takes that route ("Disease", "Chemical", ...).

A name admitted by two routes takes the type the project's annotations use most for that name, else
the type they use most overall (table order without annotations), and keeps only the concepts of that
type. Routes of types the annotations use but never link to this KB compete too: in a MeSH project
annotated like BioRED, proteins (MeSH D12.776) are admitted by the chemical route and the gene route,
genes carry NCBI Gene ids, and "insulin" or a protein never annotated is a gene there, which the KB
cannot link - so it is left out rather than tagged as a chemical.

The annotations come in as rows (core.detect.mention_type.Annotated, read by core.project_detector);
this stage never reads the store.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from core.detect.dictionary import dictionary_key
from core.detect.mention_type import Annotated, annotated_type_counts
from core.kb.knowledge_base import KnowledgeBase
from core.kb.routing import ALL, TypeRouter


@dataclass(frozen=True)
class DetectionType:
    name: str  # as stored on detected mentions
    route: str  # the route's spec (the key of its group in the table)
    admitted: frozenset[str] | None  # concept ids it may tag (None: all)


def detection_types(
    annotated: Iterable[Annotated], kb: KnowledgeBase, router: TypeRouter, *, leave_out: Collection[str] = ()
) -> list[DetectionType]:
    """The types one dictionary pass tags, most used by the annotations first (see the module docstring);
    the annotations of `leave_out` (an evaluation's split) do not count."""
    by_route: dict[str, Counter[str]] = {}
    for mention_type, count in annotated_type_counts(annotated, kb, leave_out).items():
        found = router.table.get(mention_type.strip().lower())
        if found is not None:
            by_route.setdefault(found[1].spec, Counter())[mention_type] += count
    if by_route:
        ranked = sorted(by_route.items(), key=lambda item: -sum(item[1].values()))
        named = [(spec, counts.most_common(1)[0][0]) for spec, counts in ranked]
    else:
        first: dict[str, str] = {}
        for name, route in router.table.values():
            if not route.is_all:
                first.setdefault(route.spec, name)
        named = list(first.items())
    types = []
    for spec, name in named:
        admitted = None if spec == ALL else router.admitted(spec, warn_empty=False)
        if admitted is None or admitted:
            types.append(DetectionType(name, spec, admitted))
    return types


def typed_names(
    training_annotated: Iterable[Annotated],
    router: TypeRouter,
    types: list[DetectionType],
    pairs: list[tuple[str, str]],
    *,
    leave_out: Collection[str] = (),
) -> list[tuple[str, str, str]]:
    """(name, concept id, type) for every (name, concept id) pair whose concept a type admits, one
    type per name (see the module docstring); `training_annotated`: the annotated mentions of the train
    and dev splits; `leave_out`: documents whose annotations do not count."""
    votes = _annotated_votes(training_annotated, router, leave_out)
    usage: Counter[str] = Counter()
    for said in votes.values():
        usage.update(said)
    detected = {t.route for t in types}
    # routes the annotations use that this dictionary cannot tag (genes with NCBI Gene ids in a MeSH
    # project) still compete for the concepts they admit: MeSH's proteins are chemicals and genes
    competing = {
        spec: admitted
        for spec in usage
        if spec not in detected
        and not spec.startswith("=")
        and spec != ALL
        and (admitted := router.admitted(spec, warn_empty=False))
    }
    ranked = (
        [t.route for t in types] if not usage else sorted({*detected, *competing}, key=lambda r: -usage[r])
    )
    names = {t.route: t.name for t in types}
    admitted_by = [(t.route, t.admitted) for t in types] + list(competing.items())
    offered: dict[str, dict[str, list[tuple[str, str]]]] = {}  # key -> route -> (name, id)
    for name, concept_id in pairs:
        key = dictionary_key(name)
        for route, admitted in admitted_by:
            if admitted is None or concept_id in admitted:
                offered.setdefault(key, {}).setdefault(route, []).append((name, concept_id))
    result: list[tuple[str, str, str]] = []
    for key, per_route in offered.items():
        said = votes.get(key)
        if said:
            chosen = said.most_common(1)[0][0]  # what the annotations call this very name
        else:
            chosen = min(per_route, key=ranked.index)  # the route used most among those admitting it
        if chosen in names and chosen in per_route:
            result += [(name, concept_id, names[chosen]) for name, concept_id in per_route[chosen]]
    return result


def _annotated_votes(
    training_annotated: Iterable[Annotated], router: TypeRouter, leave_out: Collection[str]
) -> dict[str, Counter[str]]:
    """Dictionary key -> route (or '=TYPE' for a type no route names) -> how many annotated mentions
    with that text have a type of that route."""
    votes: dict[str, Counter[str]] = {}
    left_out = set(leave_out)
    for row in training_annotated:
        if row.doc_id in left_out:
            continue
        found = router.table.get(row.type.strip().lower())
        route = found[1].spec if found is not None else "=" + row.type
        votes.setdefault(dictionary_key(row.text), Counter())[route] += 1
    return votes
