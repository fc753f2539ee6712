"""What each decision means in an export, and which documents `--accepted-only` / `--curated-only` write
(issue 10, item 11), checked against outcomes worked out by hand below."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli import main
from core.documents import Mention, document_from_title_abstract
from core.formats import read_corpus
from core.kb.concept import Concept
from core.store import Project
from core.store.curation import curated_documents


def _doc(doc_id: str, title: str, abstract: str, mentions: list[tuple[str, str, str]]):
    """A document whose mentions are found by text: (text, type, gold id), first occurrence after the last."""
    document = document_from_title_abstract(doc_id, title, abstract)
    found, cursor = [], 0
    for text, kind, gold in mentions:
        start = document.text.index(text, cursor)
        found.append(Mention(start, start + len(text), text, kind, gold))
        cursor = start + len(text)
    return document.with_mentions(found)


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    """Four documents and, per mention, one decision of each kind (some undone):

    doc 1 (train): Chorea -> reject; Huntington disease -> ambiguous; Breast and ovarian cancer ->
                   accept D3|D4 (one composite link); Tics -> nil
    doc 2 (test):  Huntington disease -> correct D6; Chorea -> accept D2, then undone (untouched)
    doc 3 (test):  Chorea, untouched;   doc 4 (train): no mentions
    """
    path = tmp_path / "p"
    with Project.create(path) as project:
        project.kb.import_concepts([Concept(f"D{i}", "MESH", f"Concept {i}") for i in range(1, 7)])
        project.documents.import_documents(
            [
                _doc(
                    "1",
                    "Chorea in Huntington disease",
                    "Breast and ovarian cancer. Tics.",
                    [
                        ("Chorea", "Disease", "D2"),
                        ("Huntington disease", "Disease", "D1"),
                        ("Breast and ovarian cancer", "CompositeMention", "D3"),
                        ("Tics", "Disease", "D5"),
                    ],
                ),
                _doc("4", "Nothing annotated", "At all.", []),
            ],
            split="train",
        )
        project.documents.import_documents(
            [
                _doc(
                    "2",
                    "Huntington disease",
                    "Chorea.",
                    [("Huntington disease", "Disease", "D1"), ("Chorea", "Disease", "D2")],
                ),
                _doc("3", "Nothing curated here", "Chorea again.", [("Chorea", "Disease", "D2")]),
            ],
            split="test",
        )
        ids = {doc.doc_id: mention_ids for doc, mention_ids in project.documents.documents_with_mention_ids()}
        chorea, huntington, composite, tics = ids["1"]
        project.curation.record_decision(chorea, "reject", curator="ann")
        project.curation.record_decision(huntington, "ambiguous", curator="ann")
        project.curation.record_decision(composite, "accept", concept_id="D3|D4", curator="ann")
        project.curation.record_decision(tics, "nil", curator="ann")
        project.curation.record_decision(ids["2"][0], "correct", concept_id="D6", curator="bob")
        project.curation.record_decision(ids["2"][1], "accept", concept_id="D2", curator="bob")
        project.curation.record_decision(ids["2"][1], "revert", curator="bob")
    return path


ALL = {
    "1": [
        ("Chorea", ""),
        ("Huntington disease", ""),
        ("Breast and ovarian cancer", "D3|D4"),
        ("Tics", "-1"),
    ],
    "2": [("Huntington disease", "D6"), ("Chorea", "D2")],
    "3": [("Chorea", "D2")],
    "4": [],
}


def _exported(path: Path, fmt: str) -> dict[str, list[tuple[str, str]]]:
    return {d.doc_id: [(m.text, m.concept_id) for m in d.mentions] for d in read_corpus(path, fmt)}


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ([], ALL),
        (["--curated-only"], {"1": ALL["1"], "2": ALL["2"]}),
        (
            ["--accepted-only"],
            {"1": [("Breast and ovarian cancer", "D3|D4")], "2": [("Huntington disease", "D6")]},
        ),
        (["--curated-only", "--split", "test"], {"2": ALL["2"]}),
        (["--accepted-only", "--split", "train"], {"1": [("Breast and ovarian cancer", "D3|D4")]}),
    ],
)
def test_export_filters_and_decision_meanings(project_dir, tmp_path, capsys, flags, expected):
    out = tmp_path / "out.pubtator"
    assert main(["-p", str(project_dir), "export", "--format", "pubtator", "--out", str(out), *flags]) == 0
    assert _exported(out, "pubtator") == expected
    assert f"wrote {len(expected)} documents" in capsys.readouterr().out


def test_decisions_travel_as_infons_where_the_format_has_them(project_dir, tmp_path):
    out = tmp_path / "out.jsonl"
    assert (
        main(["-p", str(project_dir), "export", "--format", "jsonl", "--out", str(out), "--curated-only"])
        == 0
    )
    first = next(d for d in read_corpus(out, "jsonl") if d.doc_id == "1")
    infons = [(m.infons.get("decision"), m.infons.get("imported_id"), m.concept_id) for m in first.mentions]
    # The imported id a reject or an ambiguous verdict left unconfirmed is kept, as an infon only.
    assert infons == [
        ("reject", "D2", ""),
        ("ambiguous", "D1", ""),
        ("accept", "D3", "D3|D4"),
        ("nil", "D5", "-1"),
    ]
    assert all(m.infons["curator"] == "ann" for m in first.mentions)


def test_curated_documents_skips_documents_and_deleted_mentions(project_dir):
    with Project.open(project_dir) as project:
        ids = {doc.doc_id: mention_ids for doc, mention_ids in project.documents.documents_with_mention_ids()}
        project.documents.set_mention_removed(ids["2"][0], curator="bob")  # the corrected mention is deleted
        curated = [d.doc_id for d in curated_documents(project, curated_only=True)]
        accepted = {d.doc_id: len(d.mentions) for d in curated_documents(project, accepted_only=True)}
    assert curated == ["1"]  # a decision on a deleted mention does not make its document curated
    assert accepted == {"1": 1}
