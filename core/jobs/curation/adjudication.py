"""Adjudication: where two curators disagree, a third picks the final link, written as one more decision.

The adjudicator's decision is the latest for the mention, so it is what exports and retraining read;
both curators' own decisions stay in the history (append-only), marked by `detail.adjudicated`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.errors import CuralinkError
from core.store.curation import NOT_IN_KB

if TYPE_CHECKING:
    from core.store.project import Project

VERDICTS = {"(reject)": "reject", "(ambiguous)": "ambiguous", NOT_IN_KB: "nil"}


def adjudicate(
    project: Project, mention_id: int, label: str, adjudicator: str, *, between: tuple[str, str] = ("", "")
) -> int:
    """Record the final label (a concept id, "-1", "(reject)" or "(ambiguous)"); returns the decision id."""
    if not adjudicator:
        raise CuralinkError("an adjudication needs the adjudicator's name")
    if not label:
        raise CuralinkError(f"mention {mention_id}: no final link chosen")
    action = VERDICTS.get(label, "correct")
    detail = {"adjudicated": True, "between": [c for c in between if c]}
    return project.curation.record_decision(
        mention_id,
        action,
        concept_id="" if action in ("reject", "ambiguous", "nil") else label,
        curator=adjudicator,
        detail=detail,
    )
