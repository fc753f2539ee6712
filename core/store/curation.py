"""The current state of curation, derived from the append-only decision history.

A `revert` decision undoes the one before it (the GUI's undo); a redo is simply the same decision
written again. So the state of a mention is the top of its replayed stack, and nothing is ever erased.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from functools import cache
from typing import TYPE_CHECKING

from core.documents import Document, Mention
from core.store.curation_marks import curation_infons

if TYPE_CHECKING:
    from core.store.project import Project

LINKING_ACTIONS = ("accept", "correct")
# Decisions that refuse to confirm any link: the mention stays, its imported id is not written.
UNLINKING_ACTIONS = ("reject", "ambiguous")
# Mention edits are logged beside the link decisions for provenance; they never change a mention's link.
EDIT_ACTIONS = ("adjust_span", "change_type", "add_mention", "delete_mention")
NOT_IN_KB = "-1"
# What a person reads for an action (menus, dialogs, status lines); the log, the exports' `decision`
# infon and the code keep the action's own token ("nil", the entity-linking term).
ACTION_WORDS = {"nil": "not in the KB"}


def action_words(action: str) -> str:
    """An action as a curator reads it: "nil" is "not in the KB"; other actions are words already."""
    return ACTION_WORDS.get(action, action)


def shown_link(action: str, concept_id: str) -> str:
    """The concept part of a label, "" where the action names none (not in the KB's stored "-1")."""
    return "" if action == "nil" or concept_id == NOT_IN_KB else concept_id
# One decision may link a mention to several concepts ("colorectal, endometrial, and ovarian cancers"):
# stored as "A|B|C" (KB ids never contain "|"); every writer renders it by its format's convention.
COMPOSITE_SEPARATOR = "|"
IMPORTED_ID = "imported_id"
# The id a decision named when the KB now keys that concept by another (preferred-namespace) id.
DECIDED_ID = "decided_id"


def replay_stacks(decisions: Iterable) -> dict[int, list]:
    """Mention id -> its decisions still standing, oldest first, given rows in chronological order
    (a `revert` pops the top; span edits, EDIT_ACTIONS, are skipped: a counter-edit undoes them)."""
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
    return stacks


def replay(decisions: Iterable) -> dict[int, object]:
    """Mention id -> its effective latest decision row, given rows in chronological order."""
    return {mention_id: stack[-1] for mention_id, stack in replay_stacks(decisions).items() if stack}


def curated_documents(
    project: Project, *, accepted_only: bool = False, curated_only: bool = False, split: str | None = None
) -> Iterator[Document]:
    """Documents with each mention's current link and its provenance (curator, time, model version).

    What each decision means in an export (the desk's keys in brackets):
      - none: the mention as imported, with its imported id;
      - accept [Enter, 1-9, Ctrl+1-9] / correct [KB search]: the chosen concept id; several concepts
        are one `A|B|C` link, which each writer renders by its format's convention;
      - nil [N, not in the KB]: the id "-1";
      - reject [R, the suggested link is wrong] and ambiguous [A, several readings, none chosen]: the
        mention stays (deleting it is a different key), but no id is written, because no link was
        confirmed; the imported id survives only as the `imported_id` infon;
      - reject of a detected span (origin "detected", not gold or curator-drawn): "not a mention", so it
        is not written at all (as the detector's training already reads it, core.detect.segments).
    Decided mentions carry the decision, curator, time, model version and detail as infons, which only
    formats with infons (BioC, JSONL) write. Deleted mentions are never written. A curator's note, flag
    and "done" mark (core.store.curation_marks) travel the same way: as mention infons, and as document
    metadata (BioC document infons).

    `accepted_only` writes only accepted or corrected mentions, and only documents that have one;
    `curated_only` writes only documents with at least one mention decided (any decision still in
    force after undo), each with all its mentions; `split` keeps one split.
    """
    state = project.curation.current_decisions()
    mention_marks, document_marks = project.marks.mention_marks(), project.marks.document_marks()
    preferred = _preferred_ids(project)
    for document, mention_ids in project.documents.documents_with_mention_ids(split):
        decided = [state.get(mention_id) for mention_id in mention_ids]
        if curated_only and not any(decided):
            continue
        mentions = []
        for mention, mention_id, decision in zip(document.mentions, mention_ids, decided, strict=True):
            if mention_id in mention_marks:
                marked = {**mention.infons, **curation_infons(mention_marks[mention_id])}
                mention = replace(mention, infons=marked)
            if decision is not None and not_a_mention(mention, decision.action):
                continue
            if decision is None:
                if not accepted_only:
                    mentions.append(mention)
                continue
            if accepted_only and decision.action not in LINKING_ACTIONS:
                continue
            mentions.append(_decided(mention, decision, preferred))
        if accepted_only and not mentions:
            continue
        if document.doc_id in document_marks:
            metadata = {**document.metadata, **curation_infons(document_marks[document.doc_id])}
            document = replace(document, metadata=metadata)
        yield document.with_mentions(mentions)


def not_a_mention(mention: Mention, action: str) -> bool:
    """A detected span the curator rejected: the detector was wrong, there is no mention to write."""
    return action == "reject" and mention.origin == "detected"


def _preferred_ids(project: Project) -> Callable[[str], str]:
    """A linked id as the KB keys it now: a decision made before the project's preferred namespaces
    changed (`OMIM:114480`) exports as the concept's current id (`D001943`); ids not in the KB stay."""

    @cache
    def preferred(concept_id: str) -> str:
        parts = concept_id.split(COMPOSITE_SEPARATOR)
        return COMPOSITE_SEPARATOR.join(project.kb.resolve_concept_id(p) or p for p in parts)

    return preferred


def _decided(mention: Mention, decision, preferred: Callable[[str], str]) -> Mention:
    """The mention as the decision leaves it, with the decision's provenance as infons."""
    if decision.action in LINKING_ACTIONS:
        concept_id = preferred(decision.concept_id)
    elif decision.action == "nil":
        concept_id = NOT_IN_KB
    elif decision.action in UNLINKING_ACTIONS:
        concept_id = ""
    else:
        concept_id = mention.concept_id
    infons = {
        **mention.infons,
        "decision": decision.action,
        "curator": decision.curator,
        "decided_at": decision.created_at.isoformat(),
        **({"model_version": decision.model_version} if decision.model_version else {}),
        **{k: str(v) for k, v in json.loads(decision.detail_json).items()},
    }
    if mention.concept_id and mention.concept_id != concept_id:
        infons[IMPORTED_ID] = mention.concept_id
    if decision.action in LINKING_ACTIONS and concept_id != decision.concept_id:
        infons[DECIDED_ID] = decision.concept_id
    return replace(mention, concept_id=concept_id, infons=infons)
