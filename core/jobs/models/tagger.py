"""Tagger jobs over a project: train a version from the annotations, its step in `retrain`, and where it goes
in force, per type (a version is loaded by core.project_detector.load_tagger_version).

Training documents are the detector's (core.jobs.models.detector.training_splits): imported gold of train (dev
held out) and every document a curator vouched for, with the spans that stand: a curator's added or
moved span is a positive, a detected span a curator deleted or turned down is gone, so its tokens are
negatives. The dictionary features of each training document come from a project dictionary that
left out that document's fold of annotations (`TaggerSettings.folds`), as detection on new text sees a
dictionary that never learnt its strings.

Whether the version goes in force, and for which types, is decided on the held-out documents (end to end
through the linker in force, one `promotion_decision` per type; the plan is kept in the version's
`tagger.json` and read by core.project_detector). The candidates are the dictionary, the span model in
force (with the dictionary in its gaps, as `link --detect` runs it), the tagger, and the tagger with the dictionary in its gaps. Each tags the
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
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from core.detect.per_type import DICTIONARY, SPAN_MODEL, TAGGER, TAGGER_AND_DICTIONARY, WITH_TAGGER
from core.detect.tagger import TaggerSettings, save_settings, train_tagger, training_sequences
from core.documents import Document
from core.jobs.models.detector import data_fingerprint, require_spans, training_splits
from core.jobs.models.promotion import promotion_decision
from core.jobs.models.versions import TrainedVersion
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

if TYPE_CHECKING:
    from pathlib import Path

    from core.jobs.models.retrain_report import KindReport, RetrainStep
    from core.store.project import Project

log = logging.getLogger(__name__)

KIND = "tagger"
MIN_TRAINING_DOCUMENTS = 5
"""Below this many documents with checked spans a retrain leaves the tagger out and says why: a CRF on
fewer learns the handful of strings the dictionary already holds."""


def fit_tagger(
    project: Project,
    kb,
    train_docs,
    held_out: set[str],
    folder: Path,
    settings: TaggerSettings | None = None,
    *,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> tuple[TaggerSettings, dict[str, str]]:
    """Train the CRF on `train_docs` into `folder`; returns its settings and the type mapping."""
    from core.project_detector import dictionary_for_project

    settings = settings or TaggerSettings(types=[])
    base = dictionary_for_project(project, kb, leave_out=held_out).detector
    mapping = tagger_types(base.types, train_docs, kb)
    settings.types = sorted(set(mapping.values()))
    folds = max(1, min(settings.folds, len(train_docs)))
    fold_of = {d.doc_id: i % folds for i, d in enumerate(train_docs)}
    dictionaries = []
    for fold in range(folds):
        cancel.raise_if_cancelled()
        progress(fold, folds + 1, "dictionaries without each fold's annotations")
        left = {doc_id for doc_id, f in fold_of.items() if f == fold} if folds > 1 else set()
        dictionaries.append(dictionary_for_project(project, kb, leave_out=held_out | left).detector)
    progress(folds, folds + 1, "features and CRF training")
    sequences = training_sequences(
        retyped(train_docs, mapping), lambda d: dictionaries[fold_of[d.doc_id]], settings.types
    )
    cancel.raise_if_cancelled()
    figures = train_tagger(sequences, folder, settings, cancel=cancel)
    log.info("tagger trained: %s (types %s)", figures, settings.types)
    return settings, mapping


def train_tagger_for_project(
    project: Project,
    *,
    promote: bool = True,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
    device: str = "auto",
    rule: str = "if-not-worse",
    c1: float | None = None,
    c2: float | None = None,
    max_iterations: int | None = None,
    folds: int | None = None,
    splits: tuple[list, list] | None = None,
) -> TrainedVersion:
    """Train, register and (per the held-out comparison under `rule`) put in force a tagger version.
    `promote` False keeps it a candidate whatever it scores; the CRF's options default to
    TaggerSettings'."""
    from core.jobs.models.versions import draft_version, publish_version

    settings = TaggerSettings(types=[])
    for name, value in (("c1", c1), ("c2", c2), ("max_iterations", max_iterations), ("folds", folds)):
        if value is not None:
            setattr(settings, name, value)
    kb = project.kb.knowledge_base()
    train_docs, dev_docs = splits if splits is not None else training_splits(project)
    require_spans(project, train_docs)
    held_out = {d.doc_id for d in dev_docs}
    started = time.perf_counter()
    with draft_version(project, KIND) as draft:
        settings, mapping = fit_tagger(
            project, kb, train_docs, held_out, draft.folder, settings, progress=progress, cancel=cancel
        )
        plan, reasons, scores = judge(
            project, kb, draft.folder, dev_docs, mapping, settings.types, rule, device
        )
        promoted = promote and tagger_plan_in_force(plan)
        settings.metrics = {
            **settings.metrics,
            "held_out_documents": len(dev_docs),
            "held_out_scores": scores,
            "plan": plan,
            "decision": reasons,
            "wall_seconds": round(time.perf_counter() - started, 1),
        }
        save_settings(settings, draft.folder)
        path = publish_version(
            project,
            draft,
            metrics=settings.metrics,
            kb_fingerprint=kb.fingerprint(),
            data_fingerprint=data_fingerprint(train_docs),
            promote=promoted,
            cancel=cancel,
        )
    reason = "; ".join(reasons) if promote else "kept as a candidate by explicit choice"
    if promote and not promoted:
        reason = f"kept as a candidate: {reason}"
    return TrainedVersion(KIND, draft.version, path, settings.metrics, promoted, reason)


