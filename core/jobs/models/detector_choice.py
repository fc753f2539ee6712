"""Which detector goes in force, per type: candidates compared end to end on held-out documents through
the one promotion rule (core.jobs.models.promotion.promotion_decision).

The candidates are the dictionary, the span model in force (with the dictionary in its gaps, as
`link --detect` runs it), the tagger, and the tagger with the dictionary in its gaps. Each tags the
held-out documents' raw text; the linker in force links the spans as `link --detect` stores them; the
score is end-to-end strict F1 per mention type (a detected mention against the gold of its own type).
Without a retriever nothing can be linked, and typed strict span F1 is compared instead (the reason says
so). For each type, the best tagger candidate is judged against the detector in force without a tagger
(the span model, else the dictionary) by `promotion_decision`; the tagger version goes in force for the
types where it is not worse, the others keep the detector they had (core.detect.per_type).

The held-out documents' mention types are read as the tagger reads them (`tagger_types`): a type the
dictionary tags is kept, any other type is the dictionary's one type in a one-type project when the
mention links to the KB (NCBI-disease's four disease classes, one "SpecificDisease" dictionary), and left
out otherwise (BioRED's genes in a MeSH project).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from core.detect.per_type import DICTIONARY, SPAN_MODEL, TAGGER, TAGGER_AND_DICTIONARY, WITH_TAGGER
from core.documents import Document
from core.jobs.models.promotion import promotion_decision

if TYPE_CHECKING:
    from core.store.project import Project

log = logging.getLogger(__name__)


def tagger_types(dictionary_types: Sequence[str], documents: Sequence[Document], kb) -> dict[str, str]:
    """Annotation type -> the type the tagger labels it with (absent: left out)."""
    kept = set(dictionary_types)
    mapping: dict[str, str] = {}
    for document in documents:
        for mention in document.mentions:
            if mention.type in mapping:
                continue
            if mention.type in kept:
                mapping[mention.type] = mention.type
            elif len(kept) == 1 and any(kb.resolve(c) for c in mention.concept_ids):
                mapping[mention.type] = next(iter(kept))
    return mapping


def retyped(documents: Sequence[Document], mapping: Mapping[str, str]) -> list[Document]:
    """The documents with each mention given its tagger type; mentions of types left out dropped."""
    return [
        d.with_mentions([replace(m, type=mapping[m.type]) for m in d.mentions if m.type in mapping])
        for d in documents
    ]


def candidate_detectors(
    project: Project, kb, tagger_folder, *, leave_out: Collection[str], device: str = "auto"
) -> dict:
    """name -> detector, for the held-out comparison: the dictionary that did not learn from `leave_out`
    and the tagger reading it, with the span model in force when there is one."""
    from core.detect.tagger import CrfTagger
    from core.project_detector import dictionary_for_project, load_span_detector

    dictionary = dictionary_for_project(project, kb, leave_out=leave_out).detector
    detectors = {
        DICTIONARY: dictionary,
        TAGGER: CrfTagger(tagger_folder, dictionary),
        TAGGER_AND_DICTIONARY: CrfTagger(tagger_folder, dictionary, gap_filler=dictionary),
    }
    span = load_span_detector(project, kb=kb, device=device)
    if span is not None:
        span.gap_filler = dictionary
        detectors[SPAN_MODEL] = span
    return detectors


def held_out_scores(
    detectors: Mapping[str, object], documents: Sequence[Document], kb, types: Sequence[str], linker=None
) -> dict[str, dict[str, float]]:
    """name -> {type: F1 in percent, "all": over every type}: end-to-end strict F1 through `linker`,
    typed strict span F1 without one. `documents` hold the gold, typed as the detectors type."""
    from core.evaluate.detection import gold_annotations, linked_as_stored, predicted_annotations
    from core.evaluate.entity_linking import linking_report

    metric = "end_to_end_strict" if linker is not None else "strict"
    gold_docs = [d.with_mentions([replace(m, origin="gold") for m in d.mentions]) for d in documents]
    raw = [d.with_mentions([]) for d in documents]
    scores: dict[str, dict[str, float]] = {}
    for name, detector in detectors.items():
        found = detector.detect(raw)
        if linker is not None:
            found = linked_as_stored(linker, raw, found)
        row = {
            "all": round(
                100
                * linking_report(gold_annotations(gold_docs, kb), predicted_annotations(raw, found, kb))[
                    metric
                ]["f1"],
                2,
            )
        }
        for kind in types:
            gold = gold_annotations(
                [d.with_mentions([m for m in d.mentions if m.type == kind]) for d in gold_docs], kb
            )
            predicted = predicted_annotations(raw, [[m for m in ms if m.type == kind] for ms in found], kb)
            row[kind] = round(100 * linking_report(gold, predicted)[metric]["f1"], 2)
        scores[name] = row
    log.info("held-out %s F1 by detector and type: %s", metric, scores)
    return scores


def choose_plan(
    scores: Mapping[str, Mapping[str, float]], types: Sequence[str], rule: str = "if-not-worse"
) -> tuple[dict[str, str], list[str]]:
    """(plan: type -> candidate kept for it, reasons). Per type, the best tagger candidate against the
    detector in force without a tagger (the span model when scored, else the dictionary), through
    `promotion_decision`. The plan names a tagger candidate for at least one type when the tagger is
    to go in force."""
    baseline = SPAN_MODEL if SPAN_MODEL in scores else DICTIONARY
    plan: dict[str, str] = {}
    reasons: list[str] = []
    for kind in types:
        best = max(WITH_TAGGER, key=lambda name: scores[name].get(kind, 0.0))
        promoted, why = promotion_decision(
            "tagger", {"score": scores[best][kind]}, {"score": scores[baseline][kind]}, rule
        )
        plan[kind] = best if promoted else baseline
        reasons.append(f"{kind}: {best} against {baseline}, {why}")
    return plan, reasons


def tagger_wins(plan: Mapping[str, str]) -> bool:
    return any(name in WITH_TAGGER for name in plan.values())
