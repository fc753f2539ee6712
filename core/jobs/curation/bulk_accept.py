"""What bulk accept thresholds and what it promises: the ranker in force and the precision/coverage curve
it measured on held-out folds (core.rank.held_out), read once for the desk's Ctrl+B (Qt-free, so the
desk reaches the ranker's files through the jobs layer). The promise at a threshold is the lower
confidence bound of the precision measured there (`promise_point`), and the dialog starts at the
smallest threshold whose promise reaches TARGET_PRECISION."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.documents import split_concept_ids
from core.errors import ModelError
from core.rank.held_out import (
    FALLBACK_THRESHOLD,
    METRICS_KEY,
    MIN_MENTIONS,
    PROMISE_CONFIDENCE,
    TARGET_PRECISION,
    curve_point,
    default_threshold,
    promise_point,
    valid_curve,
)
from core.store.documents_store import TRAINING_SPLITS
from core.store.top_suggestions import TopSuggestion, gold_top_suggestions, undecided_top_suggestions

if TYPE_CHECKING:
    from core.store.project import Project

__all__ = [
    "FALLBACK_THRESHOLD",
    "MIN_MENTIONS",
    "PROMISE_CONFIDENCE",
    "TARGET_PRECISION",
    "BulkScale",
    "ProjectCheck",
    "QueueScope",
    "TopSuggestion",
    "curve_point",
    "promise_point",
    "queue_top_suggestions",
    "read_scale",
    "undecided_top_suggestions",
]

KIND = "ranker"


@dataclass(frozen=True)
class QueueScope:
    """What a desk's queue shows: its documents (external ids) and, when filtered by one, the mention
    type; `said` names the filters for the dialog ("split test, unreviewed")."""

    documents: tuple[str, ...]
    mention_type: str | None = None
    said: str = ""


def queue_top_suggestions(project: Project, queue: QueueScope | None) -> list[TopSuggestion]:
    """The undecided top suggestions "the whole queue" means: of the documents the queue shows (and of
    its type filter), never of a document the curator filtered out; every document without a scope."""
    if queue is None:
        return undecided_top_suggestions(project)
    return undecided_top_suggestions(project, documents=queue.documents, mention_type=queue.mention_type)


@dataclass(frozen=True)
class ProjectCheck:
    """The promise checked on this project's own held-out documents: the gold-linked mentions of the
    splits no model trains on (test), whose stored top suggestion the ranker in force scored, and whether
    each top is the mention's whole gold link (a composite's part is wrong, as curators count it)."""

    splits: tuple[str, ...]
    documents: int
    scores: tuple[float, ...]
    right: tuple[bool, ...]

    @property
    def mentions(self) -> int:
        return len(self.scores)

    def at(self, threshold: float) -> tuple[int, int]:
        """(accepted, right) at `threshold`."""
        taken = [r for s, r in zip(self.scores, self.right, strict=True) if s >= threshold]
        return len(taken), sum(taken)

    def precision(self, threshold: float) -> float | None:
        accepted, right = self.at(threshold)
        return 100 * right / accepted if accepted else None

    def describe_where(self) -> str:
        splits = ", ".join(self.splits)
        return (
            f"this project's held-out documents (split {splits}: {self.documents:,} documents, "
            f"{self.mentions:,} gold-linked mentions the ranker scored)"
        )


@dataclass
class BulkScale:
    """What the threshold is compared with: the ranker in force ("" when none) and its held-out curve,
    with the promise checked on the project's own held-out documents (`check`, when they have gold)."""

    ranker: str = ""
    curve: dict | None = None
    default: float = FALLBACK_THRESHOLD
    why_fallback: str = ""  # why the default is the fixed fallback, when it is
    check: ProjectCheck | None = None
    why_raised: str = ""  # why the default is above the curve's own (the promise did not hold there)

    def eligible(self, tops: list[TopSuggestion]) -> list[TopSuggestion]:
        """The suggestions whose score is this scale's: the ranker's own, when a ranker is in force."""
        return [t for t in tops if t.scored_by(self.ranker)] if self.ranker else list(tops)


