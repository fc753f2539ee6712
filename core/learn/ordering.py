"""Uncertainty-first ordering: the documents whose mentions the models are least sure about come first.

Uncertainty is the margin between the top two candidate scores (reranker score when there is one):
a small margin is a coin toss, where one decision teaches the most. `Project.desk.queue()` computes the
per-document margin from stored suggestions; the benchmark uses `document_margin` on fresh candidates,
with the same rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from core.documents import Candidate

if TYPE_CHECKING:
    from core.store.project import Project

CERTAIN = 1.0


def margin(candidates: Sequence[Candidate]) -> float:
    """How far apart the top two scores are; a lone candidate (or none) counts as certain, as in
    `Project.desk.queue`. Absolute: a composite mention's list is merged by rank (the whole mention's best,
    then each part's), so its second row can score higher than its first."""
    if len(candidates) < 2:
        return CERTAIN
    return abs(candidates[0].score - candidates[1].score)


def document_margin(per_mention: Sequence[Sequence[Candidate]]) -> float:
    """A document is as uncertain as its most uncertain mention."""
    return min((margin(c) for c in per_mention), default=CERTAIN)


def uncertainty_order(project: Project, *, include_done: bool = False) -> list[str]:
    """Document ids, smallest margin first (ties keep import order); finished documents left out."""
    entries = [e for e in project.desk.queue() if include_done or e.status != "done"]
    return [e.doc_id for e in sorted(entries, key=lambda e: e.margin)]
