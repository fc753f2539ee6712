"""`curalink link --detect` on the demo project plus NCBI-disease gold abstracts plus one raw abstract:
gold documents are left exactly as their file has them, the raw one gets typed mentions, and the
command says what it skipped and why."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.cli import EXIT_ERROR, main
from app.resources import demo_dir
from core.formats import read_corpus
from core.store import Project

RAW = (
    "Huntington disease and cystic fibrosis in one family\n\n"
    "A patient with Huntington disease had a sister with cystic fibrosis (CF); CF and asthma were "
    "treated. Serotonin (5-HT) levels were normal."
)
NCBI_SLICE = 8


@pytest.fixture
def project_dir(demo_template: Path, tmp_path: Path, ncbi_dir: Path) -> Path:
    destination = tmp_path / "demo"
    shutil.copytree(demo_template, destination, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
    test_file = ncbi_dir / "NCBItestset_corpus.txt"
    with Project.open(destination) as project:
        gold = list(read_corpus(test_file, "pubtator"))[:NCBI_SLICE]
        project.documents.import_documents(gold, source=str(test_file), split="test")
    raw = tmp_path / "raw-1.txt"
    raw.write_text(RAW, encoding="utf-8")
    assert main(["-p", str(destination), "corpus", "import", str(raw), "--format", "text"]) == 0
    return destination


def test_link_detect_leaves_gold_documents_alone_and_types_what_it_adds(
    project_dir: Path, ncbi_dir: Path, tmp_path: Path, capsys
) -> None:
    gold = {d.doc_id: d.mentions for d in read_corpus(demo_dir() / "abstracts.pubtator", "pubtator")}
    gold |= {
        d.doc_id: d.mentions
        for d in list(read_corpus(ncbi_dir / "NCBItestset_corpus.txt", "pubtator"))[:NCBI_SLICE]
    }
    capsys.readouterr()
    assert main(["-p", str(project_dir), "link", "--detect"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    with Project.open(project_dir) as project:
        for doc_id, mentions in gold.items():
            assert project.documents.document(doc_id).mentions == mentions, f"gold document {doc_id} was changed"
        raw = project.documents.document("raw-1").mentions
        assert "detected 7 new mentions in 1 documents" in out
        assert f"skipped {len(gold)} documents that already have mentions" in out
        assert [m.text for m in raw] == [
            "Huntington disease",
            "cystic fibrosis",
            "Huntington disease",
            "cystic fibrosis",
            "CF",
            "CF",
            "asthma",
        ]
        assert all(m.type and m.type in out for m in raw), "typed, and the type is printed"

    exported = tmp_path / "all.pubtator"
    assert main(["-p", str(project_dir), "export", "--format", "pubtator", "--out", str(exported)]) == 0
    annotation_lines = [line.split("\t") for line in exported.read_text().splitlines() if "\t" in line]
    assert annotation_lines and all(fields[4] for fields in annotation_lines if len(fields) >= 6), (
        "no annotation line with an empty type column"
    )
    back = {d.doc_id: d.mentions for d in read_corpus(exported, "pubtator")}
    assert [(m.start, m.end, m.type) for m in back["raw-1"]] == [(m.start, m.end, m.type) for m in raw]


def test_link_detect_on_a_split_skips_gold_and_explains(project_dir: Path, capsys) -> None:
    capsys.readouterr()
    assert main(["-p", str(project_dir), "link", "--detect", "--split", "test"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "detected 0 new mentions in 0 documents" in out
    assert "annotated by a gold file" in out and "--include-gold" in out
    with Project.open(project_dir) as project:
        assert project.desk.stats()["mentions_by_origin"].get("detected", 0) == 0


def test_link_refuses_unknown_documents_and_stray_options(project_dir: Path, tmp_path: Path, capsys) -> None:
    p = ["-p", str(project_dir)]
    listing = tmp_path / "ids.txt"
    listing.write_text("raw-1\nmissing-9\n", encoding="utf-8")
    capsys.readouterr()
    assert main(
        [*p, "link", "--detect", "--documents", "raw-1", "nope", "--documents-file", str(listing)]
    ) == (EXIT_ERROR)
    err = " ".join(capsys.readouterr().err.split())
    assert "'nope'" in err and f"{listing} line 2: 'missing-9'" in err
    assert main([*p, "link", "--include-gold"]) == EXIT_ERROR
    assert "--detect" in capsys.readouterr().err
    with Project.open(project_dir) as project:
        assert project.documents.document("raw-1").mentions == ()
    assert (
        main([*p, "link", "--detect", "--documents-file", str(listing.with_name("absent.txt"))]) == EXIT_ERROR
    )
    assert "absent.txt" in capsys.readouterr().err
