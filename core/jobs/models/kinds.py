"""The verbs over the model kinds: `train`, `evaluate`, a retrain's step, `load` (the registry itself is
core.model_kinds; the promotion rule, core.jobs.models.promotion).

The front ends (the CLI's `train`/`evaluate`, `retrain`, the desk, the demo) call the verbs here, never a
kind's function: per-kind options pass through. Every trainer publishes its version through
`core.jobs.models.versions.publish_version`, and whether it goes in force is decided by
`promotion_decision`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from core.errors import CuralinkError
from core.jobs.models.promotion import PROMOTION_RULES as PROMOTION_RULES
from core.jobs.models.promotion import promotion_decision
from core.jobs.models.versions import TrainedVersion
from core.model_kinds import KINDS as KINDS
from core.model_kinds import LINKING_KINDS as LINKING_KINDS
from core.model_kinds import ModelKind as ModelKind
from core.model_kinds import Option as Option
from core.model_kinds import load as load
from core.model_kinds import model_kind
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

if TYPE_CHECKING:
    from core.jobs.models.retrain_report import KindReport, RetrainStep
    from core.store.project import Project

log = logging.getLogger(__name__)

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


def retrain_kind(project: Project, kind: str, step: RetrainStep) -> KindReport:
    """One kind's step of `retrain` (core.jobs.models.retrain): fine-tune, judge, publish under the rule."""
    log.info("retraining %s via registry", kind)
    return model_kind(kind).job("retrain")(project, step)


def evaluate(project: Project, kind: str, *, split: str = "test", **options) -> dict:
    """Measure the version of `kind` in force on one split (the CLI's `evaluate KIND`)."""
    log.info("evaluating %s on %s via registry", kind, split)
    return model_kind(kind).job("evaluate")(project, split=split, **options)
