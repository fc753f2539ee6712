"""What bulk accept thresholds and what it promises: the ranker in force and the precision/coverage curve
it measured on held-out folds (core.rank.held_out), read once for the desk's Ctrl+B (Qt-free, so the
desk reaches the ranker's files through the jobs layer). The promise at a threshold is the lower
confidence bound of the precision measured there (`promise_point`), and the dialog starts at the
smallest threshold whose promise reaches TARGET_PRECISION."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

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
from core.store.top_suggestions import TopSuggestion, undecided_top_suggestions

if TYPE_CHECKING:
    from core.store.project import Project

__all__ = [
    "FALLBACK_THRESHOLD",
    "MIN_MENTIONS",
    "PROMISE_CONFIDENCE",
    "TARGET_PRECISION",
    "BulkScale",
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


@dataclass
class BulkScale:
    """What the threshold is compared with: the ranker in force ("" when none) and its held-out curve."""

    ranker: str = ""
    curve: dict | None = None
    default: float = FALLBACK_THRESHOLD
    why_fallback: str = ""  # why the default is the fixed fallback, when it is

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
    if curve is None:
        return BulkScale(
            active.version,
            why_fallback=f"ranker {active.version} kept no held-out curve (trained before it was kept: "
            "retrain it to see precision and coverage here)",
        )
    if curve["mentions"] < MIN_MENTIONS:
        return BulkScale(
            active.version,
            curve,
            why_fallback=f"ranker {active.version} was measured on {curve['mentions']} held-out mentions, "
            f"too few to set the threshold by (at least {MIN_MENTIONS})",
        )
    default = default_threshold(curve)
    if default is None:
        return BulkScale(
            active.version,
            curve,
            why_fallback=f"no threshold's held-out precision vouches for {TARGET_PRECISION:g} % "
            f"(its {100 * PROMISE_CONFIDENCE:g} % lower bound)",
        )
    return BulkScale(active.version, curve, default)
