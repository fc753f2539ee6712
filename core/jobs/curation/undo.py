"""The curator's undo history, kept in the project so Ctrl+Z after a restart undoes what the curator last
did, whatever it was: a decision, a bulk accept, a copy to identical mentions, a span, type or mention edit,
a note, a flag or a done mark. One history per curator, beside the logs it steps through.

Stored as project settings, written in the operation's own transaction (`Project.transaction`): an index
row `undo.<curator>` (the first step's number, how many steps are done, every step's label) and one row
per step `undo.<curator>.<n>` (what it changed, enough to take it back and to do it again). A new step
drops the steps undone after the last done one (as every undo stack does); at most HISTORY_LIMIT are kept.

A project written before this history existed starts from the curator's decisions still in force
(core.store.undo_history), as the desk did before.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlalchemy import delete
from sqlalchemy.orm import Session

from core.store.curation import action_words, shown_link
from core.store.op_changes import History
from core.store.schema import SettingRow
from core.store.settings_store import write_setting
from core.store.undo_history import recent_decisions

if TYPE_CHECKING:
    from core.store.project import Project

HISTORY_LIMIT = 200

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


@dataclass
class Step:
    """One undoable step: its kind, its label ("accept “HD” → D006816 in 123"), the document and mention
    it changes (an undo goes there), and the kind's data."""

    kind: str
    label: str
    document: str
    mention: int | None = None
    data: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "label": self.label,
            "document": self.document,
            "mention": self.mention,
            "data": self.data,
        }

    @classmethod
    def of(cls, value: dict) -> Step:
        return cls(value["kind"], value["label"], value["document"], value.get("mention"), value["data"])


@dataclass
class _Index:
    first: int = 0
    done: int = 0
    labels: list[str] = field(default_factory=list)


def _index_key(curator: str) -> str:
    return f"undo.{curator}"


def _step_key(curator: str, number: int) -> str:
    return f"undo.{curator}.{number}"


def _read_json(session: Session, key: str):
    row = session.get(SettingRow, key)
    if row is not None:  # held for the transaction: the next look (and the write) needs no statement
        session.info.setdefault("undo_rows", []).append(row)
    return None if row is None else json.loads(row.value_json)


def _load(project: Project, session: Session, curator: str, *, persist: bool = True) -> _Index:
    """The index; a curator without one gets it from the log (stored with `persist`: a plain look, as
    when the desk opens, writes nothing, so it works while another program holds the write lock)."""
    value = _read_json(session, _index_key(curator))
    if value is None:
        return _seed(project, session, curator, persist=persist)
    return _Index(int(value["first"]), int(value["done"]), list(value["labels"]))


def _save(session: Session, curator: str, index: _Index) -> None:
    write_setting(
        session, _index_key(curator), {"first": index.first, "done": index.done, "labels": index.labels}
    )


def _seed(project: Project, session: Session, curator: str, *, persist: bool) -> _Index:
    """The history of a curator who has none stored yet: their decisions still in force, a batch as one
    step (what the desk restored from the log before this history was kept)."""
    index = _Index()
    steps = recent_decisions(project, curator, HISTORY_LIMIT) if curator else []
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
            write_setting(session, _step_key(curator, len(index.labels)), step.to_json())
        index.labels.append(label)
    index.done = len(index.labels)
    if persist:
        _save(session, curator, index)
    return index


def span_label(old_text: str, new_text: str, document: str) -> str:
    return f"span “{old_text}” → “{new_text}” in {document}"


def view(project: Project, curator: str) -> History:
    """The curator's history as labels and the number done."""
    with project.transaction() as session:
        index = _load(project, session, curator, persist=False)
    return History(tuple(index.labels), index.done)


def ensure(project: Project, curator: str) -> None:
    """Store the history started from the log, if the curator has none yet (before an operation writes
    its own step, which that history must not already hold)."""
    with project.transaction() as session:
        _load(project, session, curator)


def drop_undone(project: Project, curator: str, *, with_top: bool = False) -> History:
    """Forget the steps that could be redone (one of them can no longer be: its mention was deleted);
    `with_top`: the newest done step too (it can no longer be undone)."""
    with project.transaction() as session:
        index = _load(project, session, curator)
        if with_top and index.done:
            index.done -= 1
        _drop_undone(session, curator, index)
        _save(session, curator, index)
    return History(tuple(index.labels), index.done)


def push(project: Project, curator: str, step: Step, *, merge_span: bool = False) -> tuple[History, bool]:
    """Record a new step (the steps undone after the last done one are dropped). With `merge_span`, a span
    edit of the same mention as the newest done step extends that step instead (nudges are one undo).
    Returns the history after it, and whether the step was merged. Call it inside the operation's
    `Project.transaction()`."""
    with project.transaction() as session:
        return _push(project, session, curator, step, merge_span)


def _push(project: Project, session: Session, curator: str, step: Step, merge_span: bool) -> tuple[History, bool]:
    index = _load(project, session, curator)
    _drop_undone(session, curator, index)
    if merge_span and index.done and step.kind == SPAN:
        number = index.first + index.done - 1
        top = Step.of(_read_json(session, _step_key(curator, number)))
        if top.kind == SPAN and top.mention == step.mention:
            top.data["new"] = step.data["new"]
            top.data["new_text"] = step.data["new_text"]
            top.label = span_label(top.data["old_text"], top.data["new_text"], top.document)
            write_setting(session, _step_key(curator, number), top.to_json())
            index.labels[-1] = top.label
            _save(session, curator, index)
            return History(tuple(index.labels), index.done), True
    write_setting(session, _step_key(curator, index.first + index.done), step.to_json())
    index.labels.append(step.label)
    index.done += 1
    while len(index.labels) > HISTORY_LIMIT:
        session.execute(delete(SettingRow).where(SettingRow.key == _step_key(curator, index.first)))
        index.first += 1
        index.labels.pop(0)
        index.done -= 1
    _save(session, curator, index)
    return History(tuple(index.labels), index.done), False


def _drop_undone(session: Session, curator: str, index: _Index) -> None:
    for i in range(index.done, len(index.labels)):
        session.execute(delete(SettingRow).where(SettingRow.key == _step_key(curator, index.first + i)))
    del index.labels[index.done :]


def step_to_undo(project: Project, curator: str) -> Step | None:
    with project.transaction() as session:
        index = _load(project, session, curator)
        if not index.done:
            return None
        return Step.of(_read_json(session, _step_key(curator, index.first + index.done - 1)))


def step_to_redo(project: Project, curator: str) -> Step | None:
    with project.transaction() as session:
        index = _load(project, session, curator)
        if index.done >= len(index.labels):
            return None
        return Step.of(_read_json(session, _step_key(curator, index.first + index.done)))


def moved(project: Project, curator: str, step: Step, *, undone: bool) -> History:
    """The step was undone (or redone): move the boundary past it and store what it holds now (a redo
    wrote new decisions: the next undo reverts those)."""
    with project.transaction() as session:
        return _moved(project, session, curator, step, undone)


def _moved(project: Project, session: Session, curator: str, step: Step, undone: bool) -> History:
    index = _load(project, session, curator)
    number = index.first + index.done - 1 if undone else index.first + index.done
    write_setting(session, _step_key(curator, number), step.to_json())
    index.done += -1 if undone else 1
    _save(session, curator, index)
    return History(tuple(index.labels), index.done)
