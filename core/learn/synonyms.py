"""The KB learns too: a mention string a curator linked to a concept becomes that concept's synonym.

Stored with `source="curator"` (so an export can tell them apart) and, when a retriever is loaded,
encoded into its name index in place (`RescnnRetriever.add_names`) instead of re-encoding the whole KB.
The string is the mention's query as the desk plans it (core.retrieve.query_plan): an abbreviation its
abstract defines is added as the long form, not as a short form that means something else elsewhere.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from core.kb.knowledge_base import KnowledgeBase, NameEntry
from core.retrieve.query_plan import plan_document
from core.store.curation import LINKING_ACTIONS

log = logging.getLogger(__name__)

CURATOR_SOURCE = "curator"


def curated_synonyms(
    project, kb: KnowledgeBase, mention_ids: Iterable[int] | None = None
) -> dict[str, list[str]]:
    """Concept id -> mention queries accepted or corrected for it (current decisions only)."""
    wanted = None if mention_ids is None else set(mention_ids)
    state = project.current_decisions(mention_ids=None if wanted is None else sorted(wanted))
    found: dict[str, list[str]] = {}
    for document, ids in project.documents_with_mention_ids():
        for plan, mention_id in zip(plan_document(document), ids, strict=True):
            decision = state.get(mention_id)
            if decision is None or decision.action not in LINKING_ACTIONS or not decision.concept_id:
                continue
            concept_id = kb.resolve(decision.concept_id)
            if concept_id is not None and plan.query.strip():
                found.setdefault(concept_id, []).append(plan.query.strip())
    return found


def learn_synonyms(
    project, *, kb: KnowledgeBase | None = None, retriever=None, mention_ids=None
) -> list[NameEntry]:
    """Store curator synonyms in the project; add the new ones to `kb` and to `retriever`'s index.

    `kb` must be the knowledge base the retriever indexed (the same object), so its fingerprint and the
    saved index move together. Returns the names that were new to the KB.
    """
    kb = kb if kb is not None else project.knowledge_base()
    added: list[NameEntry] = []
    for concept_id, names in curated_synonyms(project, kb, mention_ids).items():
        project.add_names(concept_id, names, source=CURATOR_SOURCE)
        added += kb.add_names(concept_id, names)
    if retriever is not None and added:
        retriever.add_names(added)
    log.info("%d curator synonyms new to the knowledge base", len(added))
    return added
