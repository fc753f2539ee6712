"""The curator's recent decisions read back from the log: where the undo history (core.jobs.curation.undo) of a
project written before it was kept starts.

Only decisions still in force and made by this curator are undoable steps (one undone since, or covered by
another curator's decision, is not); newest last, at most `limit`. Decisions written together under one
`batch` id in their detail (a copy to identical mentions, a bulk accept) come back as one step.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlalchemy import select

from core.store.schema import DecisionRow, MentionRow, MentionStateRow

if TYPE_CHECKING:
    from core.store.project import Project

HISTORY_LIMIT = 200


@dataclass
class RestoredStep:
    """One undo step: (mention id, action, concept id, detail, mention text) per decision."""

    batch: str
    decisions: list[tuple[int, str, str, dict, str]] = field(default_factory=list)
    decision_ids: list[int] = field(default_factory=list)


def recent_decisions(project: Project, curator: str, limit: int = HISTORY_LIMIT) -> list[RestoredStep]:
    """At most `limit` steps, oldest first (the order to push them onto an undo stack)."""
    query = (
        select(DecisionRow, MentionRow.text)
        .join(MentionStateRow, MentionStateRow.decision_id == DecisionRow.id)
        .join(MentionRow, MentionRow.id == DecisionRow.mention_id)
        .where(DecisionRow.curator == curator, MentionRow.removed.is_(False))
        .order_by(DecisionRow.id.desc())
    )
    steps: dict[str, RestoredStep] = {}
    with project.session() as session:
        for row, text in session.execute(query):
            detail = json.loads(row.detail_json or "{}")
            batch = str(detail.get("batch") or f"decision {row.id}")
            if batch not in steps:
                if len(steps) >= limit:
                    break
                steps[batch] = RestoredStep(batch)
            steps[batch].decisions.append((row.mention_id, row.action, row.concept_id, detail, text))
            steps[batch].decision_ids.append(row.id)
    return list(reversed(steps.values()))
