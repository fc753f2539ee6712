"""Curation operations in core (core.jobs.curation.operations), without Qt: decide, bulk accept, apply to identical,
span edits, notes and done marks, and undo / redo over one history that survives reopening the project.

The project is the bundled demo's KB and abstracts (no models needed); outcomes are read back from the
store's own tables (current decisions, marks, mention spans), not from what the operations return."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import EXIT_ERROR
from app.cli import main as cli
from app.demo import demo_dir
from core.errors import CuralinkError
from core.formats import read_corpus
from core.jobs.curation import operations as curation
from core.kb import load_kb
from core.store import Project
from core.store.curation_marks import DONE, NOTE


@pytest.fixture
def project_path(tmp_path: Path) -> Path:
    source = demo_dir()
    path = tmp_path / "p"
    with Project.create(path) as project:
        project.kb.import_concepts(load_kb(source / "kb.tsv", "tsv"), source="kb.tsv", fmt="tsv")
        project.documents.import_documents(read_corpus(source / "abstracts.pubtator", "pubtator"), fmt="pubtator")
    return path


def _mentions(project) -> list[tuple[str, int, str]]:
    """(document, mention id, text) of every mention, in queue order."""
    return [
        (document.doc_id, mention_id, mention.text)
        for document, ids in project.documents.documents_with_mention_ids()
        for mention, mention_id in zip(document.mentions, ids, strict=True)
    ]


def _concept(project) -> str:
    return next(iter(project.kb.knowledge_base().concepts))


def test_decide_undo_redo(project_path: Path) -> None:
    with Project.open(project_path) as project:
        doc, mention_id, text = _mentions(project)[0]
        concept = _concept(project)
        done = curation.decide(project, mention_id, "correct", concept_id=concept, curator="ann")
        assert project.curation.current_decisions()[mention_id].concept_id == concept
        assert done.label.startswith(f"correct “{text}” → {concept}") and done.label.endswith(f"in {doc}")
        assert done.decisions[mention_id].concept_id == concept and done.focus == (doc, mention_id)
        assert done.history.undo_text == done.label and done.history.redo_text == ""
        assert [entry.doc_id for entry in done.queue] == [doc]

        undone = curation.undo(project, "ann")
        assert mention_id not in project.curation.current_decisions()
        assert undone.label == f"undo {done.label}" and undone.decisions == {mention_id: None}
        assert undone.focus == (doc, mention_id) and undone.history.redo_text == done.label
        assert curation.undo(project, "ann").label == ""  # nothing more to undo

        redone = curation.redo(project, "ann")
        assert project.curation.current_decisions()[mention_id].concept_id == concept
        assert redone.label == f"redo {done.label}"
        curation.undo(project, "ann")  # the redone decision is the one undone now
        assert mention_id not in project.curation.current_decisions()
        assert curation.history_of(project, "bob").labels == ()  # another curator's history is theirs


def test_history_survives_reopening_with_notes_and_done_marks_in_order(project_path: Path) -> None:
    with Project.open(project_path) as project:
        rows = _mentions(project)
        doc = rows[0][0]
        in_doc = [m for d, m, _ in rows if d == doc]
        concept = _concept(project)
        curation.decide(project, in_doc[0], "nil", curator="ann")
        accepts = [curation.BulkAccept(m, concept, score=0.9) for m in in_doc[1:4]]
        bulk = curation.bulk_accept(project, accepts, 0.5, curator="ann")
        assert bulk.label == f"bulk accept of 3 mention(s) ≥ 0.50 in {doc}"
        curation.set_mark(project, NOTE, "check the abbreviations", document=doc, curator="ann")
        curation.set_mark(project, DONE, "true", document=doc, curator="ann")

    with Project.open(project_path) as project:  # a restart
        labels = curation.history_of(project, "ann").labels
        assert labels == (
            f"not in the KB “{rows[0][2]}” in {doc}",
            bulk.label,
            f"note on {doc}",
            f"mark {doc} done",
        )
        first = curation.undo(project, "ann")  # the done mark, not the bulk accept
        assert first.label == f"undo mark {doc} done" and first.marks == {doc}
        assert DONE not in project.marks.document_marks([doc]).get(doc, {})
        assert project.marks.document_marks([doc])[doc][NOTE].value == "check the abbreviations"
        curation.undo(project, "ann")
        assert NOTE not in project.marks.document_marks([doc]).get(doc, {})
        state = project.curation.current_decisions()
        assert all(state[m].action == "accept" for m in in_doc[1:4])
        curation.undo(project, "ann")
        state = project.curation.current_decisions()
        assert not any(m in state for m in in_doc[1:4]) and state[in_doc[0]].action == "nil"

    with Project.open(project_path) as project:  # again: the redo side survives too
        assert curation.history_of(project, "ann").redo_text == bulk.label
        curation.redo(project, "ann")
        assert all(project.curation.current_decisions()[m].concept_id == concept for m in in_doc[1:4])
        curation.decide(project, in_doc[5], "reject", curator="ann")  # a new step drops the redo side
        assert curation.history_of(project, "ann").redo_text == ""


def test_identical_and_span_steps(project_path: Path) -> None:
    with Project.open(project_path) as project:
        rows = _mentions(project)
        by_text: dict[str, list[int]] = {}
        for _doc, mention_id, text in rows:
            by_text.setdefault(text.lower(), []).append(mention_id)
        source, *others = next(ids for ids in by_text.values() if len(ids) > 1)
        curation.decide(project, source, "nil", curator="ann")
        copied = curation.apply_to_identical(project, source, others, curator="ann")
        assert all(project.curation.current_decisions()[m].action == "nil" for m in others)
        assert copied.history.undo_text == copied.label
        curation.undo(project, "ann")
        state = project.curation.current_decisions()
        assert not any(m in state for m in others) and state[source].action == "nil"

        doc, mention_id, text = next(row for row in rows if len(row[2]) > 4)
        document = project.documents.document(doc)
        mention = next(m for m in document.mentions if m.text == text)
        before = curation.history_of(project, "ann").done  # the undone copy is dropped by the edit
        curation.edit_span(project, mention_id, mention.start, mention.end - 1, curator="ann", merge=True)
        nudged = curation.edit_span(
            project, mention_id, mention.start, mention.end - 2, curator="ann", merge=True
        )
        assert nudged.merged and nudged.edited == {mention_id}
        assert len(nudged.history.labels) == before + 1  # two nudges, one step
        assert nudged.history.undo_text == f"span “{text}” → “{text[:-2]}” in {doc}"
        curation.undo(project, "ann")
        spans = {(m.start, m.end) for m in project.documents.document(doc).mentions}
        assert (mention.start, mention.end) in spans


def test_a_project_from_before_the_history_starts_from_the_log(project_path: Path) -> None:
    with Project.open(project_path) as project:
        first, second = [m for _d, m, _t in _mentions(project)[:2]]
        project.curation.record_decision(first, "nil", curator="ann")  # written by the store alone: no step
        project.curation.record_decision(second, "reject", curator="ann")
        assert len(curation.history_of(project, "ann").labels) == 2
        curation.undo(project, "ann")
        assert second not in project.curation.current_decisions() and first in project.curation.current_decisions()


def test_a_redo_the_store_refuses_clears_the_redo_side(project_path: Path) -> None:
    with Project.open(project_path) as project:
        mention_id = _mentions(project)[0][1]
        curation.decide(project, mention_id, "nil", curator="ann")
        curation.undo(project, "ann")
        project.documents.set_mention_removed(mention_id, True)  # deleted meanwhile (another window)
        with pytest.raises(CuralinkError, match="cannot be redone"):
            curation.redo(project, "ann")
        assert mention_id not in project.curation.current_decisions()
        assert curation.history_of(project, "ann").redo_text == ""


def test_an_undo_the_store_refuses_takes_the_step_out(project_path: Path) -> None:
    with Project.open(project_path) as project:
        (doc, first, _), (_, second, _) = _mentions(project)[:2]
        curation.decide(project, first, "nil", curator="ann")
        curation.set_mark(project, NOTE, "look again", document=doc, mention_id=second, curator="ann")
        project.documents.set_mention_removed(second, True)  # deleted meanwhile (another window)
        with pytest.raises(CuralinkError, match="cannot be undone"):
            curation.undo(project, "ann")
        assert curation.history_of(project, "ann").undo_text.startswith("not in the KB")  # the next step is reachable
        curation.undo(project, "ann")
        assert first not in project.curation.current_decisions()


def test_undo_redo_and_history_from_the_command_line(project_path: Path, capsys) -> None:
    with Project.open(project_path) as project:
        doc, mention_id, text = _mentions(project)[0]
        curation.decide(project, mention_id, "nil", curator="ann")
    path = str(project_path)
    assert cli(["-p", path, "history", "--curator", "ann", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown == {"steps": [f"not in the KB “{text}” in {doc}"], "done": 1, "undo": shown["steps"][0], "redo": ""}
    assert cli(["-p", path, "undo", "--curator", "ann", "--json"]) == 0
    undone = json.loads(capsys.readouterr().out)
    assert (undone["label"], undone["document"], undone["mention"]) == (
        f"undo not in the KB “{text}” in {doc}",
        doc,
        mention_id,
    )
    with Project.open(project_path) as project:
        assert mention_id not in project.curation.current_decisions()
    assert cli(["-p", path, "redo", "--curator", "ann"]) == 0
    assert capsys.readouterr().out.strip() == f"redone: not in the KB “{text}” in {doc}"
    with Project.open(project_path) as project:
        assert project.curation.current_decisions()[mention_id].action == "nil"
    assert cli(["-p", path, "redo", "--curator", "ann"]) == 0  # nothing left: says so, no error
    assert "nothing to redo" in capsys.readouterr().out
    assert cli(["-p", str(project_path / "missing"), "undo"]) == EXIT_ERROR
