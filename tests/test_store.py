"""The project store: lifecycle, atomic imports, duplicates, KB names, decisions and models."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from core.documents import Candidate, Mention, document_from_title_abstract
from core.errors import Cancelled, CuralinkError, InputError, ProjectError
from core.kb import Concept
from core.progress import CancelToken
from core.store import Project
from core.store.curation import curated_documents
from core.store.curation_log import mention_key


def _doc(
    doc_id: str, title: str = "Huntington disease (HD) in twins", abstract: str = "HD was seen."
) -> object:
    document = document_from_title_abstract(doc_id, title, abstract)
    return document.with_mentions([Mention(0, 18, "Huntington disease", "Disease", "D006816")])


CONCEPTS = [
    Concept("D006816", "MESH", "Huntington Disease", ("Huntington Chorea", "Huntington's Disease")),
    Concept(
        "D003924",
        "MESH",
        "Diabetes Mellitus, Type 2",
        ("NIDDM", "Type 2 Diabetes"),
        tree_numbers=("C18.452.394.750.149",),
    ),
]


@pytest.fixture
def project(tmp_path: Path) -> Project:
    with Project.create(tmp_path / "proj") as opened:
        yield opened


def test_create_makes_the_project_layout(tmp_path: Path) -> None:
    Project.create(tmp_path / "p").close()
    for sub in ("curalink.db", "models", "index", "logs"):
        assert (tmp_path / "p" / sub).exists()
    mode = sqlite3.connect(tmp_path / "p" / "curalink.db").execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_open_refuses_what_is_not_a_project(tmp_path: Path) -> None:
    with pytest.raises(ProjectError, match="no such project folder"):
        Project.open(tmp_path / "missing")
    (tmp_path / "plain").mkdir()
    with pytest.raises(ProjectError, match="not a Curalink project"):
        Project.open(tmp_path / "plain")
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "curalink.db").write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(ProjectError, match="not a readable SQLite database"):
        Project.open(tmp_path / "junk")
    with pytest.raises(ProjectError, match="already exists"):
        Project.create(tmp_path / "p2").close()
        Project.create(tmp_path / "p2")


def test_open_refuses_a_newer_schema(tmp_path: Path) -> None:
    Project.create(tmp_path / "p").close()
    connection = sqlite3.connect(tmp_path / "p" / "curalink.db")
    connection.execute("UPDATE alembic_version SET version_num = '9999_from_the_future'")
    connection.commit()
    connection.close()
    with pytest.raises(ProjectError, match="newer than this Curalink"):
        Project.open(tmp_path / "p")


def test_documents_round_trip_through_the_store(project: Project) -> None:
    summary = project.documents.import_documents([_doc("1"), _doc("2")], split="train", source="x.txt")
    assert (summary.added, summary.mentions) == (2, 2)
    stored = list(project.documents.documents(split="train"))
    assert [d.doc_id for d in stored] == ["1", "2"]
    assert stored[0].text == _doc("1").text
    assert stored[0].mentions == _doc("1").mentions
    assert stored[0].passages == _doc("1").passages


def test_duplicates_skip_update_and_error(project: Project) -> None:
    first = project.documents.import_documents([_doc("1"), _doc("1")])
    # a document the file repeats exactly is an in-file duplicate, not a document already stored
    # (issue 10, item 7: `--on-duplicate` speaks only of documents already in the project)
    assert (first.added, first.skipped, first.in_file_duplicates) == (1, 0, ["1"])
    changed = _doc("1", title="Huntington disease (HD) in triplets")
    updated = project.documents.import_documents([changed], on_duplicate="update")
    assert updated.updated == 1
    assert project.documents.document("1").title == "Huntington disease (HD) in triplets"
    with pytest.raises(CuralinkError, match="already in the project"):
        project.documents.import_documents([_doc("2"), _doc("1")], on_duplicate="error")
    assert project.documents.document_ids() == ["1"], "the failed import stored nothing"


def test_a_bad_document_mid_file_rolls_the_whole_file_back(project: Project) -> None:
    project.documents.import_documents([_doc("kept")])

    def documents():
        yield _doc("a")
        yield _doc("b")
        raise InputError("corpus.txt", "malformed annotation line", line=12)

    with pytest.raises(InputError, match="corpus.txt, line 12"):
        project.documents.import_documents(documents(), batch_size=1)
    assert project.documents.document_ids() == ["kept"]


def test_cancel_rolls_back_and_keeps_what_was_stored(project: Project) -> None:
    project.kb.import_concepts(CONCEPTS[:1])
    token = CancelToken()

    def concepts():
        yield CONCEPTS[1]
        token.cancel()
        yield Concept("D000001", "MESH", "Never stored")

    with pytest.raises(Cancelled):
        project.kb.import_concepts(concepts(), cancel=token, batch_size=1)
    assert len(project.kb.knowledge_base()) == 1


def test_concepts_merge_new_names_and_search(project: Project) -> None:
    summary = project.kb.import_concepts(CONCEPTS)
    assert (summary.added, summary.names) == (2, 6)
    again = project.kb.import_concepts(
        [Concept("D006816", "MESH", "Huntington Disease", ("Huntington Chorea", "HD"))]
    )
    assert (again.added, again.skipped, again.names) == (0, 1, 1)
    kb = project.kb.knowledge_base()
    assert set(kb.get("D006816").names) == {
        "Huntington Disease",
        "Huntington Chorea",
        "Huntington's Disease",
        "HD",
    }
    assert kb.get("D003924").tree_numbers == ("C18.452.394.750.149",)
    hits = project.kb.search_names("huntington")
    assert hits[0][0] == "D006816"
    assert project.kb.search_names("D003924")[0] == (
        "D003924",
        "Diabetes Mellitus, Type 2",
        "Diabetes Mellitus, Type 2",
    )
    assert project.kb.add_names("D003924", ["adult onset diabetes", "NIDDM"]) == 1
    with pytest.raises(CuralinkError, match="no concept"):
        project.kb.add_names("D999999", ["x"])


def test_decisions_are_append_only_and_revert_undoes(project: Project) -> None:
    project.kb.import_concepts(CONCEPTS)
    project.documents.import_documents([_doc("1")])
    ((document, mention_ids),) = list(project.documents.documents_with_mention_ids())
    mention_id = mention_ids[0]
    project.curation.store_suggestions(
        {
            mention_id: [
                Candidate("D003924", "x", "NIDDM", 0.9, 0.2),
                Candidate("D006816", "y", "HD", 0.8, 0.7),
            ]
        },
        computed_for={mention_id: mention_key(document.mentions[0])},
        retriever_version="r1",
    )
    assert [c.concept_id for c in project.curation.suggestions(mention_id)] == ["D003924", "D006816"]
    project.curation.record_decision(mention_id, "accept", concept_id="D003924", curator="ann", model_version="r1")
    project.curation.record_decision(mention_id, "revert", curator="ann")
    project.curation.record_decision(mention_id, "correct", concept_id="D006816", curator="ann", model_version="r1")
    assert project.curation.current_decisions()[mention_id].concept_id == "D006816"
    exported = list(curated_documents(project, accepted_only=True))
    assert exported[0].mentions[0].concept_id == "D006816"
    assert exported[0].mentions[0].infons["curator"] == "ann"
    project.curation.record_decision(mention_id, "nil", curator="bob")
    assert list(curated_documents(project))[0].mentions[0].concept_id == "-1"
    assert list(curated_documents(project, accepted_only=True)) == []  # no accepted mention left
    assert project.desk.stats()["decisions"] == 4
    with pytest.raises(CuralinkError, match="unknown decision"):
        project.curation.record_decision(mention_id, "approve")


def test_model_registry_promotes_and_rolls_back(project: Project) -> None:
    folder = project.models_dir / "retriever"
    project.models.register_model("retriever", "v1", folder / "v1", metrics={"acc@1": 0.8}, status="active")
    project.models.register_model("retriever", "v2", folder / "v2", metrics={"acc@1": 0.85})
    project.models.promote_model("retriever", "v2")
    assert project.models.active_model("retriever").version == "v2"
    project.models.promote_model("retriever", "v1")
    assert project.models.active_model("retriever").version == "v1"
    assert [m.status for m in project.models.model_versions("retriever")] == ["active", "retired"]


def test_stats_count_only_standing_decisions_on_live_mentions(tmp_path):
    """Reviewed = mentions not deleted whose latest decision stands; edits and reverts are not reviews."""
    from core.documents import Document, Mention, Passage

    text = "asthma and gout and fever and pain"
    spans = [(0, 6), (11, 15), (20, 25), (30, 34)]
    document = Document(
        "1", (Passage(0, text, "title"),), tuple(Mention(s, e, text[s:e], "Disease", "D1") for s, e in spans)
    )
    with Project.create(tmp_path / "p") as project:
        project.documents.import_documents([document])
        asthma, gout, fever, pain = next(project.documents.documents_with_mention_ids())[1]
        project.curation.record_decision(asthma, "accept", concept_id="D1")  # stands: reviewed
        project.curation.record_decision(gout, "reject")
        project.documents.set_mention_removed(gout, curator="ann")  # decided, then deleted: not reviewed
        project.curation.record_decision(fever, "accept", concept_id="D1")
        project.curation.record_decision(fever, "revert")  # undone: not reviewed
        project.documents.set_mention_span(pain, 30, 33, curator="ann")  # a span edit alone: not reviewed
        stats = project.desk.stats()
    assert stats["mentions"] == 3
    assert stats["mentions_reviewed"] == 1
    assert stats["mentions_by_origin"] == {"gold": 3}
