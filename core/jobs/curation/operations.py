"""Curation operations: decide, bulk accept, apply to identical mentions, mention edits, notes and marks,
and undo / redo over one history of them all (core.jobs.curation.undo). The desk, the CLI and tests call these.

Each writes the change and its undo step in one transaction and returns an `OpChanges` that says what
changed and holds what a desk needs to redraw it (decisions in force, queue rows, the history), read once
after the write; the desk reads nothing else after a decision. Undo and redo say what they did (`label`)
and where (`focus`), so a front end can take the curator there.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from core.errors import CuralinkError
from core.jobs.curation import undo as history
from core.jobs.curation.undo import (
    ADD,
    DECISIONS,
    DELETE,
    MARK,
    OCCURRENCES,
    SPAN,
    TYPE,
    VETO,
    Step,
    span_label,
)
from core.learn.teaching import set_veto
from core.store import step_reads
from core.store.curation import action_words, shown_link
from core.store.curation_log import Decision, MentionKey, NewDecision, concept_parts
from core.store.curation_marks import DONE, FLAG, NOTE
from core.store.op_changes import History, OpChanges
from core.store.step_reads import mention_facts

if TYPE_CHECKING:
    from core.store.project import Project


@dataclass(frozen=True)
class BulkAccept:
    """One mention of a bulk accept: its top suggestion, the model version and score behind it, and the
    span and type the suggestions were computed for."""

    mention_id: int
    concept_id: str
    model_version: str | None = None  # None: the version behind its stored suggestions
    score: float = 0.0
    suggested_for: MentionKey | None = None


# --- what the desk needs after a write ----------------------------------------------------------------


def _finish(
    project: Project, changes: OpChanges, *, label: str, focus, history_now: History, merged=False
) -> OpChanges:
    """The change with what a desk redraws from: decisions in force, queue rows and facets."""
    documents = set(changes.documents)
    if focus is not None and focus[0]:
        documents.add(focus[0])
    wanted = sorted(changes.mentions)
    in_force = project.curation.current_decisions(mention_ids=wanted) if wanted else {}
    ordered = sorted(documents)
    return replace(
        changes,
        documents=frozenset(documents),
        decisions={m: in_force.get(m) for m in wanted},
        queue=tuple(project.desk.queue(doc_ids=ordered)) if ordered else (),
        facets=project.desk.document_facets(ordered) if ordered else {},
        label=label,
        focus=focus,
        history=history_now,
        merged=merged,
    )


def _mention(project: Project, mention_id: int) -> tuple[str, str, str, int, int, str]:
    """(document id, text, origin, start, end, type) of a mention (deleted ones too)."""
    facts = mention_facts(project, mention_id)
    return facts.document, facts.text, facts.origin, facts.start, facts.end, facts.type


def decision_label(
    mention: tuple[str, str, str], action: str, concept_id: str, names: Mapping[str, str], *, taught: bool = True
) -> str:
    """“accept “HD” → D006816 Huntington Disease in 123”: what a decision is called in the history, the
    save bar and the status bar, built here only (the desk passes the concept `names` it has read, the
    operation those it reads). `mention`: its document, text and origin; a reject of a detected span
    says it is not a mention; `taught` False says the linker learns nothing from it (Alt+Enter)."""
    document, text, origin = mention
    if action == "reject" and origin == "detected":
        return f"reject “{text}” (not a mention) in {document}"
    link = ""
    if shown_link(action, concept_id):
        link = " → " + " + ".join(f"{p} {names[p]}" if names.get(p) else p for p in concept_parts(concept_id))
    return f"{action_words(action)} “{text}”{link} in {document}" + ("" if taught else " (not taught)")


def concept_names(project: Project, concept_id: str) -> dict[str, str]:
    """The preferred name of each concept a link names (those the KB has)."""
    found = project.kb.concepts(concept_parts(concept_id))
    return {part: concept.preferred_name for part, concept in found.items() if concept}


# --- decisions ------------------------------------------------------------------------------------------


def _record(project: Project, curator: str, write, *, label: str, focus, skip_decided: bool) -> OpChanges:
    """Run `write` (decisions, returning their OpChanges) and record it as one step, in one transaction."""
    with project.transaction():
        history.ensure(project, curator)  # first: a history started from the log must not hold this
        changes = write()
        if changes.decision_ids:
            step = Step(
                DECISIONS,
                label,
                focus[0],
                focus[1],
                {"decisions": list(changes.decision_ids), "skip_decided": skip_decided},
            )
            now, _ = history.push(project, curator, step)
        else:
            now = history.view(project, curator)
        return _finish(project, changes, label=label, focus=focus, history_now=now)  # read in the same transaction


def repeats(standing: Decision | None, action: str, concept_id: str, curator: str, detail: dict | None) -> bool:
    """Whether a decision is `standing` (the one in force on its mention) again: the same curator, action
    and link, taught or not alike (Alt+Enter)."""
    if standing is None or (standing.action, standing.concept_id or "", standing.curator) != (
        action,
        concept_id or "",
        curator,
    ):
        return False
    return json.loads(standing.detail_json or "{}").get("teach", True) == (detail or {}).get("teach", True)


def decide(
    project: Project,
    mention_id: int,
    action: str,
    *,
    concept_id: str = "",
    curator: str = "",
    model_version: str | None = None,
    detail: dict | None = None,
    suggested_for: MentionKey | None = None,
) -> OpChanges:
    """One decision (a link may name several concepts, `A|B|C`, as one step). Without `model_version`,
    the version behind the mention's stored suggestions is recorded. The decision the same curator
    already has in force on the mention is not stored again: a repeated key press is no new evidence (a
    second row would count twice in training and agreement, and need two Ctrl+Z to take back).

    Everything, the reads that name it and the reads a desk redraws from, runs in one transaction: one
    round trip to the store for the key that made it (tests/gui/test_enter_cost.py)."""
    with project.transaction():
        document, text, origin, *_ = _mention(project, mention_id)
        taught = (detail or {}).get("teach", True) is not False
        names = concept_names(project, concept_id) if shown_link(action, concept_id) else {}
        label = decision_label((document, text, origin), action, concept_id, names, taught=taught)
        standing = project.curation.current_decisions(mention_ids=[mention_id]).get(mention_id)
        if repeats(standing, action, concept_id, curator, detail):
            changes = OpChanges(mentions=frozenset({mention_id}), documents=frozenset({document}))
            return _finish(
                project, changes, label=label, focus=(document, mention_id), history_now=history.view(project, curator)
            )
        if model_version is None:
            model_version = project.curation.suggestion_version(mention_id)
        decision = NewDecision(mention_id, action, concept_id, curator, model_version, detail or {}, suggested_for)
        return _record(
            project,
            curator,
            lambda: project.curation.decide([decision]),
            label=label,
            focus=(document, mention_id),
            skip_decided=False,
        )


def bulk_accept(project: Project, accepts: Sequence[BulkAccept], threshold: float, *, curator: str = "") -> OpChanges:
    """Accept many top suggestions as one step, in one transaction (all or nothing)."""
    if not accepts:
        return OpChanges(history=history.view(project, curator))
    batch = uuid.uuid4().hex[:12]  # the decisions' shared id: one step in the log too
    unknown = [a.mention_id for a in accepts if a.model_version is None]
    versions = step_reads.suggestion_versions(project, unknown) if unknown else {}
    decisions = [
        NewDecision(
            a.mention_id,
            "accept",
            concept_id=a.concept_id,
            curator=curator,
            model_version=versions.get(a.mention_id, "") if a.model_version is None else a.model_version,
            detail={"bulk_threshold": threshold, "score": round(a.score, 4), "batch": batch},
            suggested_for=a.suggested_for,
        )
        for a in accepts
    ]
    documents = set(project.documents.mention_documents([a.mention_id for a in accepts]).values())
    first = accepts[0].mention_id
    where = next(iter(documents)) if len(documents) == 1 else f"{len(documents)} documents"
    label = f"bulk accept of {len(accepts)} mention(s) ≥ {threshold:.2f} in {where}"
    focus = (project.documents.mention_documents([first])[first], first)
    return _record(
        project, curator, lambda: project.curation.decide(decisions), label=label, focus=focus, skip_decided=False
    )


def apply_to_identical(project: Project, source: int, targets: Sequence[int], *, curator: str = "") -> OpChanges:
    """Copy the decision in force on `source` to each target still undecided, as one step
    (core.store.identical_mentions writes it)."""
    decision = project.curation.current_decisions(mention_ids=[source]).get(source)
    if decision is None:
        raise CuralinkError(f"mention {source} has no decision to apply to identical mentions")
    documents = set(project.documents.mention_documents(list(targets)).values())
    document, text, *_ = _mention(project, source)
    label = (
        f"{action_words(decision.action)} “{text}” copied to {len([t for t in targets if t != source])} identical "
        f"mention(s) in {len(documents)} document(s)"
    )
    return _record(
        project,
        curator,
        lambda: project.identical.apply(source, targets, curator=curator),
        label=label,
        focus=(document, source),
        skip_decided=True,
    )


# --- mention edits, notes and marks ---------------------------------------------------------------------


def _edit(project: Project, curator: str, step: Step, write, *, merge_span: bool = False) -> OpChanges:
    with project.transaction():
        history.ensure(project, curator)
        write()
        now, merged = history.push(project, curator, step, merge_span=merge_span)
    return _edited(project, step, history_now=now, merged=merged)


def _edited(project: Project, step: Step, *, history_now: History, merged: bool = False, label: str = "") -> OpChanges:
    focus = (step.document, step.mention)
    if step.kind == MARK:
        changes = OpChanges(documents=frozenset({step.document}), marks=frozenset({step.document}))
    else:
        assert step.mention is not None
        changes = OpChanges(
            mentions=frozenset({step.mention}),
            documents=frozenset({step.document}),
            edited=frozenset({step.mention}),
            # a decided mention deleted (or restored) stops (or starts again) teaching its string; one whose
            # span moved teaches its new text instead of the old
            relearn=frozenset({step.mention}) if step.kind in (ADD, DELETE, SPAN) else frozenset(),
        )
    return _finish(
        project, changes, label=label or step.label, focus=focus, history_now=history_now, merged=merged
    )


def edit_span(
    project: Project, mention_id: int, start: int, end: int, *, curator: str = "", merge: bool = False
) -> OpChanges:
    """Move a mention's boundaries (its suggestions are dropped: suggest it again). With `merge`, a nudge
    right after another of the same mention joins its undo step."""
    facts = mention_facts(project, mention_id)
    document, text, old_start, old_end = facts.document, facts.text, facts.start, facts.end
    full = facts.document_text
    new_text = full[start:end] if 0 <= start < end <= len(full) else ""
    step = Step(
        SPAN,
        span_label(text, new_text, document),
        document,
        mention_id,
        {"old": [old_start, old_end], "new": [start, end], "old_text": text, "new_text": new_text},
    )
    return _edit(
        project,
        curator,
        step,
        lambda: project.documents.set_mention_span(mention_id, start, end, curator=curator),
        merge_span=merge,
    )


def change_type(project: Project, mention_id: int, new_type: str, *, curator: str = "") -> OpChanges:
    document, text, _origin, _s, _e, old = _mention(project, mention_id)
    label = f"type of “{text}” {old or '(none)'} → {new_type or '(none)'} in {document}"
    step = Step(TYPE, label, document, mention_id, {"old": old, "new": new_type})
    return _edit(
        project, curator, step, lambda: project.documents.set_mention_type(mention_id, new_type, curator=curator)
    )


def add_mention(
    project: Project, document: str, start: int, end: int, *, type: str = "", curator: str = ""
) -> OpChanges:
    """A curator-drawn mention; undo removes it, redo brings the same row back."""
    with project.transaction():
        history.ensure(project, curator)
        mention_id = project.documents.add_mention(document, start, end, type=type, curator=curator)
        text = _mention(project, mention_id)[1]
        step = Step(ADD, f"add mention “{text}” in {document}", document, mention_id, {})
        now, _ = history.push(project, curator, step)
    return _edited(project, step, history_now=now)


def delete_mention(project: Project, mention_id: int, *, curator: str = "") -> OpChanges:
    document, text, *_ = _mention(project, mention_id)
    step = Step(DELETE, f"delete mention “{text}” in {document}", document, mention_id, {})
    return _edit(
        project, curator, step, lambda: project.documents.set_mention_removed(mention_id, True, curator=curator)
    )


def _mark_label(project: Project, kind: str, value: str, document: str, mention_id: int | None) -> str:
    where = document if mention_id is None else f"“{_mention(project, mention_id)[1]}” in {document}"
    if not value:
        return f"clear {kind} on {where}"
    return {NOTE: f"note on {where}", FLAG: f"flag {where}", DONE: f"mark {document} done"}[kind]


def set_mark(
    project: Project, kind: str, value: str, *, document: str, mention_id: int | None = None, curator: str = ""
) -> OpChanges:
    """A note, flag or done mark set (or, with "", cleared) as an undoable step."""
    if mention_id is not None:
        found = project.marks.mention_marks([mention_id]).get(mention_id, {})
    else:
        found = project.marks.document_marks([document]).get(document, {})
    old = found[kind].value if kind in found else ""
    step = Step(
        MARK,
        _mark_label(project, kind, value, document, mention_id),
        document,
        mention_id,
        {"kind": kind, "old": old, "new": value},
    )
    return _edit(
        project,
        curator,
        step,
        lambda: project.marks.set_mark(kind, value, document=document, mention_id=mention_id, curator=curator),
    )


# --- undo and redo --------------------------------------------------------------------------------------


def history_of(project: Project, curator: str = "") -> History:
    """The curator's history: labels oldest first, and how many can be undone."""
    return history.view(project, curator)


