"""Which mention type each dictionary name tags, so one dictionary pass finds every type a project links.

The types: the routes of the project's table (core.kb.routing) that admit some concept of the KB. When
the project's annotations link mentions to the KB, only the routes of their types, each named as the
annotations name it most ("Chemical", "ChemicalEntity"): a disease corpus with all of MeSH as its KB
does not start tagging drugs. Without such annotations every route that admits a concept is tagged,
named by the first type of the table that takes that route ("Disease", "Chemical", ...).

A name admitted by two routes ("Lead" as a chemical and as a disease concept's synonym) takes the type
the project's annotations use most for that name, else the type used most overall (table order without
annotations); it keeps only the concepts of that type. A name the annotations mostly give a type this
dictionary does not tag ("insulin" annotated as a Gene with NCBI Gene ids, in a MeSH project) is left
out: the project has said what it is, and the KB cannot link it as that.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass

from sqlalchemy import select

from core.kb.knowledge_base import KnowledgeBase
from core.kb.routing import ALL, TypeRouter


@dataclass(frozen=True)
class DetectionType:
    name: str  # as stored on detected mentions
    route: str  # the route's spec (the key of its group in the table)
    admitted: frozenset[str] | None  # concept ids it may tag (None: all)


def detection_types(
    project, kb: KnowledgeBase, router: TypeRouter, *, leave_out: Collection[str] = ()
) -> list[DetectionType]:
    """The types one dictionary pass tags, most used by the annotations first (see the module docstring);
    the annotations of `leave_out` (an evaluation's split) do not count."""
    from core.detect.mention_type import annotated_type_counts

    by_route: dict[str, Counter[str]] = {}
    for mention_type, count in annotated_type_counts(project, kb, leave_out).items():
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
    project,
    kb: KnowledgeBase,
    router: TypeRouter,
    types: list[DetectionType],
    pairs: list[tuple[str, str]],
    *,
    leave_out: Collection[str] = (),
) -> list[tuple[str, str, str]]:
    """(name, concept id, type) for every (name, concept id) pair whose concept a type admits, one
    type per name (see the module docstring); `leave_out`: documents whose annotations do not count."""
    from core.detect.dictionary import dictionary_key

    by_route = {t.route: t for t in types}
    votes = _annotated_votes(project, router, leave_out)
    offered: dict[str, dict[str, list[tuple[str, str]]]] = {}  # key -> type name -> (name, id)
    for name, concept_id in pairs:
        key = dictionary_key(name)
        for detection_type in types:
            if detection_type.admitted is None or concept_id in detection_type.admitted:
                offered.setdefault(key, {}).setdefault(detection_type.name, []).append((name, concept_id))
    order = {t.name: position for position, t in enumerate(types)}
    result: list[tuple[str, str, str]] = []
    for key, per_type in offered.items():
        said = votes.get(key)
        if said:
            top_route = said.most_common(1)[0][0]
            if top_route not in by_route:
                continue  # the annotations call it something this dictionary does not tag
            chosen = by_route[top_route].name
            if chosen not in per_type:
                continue
        else:
            chosen = min(per_type, key=order.__getitem__)
        result += [(name, concept_id, chosen) for name, concept_id in per_type[chosen]]
    return result


def _annotated_votes(project, router: TypeRouter, leave_out: Collection[str]) -> dict[str, Counter[str]]:
    """Dictionary key -> route (or '=TYPE' for a type no route names) -> how many annotated mentions of
    the train and dev splits with that text have a type of that route."""
    from core.detect.dictionary import dictionary_key
    from core.learn.training_data import TRAINING_SPLITS
    from core.store.schema import DocumentRow, MentionRow

    votes: dict[str, Counter[str]] = {}
    left_out = set(leave_out)
    with project.session() as session:
        rows = session.execute(
            select(DocumentRow.external_id, MentionRow.text, MentionRow.type)
            .join(DocumentRow, DocumentRow.id == MentionRow.document_id)
            .where(
                DocumentRow.split.in_(TRAINING_SPLITS),
                MentionRow.origin != "detected",
                MentionRow.removed.is_(False),
                MentionRow.type != "",
            )
        )
        for doc_id, text, mention_type in rows:
            if doc_id in left_out:
                continue
            found = router.table.get(mention_type.strip().lower())
            route = found[1].spec if found is not None else "=" + mention_type
            votes.setdefault(dictionary_key(text), Counter())[route] += 1
    return votes
