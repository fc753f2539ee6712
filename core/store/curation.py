"""The current state of curation, derived from the append-only decision history.

A `revert` decision undoes the one before it (the GUI's undo); a redo is simply the same decision
written again. So the state of a mention is the top of its replayed stack, and nothing is ever erased.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import replace

from core.documents import Document

LINKING_ACTIONS = ("accept", "correct")
# Span edits are logged beside the link decisions for provenance; they never change a mention's link.
EDIT_ACTIONS = ("adjust_span", "add_mention", "delete_mention")
NOT_IN_KB = "-1"


def replay(decisions: Iterable) -> dict[int, object]:
    """Mention id -> its effective latest decision row, given rows in chronological order.

    Span edits (EDIT_ACTIONS) are skipped: they are undone by a counter-edit, never by a `revert`.
    """
    stacks: dict[int, list] = {}
    for row in decisions:
        if row.action in EDIT_ACTIONS:
            continue
        stack = stacks.setdefault(row.mention_id, [])
        if row.action == "revert":
            if stack:
                stack.pop()
        else:
            stack.append(row)
    return {mention_id: stack[-1] for mention_id, stack in stacks.items() if stack}


def curated_documents(
    project, *, accepted_only: bool = False, split: str | None = None
) -> Iterator[Document]:
    """Documents with each mention's current link and its provenance (curator, time, model version).

    Accepted or corrected -> the chosen concept; not-in-KB -> "-1"; rejected or ambiguous -> the imported
    link stays and the decision is noted. `accepted_only` keeps only accepted or corrected mentions.
    """
    state = project.current_decisions()
    for document, mention_ids in project.documents_with_mention_ids(split):
        mentions = []
        for mention, mention_id in zip(document.mentions, mention_ids, strict=True):
            decision = state.get(mention_id)
            if decision is None:
                if not accepted_only:
                    mentions.append(mention)
                continue
            if accepted_only and decision.action not in LINKING_ACTIONS:
                continue
            concept_id = mention.concept_id
            if decision.action in LINKING_ACTIONS:
                concept_id = decision.concept_id
            elif decision.action == "nil":
                concept_id = NOT_IN_KB
            infons = {
                **mention.infons,
                "decision": decision.action,
                "curator": decision.curator,
                "decided_at": decision.created_at.isoformat(),
                **({"model_version": decision.model_version} if decision.model_version else {}),
                **{k: str(v) for k, v in json.loads(decision.detail_json).items()},
            }
            mentions.append(replace(mention, concept_id=concept_id, infons=infons))
        yield document.with_mentions(mentions)