def undo(project: Project, curator: str = "") -> OpChanges:
    """Take back the curator's newest step still done; `label` says what was undone ("" when nothing)."""
    return _move(project, curator, undoing=True)


def redo(project: Project, curator: str = "") -> OpChanges:
    """Do again the curator's step undone last; `label` says what was redone ("" when nothing)."""
    return _move(project, curator, undoing=False)


def _move(project: Project, curator: str, *, undoing: bool) -> OpChanges:
    """One step back (or forward) in the curator's history. A step the store refuses (an undo whose
    mention was deleted since) leaves the history: nothing was written."""
    try:
        with project.transaction():
            step = history.step_to_undo(project, curator) if undoing else history.step_to_redo(project, curator)
            if step is None:
                return OpChanges(history=history.view(project, curator))
            changes = _carry_out(project, curator, step, undoing=undoing)
            now = history.moved(project, curator, step, undone=undoing)
    except CuralinkError as exc:
        if undoing:
            history.drop_undone(project, curator, with_top=True)
            raise CuralinkError(f"{exc}; it cannot be undone, so it was taken out of the history") from exc
        history.drop_undone(project, curator)  # the redo side goes
        raise CuralinkError(f"{exc}; it cannot be redone, so the redo history was cleared") from exc
    return _after(project, step, changes, now, "undo" if undoing else "redo")


