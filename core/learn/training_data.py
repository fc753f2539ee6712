"""Training pairs for the retriever: imported gold mentions and what curators accepted or corrected.

A pair's text is the mention's query as the desk plans it (core.retrieve.query_plan: abbreviations
defined in the document expanded), so the retriever learns the strings it will be asked.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from core.documents import Document, Mention
from core.kb.knowledge_base import KnowledgeBase
from core.retrieve.query_plan import plan_document
from core.store.curation import LINKING_ACTIONS
from core.store.documents_store import TRAINING_SPLITS as TRAINING_SPLITS  # where splits are stored

if TYPE_CHECKING:
    from core.store.project import Project


def gold_pairs(
    project: Project, splits: Iterable[str] = TRAINING_SPLITS, *, exclude: Collection[str] = ()
) -> list[tuple[str, str]]:
    """(query, concept id) for single-concept gold mentions; composites (A|B, A+B) and -1 are left out,
    and so are the documents in `exclude` (held out for early stopping)."""
    pairs: list[tuple[str, str]] = []
    for split in splits:
        for document in project.documents.documents(split):
            if document.doc_id in exclude:
                continue
            for mention, plan in zip(document.mentions, plan_document(document), strict=True):
                ids = mention.concept_ids
                if len(ids) == 1 and mention.origin in ("gold", "imported"):
                    pairs.append((plan.query, ids[0]))
    return pairs


def curated_pairs(project: Project, *, exclude: Collection[str] = ()) -> list[tuple[str, str]]:
    """(query, concept id) for every mention whose current decision is accept or correct (outside the
    documents in `exclude`)."""
    state = project.curation.current_decisions()
    pairs = []
    for document, mention_ids in project.documents.documents_with_mention_ids():
        if document.doc_id in exclude:
            continue
        plans = plan_document(document)
        for plan, mention_id in zip(plans, mention_ids, strict=True):
            decision = state.get(mention_id)
            if decision is not None and decision.action in LINKING_ACTIONS and decision.concept_id:
                pairs.append((plan.query, decision.concept_id))
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


HELD_OUT_FRACTION = 0.2


def _bucket(doc_id: str) -> int:
    return int.from_bytes(hashlib.sha256(doc_id.encode()).digest()[:4], "big") % 10_000


def is_held_out(doc_id: str, fraction: float = HELD_OUT_FRACTION) -> bool:
    """A document's place in the evaluation slice: a hash of its id, so it never moves between retrains."""
    return _bucket(doc_id) < fraction * 10_000


def held_out_ids(doc_ids: Iterable[str], fraction: float = HELD_OUT_FRACTION) -> set[str]:
    """The evaluation slice; a small project whose ids all hash outside it still holds out one document
    (the lowest hash), so a retrain can always be judged before it is promoted."""
    ids = list(doc_ids)
    held = {doc_id for doc_id in ids if is_held_out(doc_id, fraction)}
    if not held and fraction > 0 and len(ids) >= 2:
        held = {min(ids, key=_bucket)}
    return held


@dataclass
class TrainingSet:
    """What the curators taught, split by document into what we train on and what we judge with.

    `train_documents` / `held_out_documents` carry one mention per known link (curated link first,
    else a single-concept imported gold link), so the reranker and the evaluation read the same truth.
    """

    pairs: list[tuple[str, str]] = field(default_factory=list)
    hard_negatives: list[tuple[str, str]] = field(default_factory=list)
    train_documents: list[Document] = field(default_factory=list)
    held_out_documents: list[Document] = field(default_factory=list)
    accepted: int = 0
    several_concepts: int = 0
    corrected: int = 0
    rejected: int = 0
    not_in_kb: int = 0
    imported_gold: int = 0
    held_out_mentions: int = 0

    @property
    def fingerprint(self) -> str:
        negatives = [(f"-{text}", concept_id) for text, concept_id in self.hard_negatives]
        return fingerprint(self.pairs + negatives)

    def counts(self) -> dict[str, int]:
        return {
            "pairs": len(self.pairs),
            "accepted": self.accepted,
            "linked_to_several_concepts": self.several_concepts,
            "corrected": self.corrected,
            "rejected": self.rejected,
            "not_in_kb": self.not_in_kb,
            "imported_gold": self.imported_gold,
            "hard_negatives": len(self.hard_negatives),
            "train_documents": len(self.train_documents),
            "held_out_documents": len(self.held_out_documents),
            "held_out_mentions": self.held_out_mentions,
        }


