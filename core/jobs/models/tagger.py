"""Tagger jobs over a project: train a version from the annotations, decide where it goes in force, load it.

Training documents are the detector's (core.jobs.models.detector.training_splits): imported gold of train (dev
held out) and every document a curator vouched for, with the spans that stand: a curator's added or
moved span is a positive, a detected span a curator deleted or turned down is gone, so its tokens are
negatives. The dictionary features of each training document come from a project dictionary that
left out that document's fold of annotations (`TaggerSettings.folds`), as detection on new text sees a
dictionary that never learnt its strings.

Whether the version goes in force, and for which types, is decided on the held-out documents by
core.jobs.models.detector_choice (end to end through the linker in force, one `promotion_decision` per type);
the plan is kept in the version's `tagger.json` and read by core.project_detector.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from core.detect.per_type import WITH_TAGGER
from core.detect.tagger import TaggerSettings, save_settings, train_tagger, training_sequences
from core.jobs.models.detector import data_fingerprint, require_spans, training_splits
from core.jobs.models.versions import TrainedVersion
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

if TYPE_CHECKING:
    from pathlib import Path

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
    from core.jobs.models.detector_choice import retyped, tagger_types
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
    from core.jobs.models.detector_choice import tagger_wins

    return tagger_wins(plan)


def judge(project: Project, kb, folder, dev_docs, mapping, types, rule: str, device: str):
    """(plan, reasons, scores) of the candidates on the held-out documents (core.jobs.models.detector_choice)."""
    from core.jobs.models.detector_choice import candidate_detectors, choose_plan, held_out_scores, retyped

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


def retrain_tagger(
    project: Project,
    kb,
    data=None,
    *,
    promote: str,
    epochs: int = 0,
    max_seconds: float | None = None,
    device: str = "auto",
    base_model: str | None = None,
    seed: int = 13,
    progress=None,
    cancel: CancelToken = NEVER_CANCELLED,
):
    """The tagger's step in `retrain`: a fresh CRF on the spans that stand now (a CRF has no warm start;
    `epochs`, `base_model`, `seed` do not apply), judged and published under `promote` (a rule)."""
    from core.jobs.models.retrain_report import KindReport

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
