"""What a retrain reports per model (old vs new on the held-out slice, the decision), and how every
retrain step ends: the one promotion rule applied, the version published."""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from core.jobs.models.kinds import promotion_decision
from core.jobs.models.versions import Draft, publish_version
from core.progress import NEVER_CANCELLED, CancelToken

if TYPE_CHECKING:
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
    """Decide with the promotion rule, then publish the draft with old vs new and the decision in its
    metrics (`metrics`: the trainer's own, kept; default the report's training figures)."""
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
