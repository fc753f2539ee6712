"""One-click retraining from curator decisions: fine-tune, judge old vs new, register, maybe promote.

Each kind is trained into a scratch folder (core.jobs.models.versions) from the weights in force, evaluated with
the version in force on the held-out slice, judged by the one promotion rule (core.jobs.models.promotion), and only
then moved to models/<kind>/<version>/ and registered. A cancel or an error before that point deletes the scratch folder and leaves the registry
untouched, so the models in force are exactly those of before. Each kind's step is in its own module
(core.jobs.models.<kind>, named by the registry core.model_kinds); bringing the stored suggestions up to
date after a retrain is `core.jobs.models.relinking.retrain_and_relink`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from core.errors import CuralinkError
from core.jobs.models.kinds import KINDS as REGISTERED
from core.jobs.models.kinds import LINKING_KINDS, PROMOTION_RULES, retrain_kind
from core.jobs.models.retrain_report import KindReport as KindReport
from core.jobs.models.retrain_report import RetrainReport, RetrainStep
from core.jobs.models.versions import prune_project_indexes
from core.learn.training_data import HELD_OUT_FRACTION, training_set
from core.progress import NEVER_CANCELLED, CancelToken, PhasedProgress, ProgressCallback, no_progress

if TYPE_CHECKING:
    from core.store.project import Project

log = logging.getLogger(__name__)

KINDS = LINKING_KINDS


def retrain(
    project: Project,
    *,
    kinds: Sequence[str] = KINDS,
    max_seconds: float | None = None,
    epochs: int = 4,
    promote: str = "if-not-worse",
    held_out_fraction: float = HELD_OUT_FRACTION,
    device: str = "auto",
    base_model: str | None = None,
    seed: int = 13,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> RetrainReport:
    """Fine-tune each kind from the active version on the project's decisions and imported gold.

    Training is bounded by `epochs` (the retriever and the reranker from the version in force; the
    ranker fits in seconds), so what a retrain learns does not depend on the machine's load;
    `max_seconds` optionally bounds each kind's training too (evaluation comes on top). `promote`: "if-not-worse"
    (held-out acc@1 at least the active version's), "always" or "never" (register only; promote later
    with `Project.models.promote_model`). The retriever goes first, so the reranker trains on its candidates;
    the learned ranker (seconds) goes last, on the candidates of the models then in force.
    `base_model` (any local BERT-family folder) is used only for a kind with no version yet.
    """
    cancel.raise_if_cancelled()  # cancelled before it started (the desk closing meanwhile)
    if promote not in PROMOTION_RULES:
        raise CuralinkError(f"unknown promotion rule {promote!r}; use one of {', '.join(PROMOTION_RULES)}")
    unknown = [k for k in kinds if k not in REGISTERED]
    if unknown:
        raise CuralinkError(f"cannot retrain {unknown[0]!r}; kinds are {', '.join(REGISTERED)}")
    started = time.perf_counter()
    from core.jobs.models.retrain_plan import retrain_phases
    from core.learn.synonyms import index_curator_synonyms, prune_synonyms

    # one bar across every phase of every model, never restarting
    progress = PhasedProgress(progress, retrain_phases(kinds, max_seconds))
    progress.enter("preparing", message="reading decisions and the knowledge base")

    kb = project.kb.knowledge_base()
    if prune_synonyms(project, kb):  # names taught by decisions that no longer stand go first
        kb = project.kb.knowledge_base()
    if len(kb) == 0:
        raise CuralinkError(f"{project.path}: the knowledge base is empty; import one first")

    synonyms = index_curator_synonyms(project, kb)  # before training: the new version indexes them too
    data = training_set(project, kb, held_out_fraction=held_out_fraction)
    if not data.pairs:
        raise CuralinkError(
            f"{project.path}: nothing to learn from: no accepted or corrected links outside the held-out "
            "slice and no imported train/dev gold"
        )
    report = RetrainReport(
        training=data.counts(),
        kb_fingerprint=kb.fingerprint(),
        data_fingerprint=data.fingerprint,
        curator_synonyms=len(synonyms),
    )
    log.info("retraining %s from %s", ", ".join(kinds), report.training)
    step = RetrainStep(kb, data, promote, epochs, max_seconds, device, base_model, seed, progress, cancel)
    # the registry's order: retriever, reranker, ranker (on the candidates of the models then in
    # force), then the detector (spans, not links)
    for kind in REGISTERED:
        if kind not in kinds:
            continue
        cancel.raise_if_cancelled()
        report.kinds[kind] = retrain_kind(project, kind, step)
    report.seconds = round(time.perf_counter() - started, 1)
    if "retriever" in report.kinds:
        prune_project_indexes(project, kb.fingerprint())
    progress.finish(f"retrained in {report.seconds:.0f} s")
    return report


def rollback(project: Project, kind: str) -> str:
    """Re-activate the version that was in force before the active one; returns that version."""
    active = project.models.active_model(kind)
    if active is None:
        raise CuralinkError(f"no active {kind} to roll back")
    versions = project.models.model_versions(kind)
    previous = active.parent_version
    if not previous:
        older = [v for v in versions if v.id < active.id and v.status != "candidate"]
        if not older:
            raise CuralinkError(f"{kind} {active.version} is the first version: nothing to roll back to")
        previous = older[-1].version
    project.models.promote_model(kind, previous)
    log.info("rolled %s back from %s to %s", kind, active.version, previous)
    return previous