def train_keywords(*, promote: str = "if-better", **keywords) -> dict:
    """`train tagger --promote`: "never" keeps it a candidate; "always" puts it in force for every type;
    "if-better" lets the held-out comparison decide per type."""
    return {
        **keywords,
        "promote": "never" if promote == "never" else "always",
        "rule": "always" if promote == "always" else "if-not-worse",
    }


def training_lines(trained: TrainedVersion, wall: float) -> list[str]:
    """The held-out scores per candidate and type, then what the CRF trained on."""
    metrics = trained.metrics
    lines = []
    for name, scores in metrics.get("held_out_scores", {}).items():
        by_type = ", ".join(f"{kind} {score:.2f}" for kind, score in scores.items() if kind != "all")
        lines.append(f"  held out, {name}: {scores['all']:.2f} ({by_type})")
    lines.append(
        f"{metrics['sequences']} documents, {metrics['tokens']} tokens, {metrics['iterations']} iterations; "
        f"{metrics['train_seconds']:.0f} s training, {wall:.0f} s wall"
    )
    return lines


def tagger_plan_in_force(plan) -> bool:
    return tagger_wins(plan)


def judge(project: Project, kb, folder, dev_docs, mapping, types, rule: str, device: str):
    """(plan, reasons, scores) of the candidates on the held-out documents (`choose_plan`)."""
    if not dev_docs:
        return {t: "dictionary" for t in types}, ["no held-out documents to compare on"], {}
    held_out = {d.doc_id for d in dev_docs}
    detectors = candidate_detectors(project, kb, folder, leave_out=held_out, device=device)
    linker = None
    if project.models.active_model("retriever") is not None:
        from core.pipeline import DEFAULT_CANDIDATES
        from core.project_models import load_linker

        linker = load_linker(project, kb=kb, device=device, candidates=DEFAULT_CANDIDATES)
    scores = held_out_scores(detectors, retyped(dev_docs, mapping), kb, types, linker)
    plan, reasons = choose_plan(scores, types, rule)
    if linker is None:
        reasons.append("no retriever in force: typed strict span F1 compared, not end to end")
    return plan, reasons, scores


def retrain_tagger(project: Project, step: RetrainStep) -> KindReport:
    """The tagger's step in `retrain`: a fresh CRF on the spans that stand now (a CRF has no warm start;
    `epochs`, `base_model`, `seed` do not apply), judged and published under `promote` (a rule)."""
    from core.jobs.models.retrain_report import KindReport

    promote, device, progress, cancel = step.promote, step.device, step.progress, step.cancel
    if progress is not None:
        progress.enter(KIND)
    active = project.models.active_model(KIND)
    train_docs, dev_docs = training_splits(project)
    if len(train_docs) < MIN_TRAINING_DOCUMENTS or not dev_docs:
        report = KindReport(KIND, "", active.version if active else "", "")
        report.promoted = False
        report.reason = (
            f"not trained: {len(train_docs)} document(s) with checked spans to learn from and "
            f"{len(dev_docs)} to judge on (needs {MIN_TRAINING_DOCUMENTS} and 1; finish more documents)"
        )
        return report
    trained = train_tagger_for_project(
        project,
        promote=promote != "never",
        rule="always" if promote == "always" else "if-not-worse",
        cancel=cancel,
        device=device,
        splits=(train_docs, dev_docs),
    )
    report = KindReport(KIND, trained.version, active.version if active else "", str(trained.path))
    scores = trained.metrics.get("held_out_scores", {})
    if scores:
        best = max(scores[name]["all"] for name in WITH_TAGGER)
        baseline = scores.get("span model", scores["dictionary"])["all"]
        report.new, report.old = {"score": best}, {"score": baseline}
    report.promoted, report.reason = trained.promoted, trained.reason
    report.seconds = trained.metrics.get("wall_seconds", 0.0)
    return report


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
