"""A curator's decision reaches the loaded linker at once: no reload, no retrain.

The desk keeps one `Linker` loaded for hours. Without this, what a curator taught it (a corrected link,
an undone mistake) would only count after the models were loaded again, and the mentions still to be
reviewed would keep suggestions that contradict the decision just taken. After each stored decision
(and each undo or redo) the linker learns from the mentions it touched:

- a link's mention string becomes a curator synonym of its concept: stored, added to the KB and
  encoded into the name index in place (core.learn.synonyms);
- a synonym whose decision no longer stands (undone, rejected, corrected to another concept) is taken
  out of the store and the KB and hidden from the index's searches, so an undone mistake stops
  suggesting at once; the index is saved with its hidden rows, so the next start loads it (no rebuild);
- the annotation prior recounts the links of the decided documents (core.rank.prior), so the ranker
  weighs the new link the next time the string is seen.

The same functions run at load time over the whole project; here they run over the decided mentions
only, so a decision costs milliseconds on a project of any size.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.kb.knowledge_base import KnowledgeBase, NameEntry
from core.learn.synonyms import curated_synonyms, learn_synonyms, withdraw_synonyms
from core.learn.training_data import training_set
from core.rank.prior import AnnotationPrior
from core.retrieve.query_plan import plan_document
from core.store.step_reads import past_spans
from core.text.normalize import normalize_name

if TYPE_CHECKING:
    from core.store.project import Project

log = logging.getLogger(__name__)


@dataclass
class LearnedNow:
    """What one round of learning changed in the loaded linker."""

    added: list[NameEntry] = field(default_factory=list)  # curator synonyms new to the KB and index
    withdrawn: list[NameEntry] = field(default_factory=list)  # synonyms whose decision is gone
    prior_documents: int = 0  # documents whose links the annotation prior recounted
    strings: list[str] = field(default_factory=list)  # the decided mentions' normalised queries
    identical: list[int] = field(
        default_factory=list
    )  # undecided mentions with the same text: to suggest again

    @property
    def names_changed(self) -> bool:
        return bool(self.added or self.withdrawn)

    def describe(self) -> str:
        parts = []
        if self.added:
            parts.append(f"{len(self.added)} curator synonym{'s' if len(self.added) != 1 else ''} learnt")
        if self.withdrawn:
            parts.append(f"{len(self.withdrawn)} withdrawn")
        return ", ".join(parts)


def learn_decisions(
    project: Project,
    mention_ids: Sequence[int],
    *,
    kb: KnowledgeBase,
    retriever=None,
    stage=None,
    identical: bool = True,
) -> LearnedNow:
    """Bring `kb`, `retriever`'s name index and `stage`'s prior (a core.rank.stage.RankingStage, or
    None) up to the decisions now in force on `mention_ids`. `kb` must be the KB the retriever indexed.
    `identical=False` (a load catching up, with nothing suggested yet) skips the search for undecided
    mentions with the same text."""
    learned = LearnedNow()
    ids = sorted(set(mention_ids))
    if not ids:
        return learned
    doc_ids = sorted(set(project.documents.mention_documents(ids).values()))
    learned.strings = _queries(project, doc_ids, set(ids))
    curated = curated_synonyms(project, kb, ids)  # read once: what the decided mentions link now
    learned.withdrawn = _withdraw(project, kb, retriever, set(learned.strings), curated)
    learned.added = learn_synonyms(project, kb=kb, retriever=retriever, curated=curated)
    if stage is not None:
        learned.prior_documents = _recount(stage.prior, project, kb, doc_ids)
        stage.forms.forget({e.concept_id for e in learned.added + learned.withdrawn})
    # found here, where the linker runs (the desk's linking process), not in the window's process: on a
    # large project the scan is seconds of Python that would hold the window's interpreter
    learned.identical = project.identical.undecided(ids) if identical else []
    if learned.names_changed:
        log.info("decisions on %d mentions: %s", len(ids), learned.describe())
    return learned


def _queries(project: Project, doc_ids: list[str], wanted: set[int]) -> list[str]:
    """The normalised whole-mention queries (abbreviations expanded) of the wanted mentions, deleted ones
    too: an undone "annotate every occurrence" deletes the mentions its decisions taught from, and the
    synonyms they taught must be asked about (and withdrawn) all the same; and the texts of the spans a
    span edit moved them from or to (a decision on a mention whose span moved taught its old text)."""
    found: dict[str, None] = {}
    moved = past_spans(project, sorted(wanted))  # a span edit changed the string a decision teaches
    for document, ids in project.documents.documents_with_mention_ids(ids=doc_ids, include_removed=True):
        for plan, mention_id in zip(plan_document(document), ids, strict=True):
            if mention_id in wanted and normalize_name(plan.query):
                found[normalize_name(plan.query)] = None
        text = document.text
        for mention_id in ids:
            for start, end in sorted(moved.get(mention_id, ())):
                if normalize_name(text[start:end]):
                    found[normalize_name(text[start:end])] = None
    return list(found)


def _withdraw(
    project: Project, kb: KnowledgeBase, retriever, strings: set[str], curated: dict[str, list[str]]
) -> list[NameEntry]:
    """Curator synonyms among these strings that no standing decision supports leave the store, the KB
    and the index's searches. A name the decided mentions themselves still link (`curated`: the same
    string accepted again) is known to stand, so repeating a link never reads the whole project."""
    here = {(concept_id, normalize_name(name)) for concept_id, names in curated.items() for name in names}
    return withdraw_synonyms(project, kb, retriever, among=strings, supported=here)


def _recount(prior: AnnotationPrior, project: Project, kb: KnowledgeBase, doc_ids: list[str]) -> int:
    """The prior's counts for these documents, read again from the store as `load_ranking_stage` reads
    every document (imported gold and decisions, no held-out slice)."""
    linked = training_set(project, kb, held_out_fraction=0.0, doc_ids=doc_ids).train_documents
    prior.replace_documents(doc_ids, AnnotationPrior.from_documents(linked, smoothing=prior.smoothing))
    return len(doc_ids)
