"""`curalink -p DIR import-linked OUT_DIR`: linked shards become a pre-linked queue in a project with the
same KB (documents added, every mention suggested with the batch's candidates and versions); another KB
is refused; a curator's decided mention keeps its suggestions."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from sqlalchemy import select

from app.cli import EXIT_ERROR, main
from app.resources import demo_dir
from bench.synthetic.shards import write_shards
from core.batch import run_batch
from core.batch.linked import candidates_of
from core.batch.manifest import Manifest
from core.formats import read_corpus
from core.store import Project
from core.store.project import NewDecision
from core.store.schema import SuggestionRow

DEMO = demo_dir()
DEMO_DOCUMENTS = list(read_corpus(DEMO / "abstracts.pubtator", "pubtator"))


@pytest.fixture
def linked(demo_template: Path, tmp_path: Path) -> Path:
    source = tmp_path / "source"
    shutil.copytree(demo_template, source, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
    write_shards(DEMO_DOCUMENTS, tmp_path / "in", total=12, per_shard=6, formats=["pubtator", "bioc-xml"])
    command = ["-p", str(source), "link-batch", str(tmp_path / "in"), "--out", str(tmp_path / "out")]
    assert main([*command, "--out-format", "bioc-xml"]) == 0
    return tmp_path / "out"


def _fresh_project(path: Path, kb: Path) -> Path:
    assert main(["init", str(path)]) == 0
    assert main(["-p", str(path), "kb", "import", str(kb), "--format", "tsv"]) == 0
    return path


def test_import_linked_makes_a_pre_linked_queue(linked: Path, tmp_path: Path) -> None:
    target = _fresh_project(tmp_path / "desk", DEMO / "kb.tsv")
    assert main(["-p", str(target), "import-linked", str(linked)]) == 0

    expected = {}  # (doc, start, end) -> candidate ids, read from the shards themselves
    for path in sorted(p for p in linked.glob("*.linked.*") if not p.name.startswith(".")):
        for document in read_corpus(path):
            for mention in document.mentions:
                expected[(document.doc_id, mention.start, mention.end)] = [
                    c.concept_id for c in candidates_of(mention)
                ]
    version = next(iter(Manifest.load(linked).done().values()))["retriever_version"]
    with Project.open(target) as project:
        queue = project.desk.queue()
        assert len(queue) == 12 and all(e.mentions and not e.unsuggested for e in queue)
        stored = {}
        for document, mention_ids in project.documents.documents_with_mention_ids():
            suggestions = project.curation.suggestions_for(mention_ids)
            for mention, mention_id in zip(document.mentions, mention_ids, strict=True):
                stored[(document.doc_id, mention.start, mention.end)] = [
                    c.concept_id for c in suggestions[mention_id]
                ]
        with project.session() as session:
            versions = set(session.scalars(select(SuggestionRow.retriever_version)))
    assert stored == expected
    assert versions == {version}


def test_import_linked_keeps_decided_mentions_and_refuses_another_kb(linked: Path, tmp_path: Path) -> None:
    target = _fresh_project(tmp_path / "desk", DEMO / "kb.tsv")
    assert main(["-p", str(target), "import-linked", str(linked)]) == 0
    with Project.open(target) as project:
        document, mention_ids = next(project.documents.documents_with_mention_ids())
        decided, undecided = mention_ids[0], mention_ids[1]
        before = project.curation.suggestions_for([decided])[decided]
        project.curation.record_decisions([NewDecision(decided, "accept", before[0].concept_id, curator="ann")])
    shorter = tmp_path / "shorter"
    run_batch([tmp_path / "in"], shorter, tmp_path / "source", candidates=3)
    assert main(["-p", str(target), "import-linked", str(shorter)]) == 0
    with Project.open(target) as project:
        assert project.curation.suggestions_for([decided])[decided] == before, "a decided mention keeps its list"
        assert len(project.curation.suggestions_for([undecided])[undecided]) == 3

    other_kb = tmp_path / "kb.tsv"
    other_kb.write_text((DEMO / "kb.tsv").read_text() + "D999999\tCuralink Test Disease\t\n")
    other = _fresh_project(tmp_path / "other", other_kb)
    assert main(["-p", str(other), "import-linked", str(linked)]) == EXIT_ERROR
    with Project.open(other) as project:
        assert project.desk.queue() == [], "nothing imported from a folder linked against another KB"
