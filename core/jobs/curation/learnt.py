"""What the linker learnt from the curators, shown so a curator can see it and take it back.

A decision that links a mention teaches its string to the concept as a curator synonym (core.learn.synonyms,
live through core.learn.live). `learnt_synonyms` lists those synonyms with the decision behind each; a
curator removes one with `remove_learnt` (a veto kept in the project's settings, core.learn.teaching, so it
stays removed across reloads and retrains; one undoable step of the curator's history), can decide without
teaching (decision detail `{"teach": false}`), and `set_learning` turns learning from decisions off for the
whole project. The desk (Curate ▸ Learnt from curators…) and `curalink synonyms` both call these.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from core.errors import CuralinkError
from core.jobs.curation import undo as history
from core.jobs.curation.operations import _finish, vetoed_changes
from core.jobs.curation.undo import VETO, Step
from core.learn.synonyms import CURATOR_SOURCE, curated_links, linked_to, prune_synonyms
from core.learn.teaching import TEACH, learning_on, set_learning, set_veto, veto_key, vetoed
from core.store.op_changes import OpChanges
from core.text.normalize import normalize_name

if TYPE_CHECKING:
    from core.store.project import Project

__all__ = [
    "TEACH",
    "LearntSynonym",
    "learning_on",
    "learnt_synonyms",
    "remove_learnt",
    "restore_learnt",
    "set_learning",
]


@dataclass(frozen=True)
class LearntSynonym:
    """One synonym the curators taught: the string, its concept, the newest decision teaching it (action,
    mention, document, curator, time), how many decisions teach it, and how many other mentions have the
    same text (those a live decision re-suggests while they are undecided). `removed`: a curator vetoed it;
    `pending`: taught by a standing decision but not stored yet (the next load, or live learning, adds it);
    `unsupported`: stored, but no standing decision teaches it any more (it was undone while no linker was
    loaded; the next load withdraws it), so it has no decision, mention or time."""

    string: str
    concept_id: str
    concept_name: str
    action: str
    mention_id: int | None
    document: str
    curator: str
    decided_at: datetime | None
    decisions: int
    same_text: int
    removed: bool = False
    pending: bool = False  # taught, but not in the store yet: a load (or live learning) adds it
    unsupported: bool = False  # stored with no decision behind it: withdrawn at the next load

    @property
    def state(self) -> str:
        """What the list says of it."""
        if self.removed:
            return "removed"
        if self.unsupported:
            return "no decision: withdrawn at the next load"
        return "at the next load" if self.pending else "learnt"


def learnt_synonyms(project: Project) -> list[LearntSynonym]:
    """Every curator synonym in the store or vetoed, with the standing decisions behind it (newest first),
    whatever taught it: a stored one no standing decision teaches any more comes first, marked
    `unsupported`. Nothing while learning from decisions is off (the synonyms are withdrawn at the next
    load)."""
    if not learning_on(project):
        return []
    refused = vetoed(project)
    stored = {
        (concept_id, normalize_name(name)): name
        for concept_id, names in project.kb.names_from_source(CURATOR_SOURCE).items()
        for name in names
    }
    resolved: dict[str, str | None] = {}

    def resolve(concept_id: str) -> str | None:
        if concept_id not in resolved:
            resolved[concept_id] = project.kb.resolve_concept_id(concept_id)
        return resolved[concept_id]

    groups: dict[tuple[str, str], list] = {}
    for link in curated_links(project, resolve, vetoes=False):
        groups.setdefault(veto_key(link.concept_id, link.query), []).append(link)
    concepts = project.kb.concepts(sorted({concept_id for concept_id, _ in groups}))
    known = {
        concept_id: {normalize_name(n) for n in concept.names} if concept is not None else set()
        for concept_id, concept in concepts.items()
    }
    # a learnt synonym is stored as one, or removed, or not yet a name at all (learnt at the next load);
    # a decision linking a string the KB already names teaches nothing
    groups = {k: v for k, v in groups.items() if k in stored or k in refused or k[1] not in known[k[0]]}
    orphans = sorted(key for key in stored if key not in groups and key not in refused)
    if not groups and not orphans:
        return []
    documents = project.documents.mention_documents([link.mention_id for links in groups.values() for link in links])
    texts = _mention_texts(project)
    names = project.kb.concept_names([concept_id for concept_id, _ in [*groups, *orphans]])
    rows = []
    for key, links in groups.items():
        newest = max(links, key=lambda link: link.decision.id)
        teaching = {link.mention_id for link in links}
        rows.append(
            LearntSynonym(
                string=stored.get(key, newest.query),
                concept_id=key[0],
                concept_name=names.get(key[0], ""),
                action=newest.decision.action,
                mention_id=newest.mention_id,
                document=documents.get(newest.mention_id, ""),
                curator=newest.decision.curator,
                decided_at=newest.decision.created_at,
                decisions=len(links),
                same_text=sum(1 for m, t in texts.items() if t == key[1] and m not in teaching),
                removed=key in refused,
                pending=key not in stored and key not in refused,
            )
        )
    unsupported = [
        LearntSynonym(
            string=stored[key],
            concept_id=key[0],
            concept_name=names.get(key[0], ""),
            action="",
            mention_id=None,
            document="",
            curator="",
            decided_at=None,
            decisions=0,
            same_text=sum(1 for t in texts.values() if t == key[1]),
            unsupported=True,
        )
        for key in orphans
    ]
    return unsupported + sorted(rows, key=lambda row: (row.decided_at, row.mention_id), reverse=True)


def _mention_texts(project: Project) -> dict[int, str]:
    """Mention id -> normalised text, of every mention not deleted (each distinct text normalised once)."""
    cache: dict[str, str] = {}
    found: dict[int, str] = {}
    for mention_id, text in project.documents.live_mention_texts().items():
        if text not in cache:
            cache[text] = normalize_name(text)
        found[mention_id] = cache[text]
    return found


def remove_learnt(project: Project, concept_id: str, string: str, *, curator: str = "") -> OpChanges:
    """Veto one learnt synonym (one undoable step): the decisions stay, but no longer teach `string` for
    `concept_id`. The returned `relearn` mentions are those that taught it: a loaded linker learns from
    them again, which withdraws the synonym from the store, the KB and the name index; without one, call
    `prune_store` (or the next load withdraws it)."""
    return _veto_step(project, concept_id, string, curator, on=True)


def restore_learnt(project: Project, concept_id: str, string: str, *, curator: str = "") -> OpChanges:
    """Allow a removed synonym again (one undoable step); the decisions behind it teach it again."""
    return _veto_step(project, concept_id, string, curator, on=False)


def _veto_step(project: Project, concept_id: str, string: str, curator: str, *, on: bool) -> OpChanges:
    primary = project.kb.resolve_concept_id(concept_id)
    if primary is None:
        raise CuralinkError(f"no concept {concept_id!r} in the project's knowledge base")
    key = veto_key(primary, string)
    if not key[1]:
        raise CuralinkError(f"{string!r} is not a synonym (nothing left once normalised)")
    if (key in vetoed(project)) == on:
        state = "already removed" if on else "not removed"
        raise CuralinkError(f"the learnt synonym {string!r} of {primary} is {state}")
    mentions = _teaching(project, primary, key[1])
    if on and not mentions:  # nothing learnt it: "removed" with an undo step would say what did not happen
        raise CuralinkError(
            f"{string!r} is not a learnt synonym of {primary}: no curator decision teaches it, so there is "
            "nothing to remove (curalink synonyms list shows what was learnt)"
        )
    verb = "remove" if on else "restore"
    label = f"{verb} learnt synonym “{string}” → {primary}"
    documents = project.documents.mention_documents(mentions[:1]) if mentions else {}
    first = mentions[0] if mentions else None
    step = Step(
        VETO,
        label,
        documents.get(first, ""),
        first,
        {"concept": primary, "string": key[1], "mentions": mentions},
    )
    with project.transaction():
        history.ensure(project, curator)
        set_veto(project, primary, key[1], on)
        now, _ = history.push(project, curator, step)
    changes = vetoed_changes(project, mentions)
    return _finish(project, changes, label=label, focus=(step.document, first), history_now=now)


def _teaching(project: Project, concept_id: str, normalized: str) -> list[int]:
    """The mentions whose standing decision teaches (or, vetoed, would teach) this synonym."""
    concept = project.kb.concept(concept_id)
    ids = {concept_id, *(concept.alt_ids if concept is not None else ())}
    candidates = linked_to(project, ids)
    if not candidates:
        return []
    links = curated_links(project, project.kb.resolve_concept_id, candidates, vetoes=False)
    return sorted(
        {
            link.mention_id
            for link in links
            if veto_key(link.concept_id, link.query) == (concept_id, normalized)
        }
    )


def prune_store(project: Project) -> int:
    """Without a loaded linker (the CLI): take the synonyms no standing, teaching decision supports out
    of the store now (the name index is rebuilt without them at the next load). Returns names removed."""
    return prune_synonyms(project)