def vetoed_changes(project: Project, mention_ids) -> OpChanges:
    """What a removed (or restored) learnt synonym changes: the teaching of the mentions that taught it."""
    ids = frozenset(mention_ids)
    documents = frozenset(project.documents.mention_documents(sorted(ids)).values()) if ids else frozenset()
    return OpChanges(mentions=ids, documents=documents, relearn=ids)


def _after(project: Project, step: Step, changes: OpChanges, now: History, verb: str) -> OpChanges:
    label = f"{verb} {step.label}"
    if step.kind in (DECISIONS, VETO, OCCURRENCES):
        return _finish(project, changes, label=label, focus=(step.document, step.mention), history_now=now)
    return _edited(project, step, history_now=now, label=label)


def _carry_out(project: Project, curator: str, step: Step, *, undoing: bool) -> OpChanges:
    """Write what undoes (or redoes) one step; a decision step's data is updated to the decisions it
    holds now."""
    data = step.data
    if step.kind == DECISIONS:
        return _undo_decisions(project, curator, step) if undoing else _redo_decisions(project, curator, step)
    if step.kind == MARK:
        value = data["old"] if undoing else data["new"]
        project.marks.set_mark(
            data["kind"], value, document=step.document, mention_id=step.mention, curator=curator
        )
    elif step.kind == SPAN:
        project.documents.set_mention_span(step.mention, *(data["old"] if undoing else data["new"]), curator=curator)
    elif step.kind == TYPE:
        project.documents.set_mention_type(step.mention, data["old"] if undoing else data["new"], curator=curator)
    elif step.kind in (ADD, DELETE):
        removed = undoing == (step.kind == ADD)
        project.documents.set_mention_removed(step.mention, removed, curator=curator)
    elif step.kind == VETO:  # a learnt synonym removed (core.jobs.curation.learnt): allowed again / removed again
        set_veto(project, data["concept"], data["string"], not undoing)
        return vetoed_changes(project, data["mentions"])
    elif step.kind == OCCURRENCES:
        return _occurrences(project, curator, step, undoing=undoing)
    else:
        raise CuralinkError(f"unknown undo step {step.kind!r} in the project's history")
    return OpChanges()


