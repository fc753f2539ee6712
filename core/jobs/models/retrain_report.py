"""What every retrain step is given (`RetrainStep`), what a retrain reports per model (old vs new on the
held-out slice, the decision), and how every retrain step ends: the one promotion rule applied, the
version published."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from core.jobs.models.promotion import promotion_decision
from core.jobs.models.versions import Draft, draft_version, publish_version
from core.progress import NEVER_CANCELLED, CancelToken, PhasedProgress

if TYPE_CHECKING:
    from pathlib import Path

    from core.kb.knowledge_base import KnowledgeBase
    from core.learn.training_data import TrainingSet
    from core.store.project import Project

log = logging.getLogger(__name__)


@dataclass
class KindReport:
    """One retrained model: its new version, old vs new on the held-out slice, and what became of it."""

    kind: str
    version: str
    parent_version: str
    path: str
    old: dict = field(default_factory=dict)
    new: dict = field(default_factory=dict)
    history: list[dict] = field(default_factory=list)
    promoted: bool = False
    reason: str = ""
    seconds: float = 0.0
    steps: int = 0
    mentions_per_s: float = 0.0  # training throughput (training strings or reranked mentions per second)


@dataclass(frozen=True)
class RetrainStep:
    """What `retrain` gives every kind's step (core.model_kinds' `retrain`, called as `(project, step)`):
    the KB and training set read once, the promotion rule, the bounds, the one progress bar."""

    kb: KnowledgeBase
    data: TrainingSet
    promote: str
    epochs: int
    max_seconds: float | None
    device: str
    base_model: str | None
    seed: int
    progress: PhasedProgress
    cancel: CancelToken


@dataclass
class RetrainReport:
    kinds: dict[str, KindReport] = field(default_factory=dict)
    training: dict = field(default_factory=dict)
    kb_fingerprint: str = ""
    data_fingerprint: str = ""
    seconds: float = 0.0
    curator_synonyms: int = 0  # names curators' links added to the KB and the index in force

    def table(self) -> list[tuple[str, str, float | None, float | None]]:
        """(kind, metric, old, new) rows for the before / after table."""
        from core.jobs.models.kinds import model_kind

        rows = []
        for kind, report in self.kinds.items():
            keys = [k for k in (report.new or report.old) if k.startswith(("acc@", "recall@"))]
            rows += [(kind, key, report.old.get(key), report.new.get(key)) for key in keys]
            if "score" in report.new:  # the detectors' one held-out F1
                rows.append((kind, model_kind(kind).score_name, report.old.get("score"), report.new["score"]))
        return rows

    def to_json(self) -> dict:
        return asdict(self)


def publish_retrained(
    project: Project,
    draft: Draft,
    report: KindReport,
    *,
    rule: str,
    kb_fingerprint: str,
    data_fingerprint: str,
    training: dict | None = None,
    metrics: dict | None = None,
    cancel: CancelToken = NEVER_CANCELLED,
) -> KindReport:
    """How every retrain step ends: decide with the promotion rule, then publish the draft with old vs new
    and the decision in its metrics (`metrics`: the trainer's own, kept; default the report's training
    figures)."""
    report.promoted, report.reason = promotion_decision(report.kind, report.new, report.old, rule)
    if metrics is None:
        metrics = {
            "history": report.history,
            "training": training or {},
            "train_seconds": round(report.seconds, 1),
            "steps": report.steps,
            "mentions_per_s": report.mentions_per_s,
        }
    metrics = {
        **metrics,
        "held_out": report.new,
        "previous": {"version": report.parent_version, **report.old},
        "decision": report.reason,
    }
    final = publish_version(
        project,
        draft,
        metrics=metrics,
        kb_fingerprint=kb_fingerprint,
        data_fingerprint=data_fingerprint,
        parent_version=report.parent_version,
        promote=report.promoted,
        cancel=cancel,
    )
    report.path = str(final)
    log.info(
        "%s %s: %s (%s)",
        report.kind,
        report.version,
        "promoted" if report.promoted else "kept",
        report.reason,
    )
    return report


def publish_step(
    project: Project,
    draft: Draft,
    report: KindReport,
    *,
    rule: str,
    kb,
    data=None,
    data_fingerprint: str | None = None,
    metrics: dict | None = None,
    cancel: CancelToken = NEVER_CANCELLED,
) -> KindReport:
    """`publish_retrained` for a step trained on the retrain's `data` (a TrainingSet: its fingerprint and
    counts) and `kb`; `data_fingerprint` stands for `data` where the kind learns from other data (the
    detector's spans)."""
    return publish_retrained(
        project,
        draft,
        report,
        rule=rule,
        kb_fingerprint=kb.fingerprint(),
        data_fingerprint=data_fingerprint if data_fingerprint is not None else data.fingerprint,
        training=data.counts() if data is not None else None,
        metrics=metrics,
        cancel=cancel,
    )


def publish_fitted(project: Project, report: KindReport, save: Callable[[Path], None], **publish) -> KindReport:
    """The ending of a retrain step whose model was fitted in memory (the ranker, the detector): saved into
    the next version's draft folder by `save`, then `publish_step(**publish)`."""
    with draft_version(project, report.kind) as draft:
        report.version = draft.version
        save(draft.folder)
        return publish_step(project, draft, report, **publish)
