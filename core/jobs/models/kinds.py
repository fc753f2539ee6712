"""The model kinds a project trains, and the one rule that decides whether a new version goes in force.

Each kind declares how it is trained, retrained, evaluated and loaded (as "module:function" names,
resolved only when called, so reading the registry loads no model code), what training needs, and which
held-out metric the promotion rule compares. The front ends (the CLI's `train`/`evaluate`, `retrain`, the
desk, the demo) call the verbs here - `train`, `evaluate`, `load` - never a kind's function: per-kind
options pass through. Every trainer publishes its version through `core.jobs.models.versions.publish_version`,
and whether it goes in force is decided by `promotion_decision`: the rule is written once, here.

The kinds' functions share a leading signature (checked by tests/test_train_via_registry.py):
- train: `(project, *, promote: bool, progress, cancel, **options) -> TrainedVersion`;
- retrain: `(project, kb, data, *, promote: str, epochs, max_seconds, device, base_model, seed,
  progress, cancel) -> KindReport` (fine-tune from the version in force, judged on the held-out slice);
- evaluate: `(project, split, **options) -> dict`;
- load: `(project, version_row, **options) -> the loaded model`.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.errors import CuralinkError
from core.jobs.models.versions import TrainedVersion
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

if TYPE_CHECKING:
    from core.store.project import Project

log = logging.getLogger(__name__)

PROMOTION_RULES = ("if-not-worse", "always", "never")


@dataclass(frozen=True)
class ModelKind:
    name: str
    score: str
    """The held-out metric `promotion_decision` compares (higher is better)."""
    score_name: str
    """How a promotion reason names that metric."""
    held_out: str
    """What the held-out slice must hold for a comparison (named when it holds none)."""
    needs: str
    """What training needs, for the message when the project lacks it."""
    train: str
    retrain: str
    evaluate: str
    load: str
    retrained_by_default: bool = True
    """Whether `retrain` without named kinds trains it (the detector: only when one is in force)."""

    def job(self, which: str) -> Callable:
        """The function behind `train`, `retrain`, `evaluate` or `load`, imported now."""
        module, name = getattr(self, which).split(":")
        target = importlib.import_module(module)
        for part in name.split("."):
            target = getattr(target, part)
        return target


KINDS: dict[str, ModelKind] = {
    kind.name: kind
    for kind in (
        ModelKind(
            "retriever",
            score="acc@1",
            score_name="held-out acc@1",
            held_out="mentions",
            needs="a knowledge base (its synonyms are the training pairs), plus gold or curated links",
            train="core.jobs.models.retriever:train_retriever",
            retrain="core.jobs.models.retrain:retrain_retriever",
            evaluate="core.evaluate.retrieval:evaluate_project_retriever",
            load="core.jobs.models.retriever:load_retriever",
        ),
        ModelKind(
            "reranker",
            score="acc@1",
            score_name="held-out acc@1",
            held_out="mentions",
            needs="a retriever in force and gold or curated links in train documents",
            train="core.jobs.models.reranker:train_reranker_for_project",
            retrain="core.jobs.models.retrain:retrain_reranker",
            evaluate="core.jobs.models.reranker:evaluate_reranker_for_project",
            load="core.jobs.models.reranker:load_reranker",
        ),
        ModelKind(
            "ranker",
            score="acc@1",
            score_name="held-out acc@1",
            held_out="mentions",
            needs="a retriever in force and imported gold or accepted / corrected decisions",
            train="core.jobs.models.ranker:train_ranker_for_project",
            retrain="core.jobs.models.ranker:retrain_ranker",
            evaluate="core.jobs.models.evaluate_ranker:evaluate_ranker_for_project",
            load="core.jobs.models.ranker:load_ranker",
        ),
        ModelKind(
            "detector",
            score="score",
            score_name="held-out span/end-to-end F1",
            held_out="documents with spans",
            needs="gold or curator-checked mention spans",
            train="core.jobs.models.detector:train_detector_for_project",
            retrain="core.jobs.models.retrain_detector:retrain_detector",
            evaluate="core.evaluate.detection:evaluate_detectors",
            load="core.jobs.models.detector:load_detector_version",
            retrained_by_default=False,
        ),
        ModelKind(
            "tagger",
            score="score",
            score_name="held-out end-to-end strict F1",
            held_out="documents with spans",
            needs="gold or curator-checked mention spans",
            train="core.jobs.models.tagger:train_tagger_for_project",
            retrain="core.jobs.models.tagger:retrain_tagger",
            evaluate="core.evaluate.detection:evaluate_detectors",
            load="core.jobs.models.tagger:load_tagger_version",
            retrained_by_default=False,
        ),
    )
}

LINKING_KINDS = tuple(name for name, kind in KINDS.items() if kind.retrained_by_default)
"""Retrained in this order: the retriever first (the reranker trains on its candidates), the ranker
last (on the candidates of the models then in force)."""


def model_kind(name: str) -> ModelKind:
    try:
        return KINDS[name]
    except KeyError:
        raise CuralinkError(f"unknown model kind {name!r}; kinds are {', '.join(KINDS)}") from None


def promotion_decision(kind: str, new: dict, old: dict, rule: str = "if-not-worse") -> tuple[bool, str]:
    """Whether a new version of `kind` goes in force, and why. "if-not-worse": its held-out score
    (`new`) at least that of the version in force (`old`; empty when none is); "always"; "never"."""
    if rule not in PROMOTION_RULES:
        raise CuralinkError(f"unknown promotion rule {rule!r}; use one of {', '.join(PROMOTION_RULES)}")
    if rule == "always":
        return True, "promoted by explicit choice"
    if rule == "never":
        return False, "kept as a candidate by explicit choice"
    spec = model_kind(kind)
    if not new or spec.score not in new:
        return False, f"no held-out {spec.held_out} to compare on (decide some mentions in more documents)"
    if not old or spec.score not in old:
        return True, f"no {kind} in force to compare with"
    if new[spec.score] >= old[spec.score]:
        return True, f"{spec.score_name} {new[spec.score]:.2f} >= {old[spec.score]:.2f}"
    return False, f"{spec.score_name} {new[spec.score]:.2f} < {old[spec.score]:.2f} of the version in force"


TRAIN_RULES = ("always", "never")
"""What `train` may be told: "if-not-worse" is `retrain`'s. A trainer that can measure the version in force
on its own held-out documents still keeps a worse new version as a candidate and says why (`train
retriever` compares held-out acc@1 with `promotion_decision`; `train detector` compares with the dictionary)."""


def train(
    project: Project,
    kind: str,
    *,
    promote: str = "always",
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
    **options,
) -> TrainedVersion:
    """Train a new version of `kind` on the project (the CLI's `train KIND`, the demo): the kind's trainer
    with its own `options`, published through `publish_version`, in force as `promotion_decision` rules."""
    spec = model_kind(kind)
    if promote not in TRAIN_RULES:
        raise CuralinkError(
            f"train {kind}: promotion rule {promote!r} needs a held-out comparison with the version in "
            f"force, which `retrain` makes; use one of {', '.join(TRAIN_RULES)}"
        )
    promoted, reason = promotion_decision(kind, {}, {}, promote)
    log.info("training %s via registry (%s)", kind, reason)
    trained = spec.job("train")(project, promote=promoted, progress=progress, cancel=cancel, **options)
    if trained.version:
        trained.reason = trained.reason or reason  # a trainer that measured its own case keeps it
    return trained


def retrain_kind(project: Project, kind: str, kb, data, **options):
    """One kind's step of `retrain` (core.jobs.models.retrain): fine-tune, judge, publish under the rule."""
    log.info("retraining %s via registry", kind)
    return model_kind(kind).job("retrain")(project, kb, data, **options)


def evaluate(project: Project, kind: str, *, split: str = "test", **options) -> dict:
    """Measure the version of `kind` in force on one split (the CLI's `evaluate KIND`)."""
    log.info("evaluating %s on %s via registry", kind, split)
    return model_kind(kind).job("evaluate")(project, split=split, **options)


def load(project: Project, kind: str, version: str | None = None, **options):
    """A version of `kind` (the one in force when `version` is None), loaded and ready to use."""
    spec = model_kind(kind)
    if version is None:
        row = project.models.active_model(kind)
        if row is None:
            raise CuralinkError(f"{project.path}: no {kind} in force (training one needs {spec.needs})")
    else:
        rows = [row for row in project.models.model_versions(kind) if row.version == version]
        if not rows:
            known = ", ".join(row.version for row in project.models.model_versions(kind)) or "none"
            raise CuralinkError(f"{project.path}: no {kind} version {version!r} (versions: {known})")
        row = rows[0]
    return spec.job("load")(project, row, **options)