def _occurrences(project: Project, curator: str, step: Step, *, undoing: bool) -> OpChanges:
    """Mentions added at every occurrence of a string (core.jobs.curation.occurrences): their decisions reverted
    and the mentions removed, or the mentions restored and their decisions written again."""
    ids = step.data["mentions"]
    changes = OpChanges()
    if undoing and step.data["decisions"]:
        changes = _undo_decisions(project, curator, step)
    for mention_id in ids:
        project.documents.set_mention_removed(mention_id, undoing, curator=curator)
    if not undoing and step.data["decisions"]:
        changes = _redo_decisions(project, curator, step)
    documents = frozenset(project.documents.mention_documents(ids).values())
    return changes | OpChanges(mentions=frozenset(ids), documents=documents, edited=frozenset(ids))


def _undo_decisions(project: Project, curator: str, step: Step) -> OpChanges:
    """Revert the step's decisions still in force (one a later decision covered is left alone)."""
    standing = step_reads.in_force(project, step.data["decisions"])
    rows = [(d.mention_id, d.action) for d in standing]
    reverts = [NewDecision(m, "revert", curator=curator, detail={"undo": action}) for m, action in rows]
    return project.curation.decide(reverts)


def _redo_decisions(project: Project, curator: str, step: Step) -> OpChanges:
    """Write the step's decisions again (new rows, same content); the step now holds the new ids."""
    again = [
        NewDecision(
            d.mention_id,
            d.action,
            concept_id=d.concept_id,
            curator=curator,
            model_version=d.model_version,
            detail=json.loads(d.detail_json or "{}"),
        )
        for d in step_reads.decisions_by_id(project, step.data["decisions"])
    ]
    changes = project.curation.decide(again, skip_decided=bool(step.data.get("skip_decided")))
    step.data = {**step.data, "decisions": list(changes.decision_ids)}
    return changes
