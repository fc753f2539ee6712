"""The curator's undo history, kept in the project so Ctrl+Z after a restart undoes what the curator last
did, whatever it was: a decision, a bulk accept, a copy to identical mentions, a span, type or mention edit,
a note, a flag or a done mark. One history per curator, beside the logs it steps through.

Stored by `project.undo` (core.store.undo_history: where the history stands and one row per step, what it
changed, enough to take it back and to do it again), written in the operation's own transaction
(`Project.transaction`). A new step drops the steps undone after the last done one (as every undo stack
does); at most HISTORY_LIMIT are kept.

A project written before this history existed starts from the curator's decisions still in force
(`project.undo.recent_decisions`), as the desk did before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.errors import CuralinkError
from core.store.curation import action_words, shown_link
from core.store.op_changes import History
from core.store.undo_history import HISTORY_LIMIT, Step, UndoIndex

if TYPE_CHECKING:
    from core.store.project import Project

# Step kinds: what `data` holds, and what undo and redo write (core.jobs.curation.operations carries them out).
DECISIONS = "decisions"  # {"decisions": ids written, "skip_decided": bool}: reverts / the same again
MARK = "mark"  # {"kind", "document", "mention", "old", "new"}: the old value / the new one
SPAN = "span"  # {"mention", "old": [s, e], "new": [s, e]}
TYPE = "type"  # {"mention", "old", "new"}
ADD = "add"  # {"mention"}: removed / restored
DELETE = "delete"  # {"mention"}: restored / removed
VETO = "veto"  # {"concept", "string", "mentions"}: a learnt synonym allowed again / removed again
OCCURRENCES = "occurrences"  # {"mentions", "decisions"}: mentions added at every occurrence of a string
# (and the decisions linking them): reverted and removed / restored and written again
STEP_KINDS = (DECISIONS, MARK, SPAN, TYPE, ADD, DELETE, VETO, OCCURRENCES)

__all__ = ["HISTORY_LIMIT", "STEP_KINDS", "Step", "span_label"]


def _load(project: Project, curator: str, *, persist: bool = True) -> UndoIndex:
    """The index; a curator without one gets it from the log (stored with `persist`: a plain look, as
    when the desk opens, writes nothing, so it works while another program holds the write lock)."""
    index = project.undo.index(curator)
    if index is None:
        return _seed(project, curator, persist=persist)
    return index


def _seed(project: Project, curator: str, *, persist: bool) -> UndoIndex:
    """The history of a curator who has none stored yet: their decisions still in force, a batch as one
    step (what the desk restored from the log before this history was kept)."""
    index = UndoIndex()
    steps = project.undo.recent_decisions(curator, HISTORY_LIMIT) if curator else []
    for restored in steps:
        mention_ids = [m for m, *_ in restored.decisions]
        documents = project.documents.mention_documents(mention_ids)
        first = restored.decisions[0]
        mention_id, action, concept_id, _detail, text = first
        where = documents.get(mention_id, "")
        if len(restored.decisions) == 1:
            link = f" → {concept_id}" if shown_link(action, concept_id) else ""
            label = f"{action_words(action)} “{text}”{link} in {where}"
        else:
            count = len(set(documents.values()))
            label = f"{action_words(action)} {len(restored.decisions)} mentions (“{text}”, …) in {count} document(s)"
        data = {"decisions": sorted(restored.decision_ids), "skip_decided": True}
        step = Step(DECISIONS, label, where, mention_id, data)
        if persist:
            project.undo.write_step(curator, len(index.labels), step)
        index.labels.append(label)
    index.done = len(index.labels)
    if persist:
        project.undo.save_index(curator, index)
    return index


def span_label(old_text: str, new_text: str, document: str) -> str:
    return f"span “{old_text}” → “{new_text}” in {document}"


def view(project: Project, curator: str) -> History:
    """The curator's history as labels and the number done."""
    with project.transaction():
        index = _load(project, curator, persist=False)
    return History(tuple(index.labels), index.done)


def ensure(project: Project, curator: str) -> None:
    """Store the history started from the log, if the curator has none yet (before an operation writes
    its own step, which that history must not already hold)."""
    with project.transaction():
        _load(project, curator)


def drop_undone(project: Project, curator: str, *, with_top: bool = False) -> History:
    """Forget the steps that could be redone (one of them can no longer be: its mention was deleted);
    `with_top`: the newest done step too (it can no longer be undone)."""
    with project.transaction():
        index = _load(project, curator)
        if with_top and index.done:
            index.done -= 1
        _drop_undone(project, curator, index)
        project.undo.save_index(curator, index)
    return History(tuple(index.labels), index.done)


def push(project: Project, curator: str, step: Step, *, merge_span: bool = False) -> tuple[History, bool]:
    """Record a new step (the steps undone after the last done one are dropped). With `merge_span`, a span
    edit of the same mention as the newest done step extends that step instead (nudges are one undo).
    Returns the history after it, and whether the step was merged. Call it inside the operation's
    `Project.transaction()`."""
    with project.transaction():
        return _push(project, curator, step, merge_span)


def _push(project: Project, curator: str, step: Step, merge_span: bool) -> tuple[History, bool]:
    index = _load(project, curator)
    _drop_undone(project, curator, index)
    if merge_span and index.done and step.kind == SPAN:
        number = index.first + index.done - 1
        top = project.undo.step(curator, number)
        if top is not None and top.kind == SPAN and top.mention == step.mention:
            top.data["new"] = step.data["new"]
            top.data["new_text"] = step.data["new_text"]
            top.label = span_label(top.data["old_text"], top.data["new_text"], top.document)
            project.undo.write_step(curator, number, top)
            index.labels[-1] = top.label
            project.undo.save_index(curator, index)
            return History(tuple(index.labels), index.done), True
    project.undo.write_step(curator, index.first + index.done, step)
    index.labels.append(step.label)
    index.done += 1
    dropped = []
    while len(index.labels) > HISTORY_LIMIT:
        dropped.append(index.first)
        index.first += 1
        index.labels.pop(0)
        index.done -= 1
    project.undo.drop_steps(curator, dropped)
    project.undo.save_index(curator, index)
    return History(tuple(index.labels), index.done), False


def _drop_undone(project: Project, curator: str, index: UndoIndex) -> None:
    project.undo.drop_steps(curator, [index.first + i for i in range(index.done, len(index.labels))])
    del index.labels[index.done :]


def step_to_undo(project: Project, curator: str) -> Step | None:
    with project.transaction():
        index = _load(project, curator)
        if not index.done:
            return None
        return _stored_step(project, curator, index.first + index.done - 1)


def step_to_redo(project: Project, curator: str) -> Step | None:
    with project.transaction():
        index = _load(project, curator)
        if index.done >= len(index.labels):
            return None
        return _stored_step(project, curator, index.first + index.done)


def _stored_step(project: Project, curator: str, number: int) -> Step:
    step = project.undo.step(curator, number)
    if step is None:  # the index names it, so the rows were changed outside Curalink
        raise CuralinkError(f"step {number} of the undo history of {curator!r} is missing from the project")
    return step


def moved(project: Project, curator: str, step: Step, *, undone: bool) -> History:
    """The step was undone (or redone): move the boundary past it and store what it holds now (a redo
    wrote new decisions: the next undo reverts those)."""
    with project.transaction():
        index = _load(project, curator)
        number = index.first + index.done - 1 if undone else index.first + index.done
        project.undo.write_step(curator, number, step)
        index.done += -1 if undone else 1
        project.undo.save_index(curator, index)
    return History(tuple(index.labels), index.done)