def training_set(
    project: Project,
    kb: KnowledgeBase,
    *,
    held_out_fraction: float = HELD_OUT_FRACTION,
    gold_splits: Iterable[str] = TRAINING_SPLITS,
    doc_ids: Collection[str] | None = None,
) -> TrainingSet:
    """Gold from decisions (accept, correct) and imported train/dev gold; rejects as hard negatives.

    Not-in-KB decisions are counted and kept out of the positives (and out of the imported gold they
    overrule). Held-out documents are never trained on, whatever was decided there. `doc_ids`: only
    these documents are read (an open desk refreshes the links of the documents just decided); the
    held-out slice is still chosen among all of the project's documents, so it is the same slice.
    """
    gold_documents = {doc_id for split in gold_splits for doc_id in project.documents.document_ids(split)}
    if doc_ids is None:  # streamed: a large project's documents are not all held at once
        documents = project.documents.documents_with_mention_ids()
        state = project.curation.current_decisions()
    else:
        documents = list(project.documents.documents_with_mention_ids(ids=sorted(set(doc_ids))))
        state = project.curation.current_decisions(mention_ids=[m for _, ids in documents for m in ids])
    rejected_top = _rejected_concepts(project, state)
    result = TrainingSet()
    held_out_slice = held_out_ids(project.documents.document_ids(), held_out_fraction)
    for document, mention_ids in documents:
        held_out = document.doc_id in held_out_slice
        in_gold_split = document.doc_id in gold_documents
        linked: list[Mention] = []
        plans = plan_document(document)
        for mention, plan, mention_id in zip(document.mentions, plans, mention_ids, strict=True):
            decision = state.get(mention_id)
            concept_id = ""
            if decision is not None and decision.action in LINKING_ACTIONS and decision.concept_id:
                # A link to several concepts ("A|B") names no single concept to train a name on,
                # like an imported composite: counted apart, not as an accepted pair.
                concept_id = kb.resolve(decision.concept_id) or ""
                if not held_out and concept_id:
                    result.accepted += decision.action == "accept"
                    result.corrected += decision.action == "correct"
                elif not held_out and "|" in decision.concept_id:
                    result.several_concepts += 1
            elif decision is not None and decision.action == "nil":
                result.not_in_kb += not held_out
                continue
            elif decision is not None and decision.action == "reject":
                wrong = decision.concept_id or rejected_top.get(mention_id, "")
                if wrong and not held_out and kb.resolve(wrong):
                    result.rejected += 1
                    result.hard_negatives.append((plan.query, kb.resolve(wrong) or wrong))
                continue
            elif (
                decision is None and len(mention.concept_ids) == 1 and mention.origin in ("gold", "imported")
            ):
                if held_out or in_gold_split:
                    concept_id = kb.resolve(mention.concept_ids[0]) or ""
                    result.imported_gold += bool(concept_id) and not held_out
            if not concept_id or not mention.text.strip():
                continue
            linked.append(replace(mention, concept_id=concept_id))
            if not held_out:
                result.pairs.append((plan.query, concept_id))
        if not linked:
            continue
        if held_out:
            result.held_out_documents.append(document.with_mentions(linked))
            result.held_out_mentions += len(linked)
        else:
            result.train_documents.append(document.with_mentions(linked))
    return result


def _rejected_concepts(project: Project, state: dict) -> dict[int, str]:
    """A reject without a concept refers to the top suggestion the curator saw."""
    wanted = [m for m, d in state.items() if d.action == "reject" and not d.concept_id]
    suggestions = project.curation.suggestions_for(wanted) if wanted else {}
    return {m: found[0].concept_id for m, found in suggestions.items() if found}
