"""Training pairs for the retriever: imported gold mentions and what curators accepted or corrected."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from core.kb.knowledge_base import KnowledgeBase
from core.store.curation import LINKING_ACTIONS

TRAINING_SPLITS = ("train", "dev")


def gold_pairs(project, splits: Iterable[str] = TRAINING_SPLITS) -> list[tuple[str, str]]:
    """(mention text, concept id) for single-concept gold mentions; composites (A|B, A+B) and -1 are left out."""
    pairs: list[tuple[str, str]] = []
    for split in splits:
        for document in project.documents(split):
            for mention in document.mentions:
                ids = mention.concept_ids
                if len(ids) == 1 and mention.origin in ("gold", "imported"):
                    pairs.append((mention.text, ids[0]))
    return pairs


def curated_pairs(project) -> list[tuple[str, str]]:
    """(mention text, concept id) for every mention whose current decision is accept or correct."""
    state = project.current_decisions()
    pairs = []
    for document, mention_ids in project.documents_with_mention_ids():
        for mention, mention_id in zip(document.mentions, mention_ids, strict=True):
            decision = state.get(mention_id)
            if decision is not None and decision.action in LINKING_ACTIONS and decision.concept_id:
                pairs.append((mention.text, decision.concept_id))
    return pairs


def resolvable(pairs: Iterable[tuple[str, str]], kb: KnowledgeBase) -> list[tuple[str, str]]:
    """Pairs whose concept the KB knows (under its id or an alternative id), mapped to the primary id."""
    kept = []
    for text, concept_id in pairs:
        primary = kb.resolve(concept_id)
        if primary is not None and text.strip():
            kept.append((text, primary))
    return kept


def fingerprint(pairs: Iterable[tuple[str, str]]) -> str:
    digest = hashlib.sha256()
    for text, concept_id in sorted(pairs):
        digest.update(f"{text}\x00{concept_id}\x01".encode())
    return digest.hexdigest()[:16]