def read_scale(project: Project) -> BulkScale:
    """The ranker in force and the curve stored with it (ranker.json), or why there is none."""
    from core.rank.model import RankerModel

    active = project.models.active_model(KIND)
    if active is None:
        return BulkScale(why_fallback="no ranker in force, so the scores are not calibrated probabilities")
    try:
        model = RankerModel.load(active.path, project.path)
    except ModelError as exc:  # linking then keeps the retriever's order: its scores are not probabilities
        return BulkScale(why_fallback=f"the ranker in force cannot be used ({exc})")
    curve = valid_curve(model.metrics.get(METRICS_KEY))
    check = project_check(project, active.version)
    if curve is None:
        return BulkScale(
            active.version,
            why_fallback=f"ranker {active.version} kept no held-out curve (trained before it was kept: "
            "retrain it to see precision and coverage here)",
            check=check,
        )
    if curve["mentions"] < MIN_MENTIONS:
        return BulkScale(
            active.version,
            curve,
            why_fallback=f"ranker {active.version} was measured on {curve['mentions']} held-out mentions, "
            f"too few to set the threshold by (at least {MIN_MENTIONS})",
            check=check,
        )
    default = default_threshold(curve)
    if default is None:
        return BulkScale(
            active.version,
            curve,
            why_fallback=f"no threshold's held-out precision vouches for {TARGET_PRECISION:g} % "
            f"(its {100 * PROMISE_CONFIDENCE:g} % lower bound)",
            check=check,
        )
    kept = keeping_threshold(curve, check, default)
    if kept is None:
        return BulkScale(
            active.version,
            curve,
            why_fallback=f"at no threshold did {check.describe_where()} reach the precision the ranker's "
            "curve promises there",
            check=check,
        )
    raised = (
        f"at {default:.2f} the curve's promise did not hold on {check.describe_where()}"
        if kept > default
        else ""
    )
    return BulkScale(active.version, curve, kept, check=check, why_raised=raised)


def project_check(project: Project, ranker: str) -> ProjectCheck | None:
    """The gold-linked mentions of the splits no model trains on (core.store.documents_store
    TRAINING_SPLITS), with the top suggestion `ranker` scored; None when there are none."""
    held = [split for split in project.documents.splits() if split not in TRAINING_SPLITS]
    if not held:
        return None
    tops = [t for t in gold_top_suggestions(project, held) if t.version.endswith(f"ranker {ranker}")]
    if not tops:
        return None
    resolved: dict[str, str | None] = {}

    def resolve(concept_id: str) -> str | None:
        if concept_id not in resolved:
            resolved[concept_id] = project.kb.resolve_concept_id(concept_id)
        return resolved[concept_id]

    def whole(top) -> bool:
        parts = set(split_concept_ids(top.gold))
        if len(parts) != 1:  # a composite: one candidate is never the whole link
            return False
        gold = next(iter(parts))
        return gold == top.concept_id or (resolve(gold) is not None and resolve(gold) == resolve(top.concept_id))

    return ProjectCheck(
        tuple(held),
        len({t.document for t in tops}),
        tuple(t.score for t in tops),
        tuple(whole(t) for t in tops),
    )


def keeping_threshold(curve: dict, check: ProjectCheck | None, start: float) -> float | None:
    """The smallest threshold from `start` up at which the check on the project's held-out documents
    measured at least the precision the curve promises (or accepted nothing); `start` itself without a
    check of MIN_MENTIONS mentions or more (fewer cannot tell a 98 % promise from 96 %)."""
    if check is None or check.mentions < MIN_MENTIONS:
        return start
    for threshold in curve["thresholds"]:
        if threshold < start:
            continue
        promised = promise_point(curve, threshold)
        measured = check.precision(threshold)
        if measured is None or (promised is not None and measured >= promised):
            return threshold
    return None
