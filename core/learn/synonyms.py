"""The KB learns too: a mention string a curator linked to a concept becomes that concept's synonym.

Stored with `source="curator"` (so an export can tell them apart) and, when a retriever is loaded,
encoded into its name index in place (`RescnnRetriever.add_names`: only the new strings are encoded and
appended, the index is never rebuilt for them). `core.project_models.load_linker` (the desk, `link`, `evaluate`) and
`retrain` call it, and a loaded linker learns each decision as it is stored (core.learn.live), so an
accepted correction is retrievable at once in the desk that made it.
The string is the mention's query as the desk plans it (core.retrieve.query_plan): an abbreviation its
abstract defines is added as the long form, not as a short form that means something else elsewhere.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core.kb.knowledge_base import KnowledgeBase, NameEntry
from core.learn.teaching import learning_on, teaches, vetoed
from core.retrieve.query_plan import plan_document
from core.store.curation import COMPOSITE_SEPARATOR, LINKING_ACTIONS
from core.store.curation_log import Decision
from core.text.normalize import normalize_name

if TYPE_CHECKING:
    from core.store.project import Project

log = logging.getLogger(__name__)

CURATOR_SOURCE = "curator"
_CHUNK = 5000
_FEW = 20
"""Up to this many concepts (a live decision's) their names are written as they are; above it (a load)
the names the store already has are read once and skipped."""


def curated_synonyms(
    project: Project, kb: KnowledgeBase, mention_ids: Iterable[int] | None = None
) -> dict[str, list[str]]:
    """Concept id -> mention queries accepted or corrected for it (current decisions only), less what
    the curators kept from teaching (core.learn.teaching): nothing while learning is off, no decision
    taken without teaching, no synonym a curator removed."""
    found: dict[str, list[str]] = {}
    for link in curated_links(project, kb.resolve, mention_ids):
        found.setdefault(link.concept_id, []).append(link.query)
    return found


@dataclass(frozen=True)
class CuratedLink:
    """One decision that teaches a synonym: the concept (primary id), the mention's query, the mention
    and the decision in force."""

    concept_id: str
    query: str
    mention_id: int
    decision: Decision


def curated_links(
    project: Project,
    resolve: Callable[[str], str | None],
    mention_ids: Iterable[int] | None = None,
    *,
    vetoes: bool = True,
) -> list[CuratedLink]:
    """The standing decisions that teach a synonym (`resolve`: a decision's concept id -> the primary
    id, or None). `vetoes=False` keeps the removed synonyms (to list them)."""
    if not learning_on(project):
        return []
    wanted = None if mention_ids is None else set(mention_ids)
    state = project.curation.current_decisions(mention_ids=None if wanted is None else sorted(wanted))
    linked = [
        mention_id
        for mention_id, decision in state.items()
        if decision.action in LINKING_ACTIONS and decision.concept_id and teaches(decision.detail_json)
    ]
    if not linked:
        return []
    doc_ids: set[str] = set()  # plan only those documents; chunks stay below SQLite's variable limit
    for start in range(0, len(linked), _CHUNK):
        doc_ids.update(project.documents.mention_documents(linked[start : start + _CHUNK]).values())
    ordered = sorted(doc_ids)
    refused = vetoed(project) if vetoes else set()
    found: list[CuratedLink] = []
    for start in range(0, len(ordered), _CHUNK):
        _collect(project, resolve, state, set(linked), ordered[start : start + _CHUNK], refused, found)
    return found


def _collect(project: Project, resolve, state, linked: set[int], doc_ids: list[str], refused, found: list) -> None:
    for document, ids in project.documents.documents_with_mention_ids(ids=doc_ids):
        for plan, mention_id in zip(plan_document(document), ids, strict=True):
            if mention_id not in linked:
                continue
            decision = state[mention_id]
            if COMPOSITE_SEPARATOR in decision.concept_id:  # "retinal and pineal tumours" names no part alone
                continue
            concept_id = resolve(decision.concept_id)
            query = plan.query.strip()
            if concept_id is not None and query and (concept_id, normalize_name(query)) not in refused:
                found.append(CuratedLink(concept_id, query, mention_id, decision))


def new_synonyms(project: Project, kb: KnowledgeBase) -> dict[str, list[str]]:
    """The curated synonyms that are not yet a name of their concept in `kb` (nothing is changed)."""
    known: dict[str, set[str]] = {}
    for entry in kb.names:
        known.setdefault(entry.concept_id, set()).add(normalize_name(entry.name))
    pending: dict[str, list[str]] = {}
    for concept_id, names in curated_synonyms(project, kb).items():
        fresh = [n for n in names if normalize_name(n) and normalize_name(n) not in known.get(concept_id, ())]
        if fresh:
            pending[concept_id] = fresh
    return pending


def prune_synonyms(project: Project, kb: KnowledgeBase | None = None) -> int:
    """Remove the curator synonyms no standing decision supports any more (the decision was undone,
    rejected or corrected to another concept): a curator's mistake must not stay in the KB as a name
    that keeps suggesting the wrong concept. Returns how many names were removed from the store (read
    the KB again when it is not 0); its fingerprint changes, so the name index is rebuilt without them."""
    kb = kb if kb is not None else project.kb.knowledge_base()  # ids are resolved against it; not changed
    stale = stale_synonyms(project, kb)
    if not stale:
        return 0
    removed = project.kb.remove_names(stale, source=CURATOR_SOURCE)
    log.info("%d curator synonyms removed: the decisions that taught them no longer stand", removed)
    return removed


def withdraw_synonyms(
    project: Project,
    kb: KnowledgeBase,
    retriever=None,
    *,
    among: set[str] | None = None,
    supported: set[tuple[str, str]] = frozenset(),
    complete: bool = False,
) -> list[NameEntry]:
    """Curator synonyms no standing decision supports leave the store and `kb`, and are hidden in
    `retriever`'s name index (which is saved with them hidden: no rebuild at the next load). `among`,
    `supported` and `complete` narrow the question as in `stale_synonyms`. Returns the KB entries
    withdrawn."""
    stale = stale_synonyms(project, kb, among=among, supported=supported, complete=complete)
    if not stale:
        return []
    project.kb.remove_names(stale, source=CURATOR_SOURCE)
    withdrawn: list[NameEntry] = []
    for concept_id, names in stale.items():
        # The KB holds one name per spelling that normalises alike: a curator's "episodic ataxia type 2"
        # and MEDIC's "Episodic ataxia type 2" are one entry, which stays while the store still has the
        # other (else the live KB, and the index saved for it, would no longer be the stored KB's).
        stored = project.kb.concept(concept_id)
        still = {normalize_name(n) for n in stored.names} if stored is not None else set()
        gone = {n for n in names if normalize_name(n) not in still}
        if gone:
            withdrawn += kb.remove_names(concept_id, gone)
    if retriever is not None and withdrawn:
        retriever.withdraw_names(withdrawn, drop_superseded=True)  # the store no longer has them
    return withdrawn


def stale_synonyms(
    project: Project,
    kb: KnowledgeBase,
    *,
    among: set[str] | None = None,
    supported: set[tuple[str, str]] = frozenset(),
    complete: bool = False,
) -> dict[str, set[str]]:
    """Concept id -> the stored curator synonyms no standing decision supports (nothing is changed).
    `among`: only names whose normalised form is in it are considered (an open desk asks about the
    strings of the mentions just decided); `supported`: (concept id, normalised name) pairs already
    known to stand, with `complete` every pair that stands (nothing more is read). Every decision is read
    only when some stored name is left in doubt."""
    stored = project.kb.names_from_source(CURATOR_SOURCE)
    if among is not None:
        stored = {c: {n for n in names if normalize_name(n) in among} for c, names in stored.items()}
    stored = {c: {n for n in names if (c, normalize_name(n)) not in supported} for c, names in stored.items()}
    stored = {c: names for c, names in stored.items() if names}
    if not stored or complete:  # `complete`: `supported` is every standing decision's (a load read them)
        return stored
    # only the decisions linking one of the doubtful concepts can support its names
    wanted = {i for concept_id in stored for i in (concept_id, *kb.ids_of(concept_id))}
    standing = {
        (concept_id, normalize_name(name))
        for concept_id, names in curated_synonyms(project, kb, linked_to(project, wanted)).items()
        for name in names
    }
    stale = {
        concept_id: {n for n in names if (concept_id, normalize_name(n)) not in standing}
        for concept_id, names in stored.items()
    }
    return {concept_id: names for concept_id, names in stale.items() if names}


def linked_to(project: Project, concept_ids: set[str]) -> list[int]:
    """Mentions whose decision in force links one of these ids (as written in the decision)."""
    return project.curation.linked_to(concept_ids)


def learn_synonyms(
    project: Project,
    *,
    kb: KnowledgeBase | None = None,
    retriever=None,
    mention_ids=None,
    curated: dict[str, list[str]] | None = None,
) -> list[NameEntry]:
    """Store curator synonyms in the project; add the new ones to `kb` and to `retriever`'s index.

    `kb` must be the knowledge base the retriever indexed (the same object), so its fingerprint and the
    saved index move together. `curated`: `curated_synonyms` of these mentions when the caller has
    already read it. Returns the names that were new to the KB.
    """
    kb = kb if kb is not None else project.kb.knowledge_base()
    if curated is None:
        curated = curated_synonyms(project, kb, mention_ids)
    stored = project.kb.names_from_source(CURATOR_SOURCE) if len(curated) > _FEW else {}
    added: list[NameEntry] = []
    for concept_id, names in curated.items():
        concept = kb.concepts.get(concept_id)
        known = stored.get(concept_id, set()) | set(concept.names if concept is not None else ())
        if any(n not in known for n in names):  # a name the store has under this exact spelling is
            # skipped (it would be refused as a repeat): a load re-reads every decision, one transaction
            # per concept was a second of the desk's start on MEDIC
            project.kb.add_names(concept_id, names, source=CURATOR_SOURCE)
        added += kb.add_names(concept_id, names)
    if retriever is not None and added:
        retriever.add_names(added, drop_superseded=True)
    if added:
        log.info("%d curator synonyms new to the knowledge base", len(added))
    return added


def index_curator_synonyms(project: Project, kb: KnowledgeBase) -> list[NameEntry]:
    """Before retraining: new curator synonyms into the store, `kb` and the active retriever's saved index.

    The active retriever is loaded (its index for `kb` as it was, from index/) only when there is
    something new, and the new names are appended to that index, so the version in force (and the
    comparison a retrain makes against it) reads them without a rebuild.
    """
    if not new_synonyms(project, kb):
        return []
    active = project.models.active_model("retriever")
    retriever = None
    if active is not None:
        from core.retrieve.rescnn_retriever import RescnnRetriever

        retriever = RescnnRetriever.load(Path(active.path), index_dir=project.index_dir)
        retriever.index(kb)
    return learn_synonyms(project, kb=kb, retriever=retriever)
