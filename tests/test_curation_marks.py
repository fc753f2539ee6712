"""Notes, flags and "document done" (issue 12 item 4.4): stored append-only with curator and time, exported
as BioC and JSONL infons, turned back into marks by a JSONL import, and added by migration 0004 to a
project made at 0003."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine

from core.errors import CuralinkError
from core.formats import read_corpus, write_corpus
from core.store import Project
from core.store.curation import curated_documents
from core.store.project import _alembic_config

CORPUS = (
    "11|t|Cystic fibrosis in adults\n"
    "11|a|Cystic fibrosis (CF) and asthma were compared.\n"
    "11\t0\t15\tCystic fibrosis\tDisease\tD003550\n"
    "11\t51\t57\tasthma\tDisease\tD001249\n"
    "\n"
    "12|t|Asthma\n"
    "12|a|Asthma again.\n"
    "12\t0\t6\tAsthma\tDisease\tD001249\n"
)


def _project(tmp_path: Path, name: str = "p") -> Project:
    path = tmp_path / "corpus.txt"
    path.write_text(CORPUS, encoding="utf-8")
    project = Project.create(tmp_path / name)
    project.documents.import_documents(read_corpus(path, "pubtator"))
    return project


def _ids(project: Project) -> dict[str, int]:
    return {
        f"{doc.doc_id}:{m.text}": i
        for doc, ids in project.documents.documents_with_mention_ids()
        for m, i in zip(doc.mentions, ids, strict=True)
    }


def test_marks_keep_their_history_and_the_newest_is_in_force(tmp_path: Path) -> None:
    project = _project(tmp_path)
    ids = _ids(project)
    asthma = ids["11:asthma"]
    project.marks.set_mark("note", "check the abbreviation", mention_id=asthma, curator="ann")
    project.marks.set_mark("note", "CF is fine; asthma is a comorbidity", mention_id=asthma, curator="bob")
    project.marks.set_mark("flag", "true", mention_id=asthma, curator="ann")
    project.marks.set_mark("flag", "true", document="12", curator="bob")
    project.marks.set_mark("flag", "", document="12", curator="bob")  # cleared
    project.marks.set_mark("done", "true", document="11", curator="ann")

    marks = project.marks.mention_marks([asthma])[asthma]
    assert marks["note"].value == "CF is fine; asthma is a comorbidity" and marks["note"].curator == "bob"
    assert marks["flag"].value == "true" and marks["flag"].created_at is not None
    assert project.marks.document_marks() == {"11": {"done": project.marks.document_marks()["11"]["done"]}}
    assert [m.value for m in project.marks.mark_history(mention_id=asthma)] == [
        "check the abbreviation",
        "CF is fine; asthma is a comorbidity",
        "true",
    ]
    assert [m.value for m in project.marks.mark_history(document="12")] == ["true", ""]

    with pytest.raises(CuralinkError, match="only a document"):
        project.marks.set_mark("done", "true", mention_id=asthma)
    with pytest.raises(CuralinkError, match="no document"):
        project.marks.set_mark("note", "x", document="nope")
    with pytest.raises(CuralinkError, match="unknown mark"):
        project.marks.set_mark("star", "true", document="11")
    project.documents.set_mention_removed(ids["12:Asthma"], True)
    with pytest.raises(CuralinkError, match="deleted"):
        project.marks.set_mark("note", "x", mention_id=ids["12:Asthma"])


def test_marks_are_exported_as_infons_and_come_back_from_jsonl(tmp_path: Path) -> None:
    project = _project(tmp_path)
    ids = _ids(project)
    asthma = ids["11:asthma"]
    project.marks.set_mark("note", "comorbidity, not the topic", mention_id=asthma, curator="ann")
    project.marks.set_mark("flag", "true", mention_id=ids["11:Cystic fibrosis"], curator="ann")
    project.marks.set_mark("done", "true", document="11", curator="ann")
    project.marks.set_mark("note", "title only", document="12", curator="bob")
    project.curation.record_decision(asthma, "nil", curator="ann")

    out = tmp_path / "out.jsonl"
    write_corpus(curated_documents(project), out, "jsonl")
    lines = {json.loads(line)["doc_id"]: json.loads(line) for line in out.read_text().splitlines()}
    by_text = {m["text"]: m["infons"] for m in lines["11"]["mentions"]}
    assert by_text["asthma"]["curator_note"] == "comorbidity, not the topic"
    assert by_text["asthma"]["curator_note_by"] == "ann" and by_text["asthma"]["decision"] == "nil"
    assert by_text["Cystic fibrosis"]["flagged"] == "true"
    assert lines["11"]["metadata"]["curation_done"] == "true"
    assert lines["12"]["metadata"]["curator_note"] == "title only"

    bioc = tmp_path / "out.xml"
    write_corpus(curated_documents(project), bioc, "bioc-xml")
    text = bioc.read_text()
    assert '<infon key="curator_note">comorbidity, not the topic</infon>' in text
    assert '<infon key="curation_done">true</infon>' in text

    again = Project.create(tmp_path / "again")
    again.documents.import_documents(read_corpus(out, "jsonl"))
    moved = _ids(again)
    marks = again.marks.mention_marks()
    assert marks[moved["11:asthma"]]["note"].value == "comorbidity, not the topic"
    assert marks[moved["11:asthma"]]["note"].curator == "ann"
    assert marks[moved["11:asthma"]]["note"].created_at == project.marks.mention_marks()[asthma]["note"].created_at
    assert set(marks[moved["11:Cystic fibrosis"]]) == {"flag"}
    assert set(again.marks.document_marks()["11"]) == {"done"}
    assert again.marks.document_marks()["12"]["note"].value == "title only"
    stored = again.documents.document("11")
    assert "curator_note" not in next(m for m in stored.mentions if m.text == "asthma").infons
    # A file saying "false" (or anything but true) sets no flag.
    line = json.loads(out.read_text().splitlines()[0])
    for mention in line["mentions"]:
        mention["infons"] = {"flagged": "false"}
    line["doc_id"], line["metadata"] = "13", {}
    (tmp_path / "false.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    again.documents.import_documents(read_corpus(tmp_path / "false.jsonl", "jsonl"))
    flagged = [m for m, marks in again.marks.mention_marks().items() if "flag" in marks]
    assert flagged == [moved["11:Cystic fibrosis"]]
    # Cleared in the new project, the note stays cleared in its export (the infon was turned into a mark).
    again.marks.set_mark("note", "", mention_id=moved["11:asthma"], curator="bob")
    write_corpus(curated_documents(again), tmp_path / "again.jsonl", "jsonl")
    assert "comorbidity" not in (tmp_path / "again.jsonl").read_text()


def test_migration_0004_adds_marks_to_a_project_made_at_0003(tmp_path: Path) -> None:
    project = _project(tmp_path)
    asthma = _ids(project)["11:asthma"]
    project.curation.record_decision(asthma, "nil", curator="ann")
    project.close()
    db = tmp_path / "p" / "curalink.db"
    engine = create_engine(f"sqlite:///{db}")
    config = _alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0003")  # the project exactly as a 0003 Curalink left it
    engine.dispose()
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT version_num FROM alembic_version").fetchone()[0] == "0003"
        tables = {r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "curation_marks" not in tables

    reopened = Project.open(tmp_path / "p")
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT version_num FROM alembic_version").fetchone()[0] >= "0004"  # head
    assert reopened.curation.current_decisions()[asthma].action == "nil"
    reopened.marks.set_mark("note", "after the upgrade", mention_id=asthma, curator="ann")
    assert reopened.marks.mention_marks()[asthma]["note"].value == "after the upgrade"
