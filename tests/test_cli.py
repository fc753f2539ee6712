"""The `curalink` command contract, run in-process on the bundled demo files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import EXIT_ERROR, main
from app.resources import demo_dir
from core.formats import read_corpus
from core.store import Project

DEMO = demo_dir()


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    path = tmp_path / "proj"
    assert main(["init", str(path)]) == 0
    return path


def _stats(project_dir: Path, capsys) -> dict:
    capsys.readouterr()
    assert main(["-p", str(project_dir), "stats", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_import_stats_and_export_round_trip(project_dir: Path, tmp_path: Path, capsys) -> None:
    assert main(["-p", str(project_dir), "kb", "import", str(DEMO / "kb.tsv"), "--format", "tsv"]) == 0
    assert (
        main(
            [
                "-p",
                str(project_dir),
                "corpus",
                "import",
                str(DEMO / "abstracts.pubtator"),
                "--format",
                "pubtator",
                "--split",
                "test",
            ]
        )
        == 0
    )
    stats = _stats(project_dir, capsys)
    assert stats["documents"] == 6
    assert stats["documents_by_split"] == {"test": 6}
    assert stats["mentions"] == 47
    assert stats["concepts"] == 40
    out = tmp_path / "export.jsonl"
    assert main(["-p", str(project_dir), "export", "--format", "jsonl", "--out", str(out)]) == 0
    exported = list(read_corpus(out, "jsonl"))
    original = list(read_corpus(DEMO / "abstracts.pubtator", "pubtator"))
    assert [d.mentions for d in exported] == [d.mentions for d in original]
    second = tmp_path / "second"
    assert main(["init", str(second)]) == 0
    assert main(["-p", str(second), "corpus", "import", str(out), "--format", "jsonl"]) == 0
    with Project.open(second) as reopened:
        assert [d.text for d in reopened.documents.documents()] == [d.text for d in original]
        assert [d.mentions for d in reopened.documents.documents()] == [d.mentions for d in original]
    pubtator = tmp_path / "export.pubtator"
    assert main(["-p", str(project_dir), "export", "--format", "pubtator", "--out", str(pubtator)]) == 0
    assert pubtator.read_bytes() == (DEMO / "abstracts.pubtator").read_bytes(), "export is byte-identical"


def test_reimport_skips_duplicates_and_reports_them(project_dir: Path, capsys) -> None:
    args = [
        "-p",
        str(project_dir),
        "corpus",
        "import",
        str(DEMO / "abstracts.pubtator"),
        "--format",
        "pubtator",
    ]
    assert main(args) == 0
    capsys.readouterr()
    assert main(args) == 0
    assert "6 skipped as duplicates" in capsys.readouterr().out.replace("\n", " ")
    assert main([*args, "--on-duplicate", "error"]) == EXIT_ERROR
    assert _stats(project_dir, capsys)["documents"] == 6


def test_bad_inputs_give_clear_errors_and_store_nothing(project_dir: Path, tmp_path: Path, capsys) -> None:
    p = ["-p", str(project_dir)]
    assert main([*p, "kb", "import", str(DEMO / "kb.tsv"), "--format", "medic"]) == EXIT_ERROR
    assert "kb.tsv" in capsys.readouterr().err
    assert main([*p, "corpus", "import", str(DEMO / "kb.tsv"), "--format", "bioc-xml"]) == EXIT_ERROR
    assert main([*p, "corpus", "import", str(tmp_path / "missing.txt"), "--format", "pubtator"]) == EXIT_ERROR
    assert "no such file" in capsys.readouterr().err
    broken = tmp_path / "broken.pubtator"
    good = (DEMO / "abstracts.pubtator").read_text().split("\n\n")
    broken.write_text(
        good[0]
        + "\n\n"
        + good[1].replace("\t144\t", "\tabc\t", 1).replace("D015179", "D015179\textra\tcols", 1)
        + "\n"
    )
    assert main([*p, "corpus", "import", str(broken), "--format", "pubtator"]) == EXIT_ERROR
    message = capsys.readouterr().err
    assert "broken.pubtator" in message and "line" in message
    empty = tmp_path / "empty.pubtator"
    empty.write_text("")
    assert main([*p, "corpus", "import", str(empty), "--format", "pubtator"]) == EXIT_ERROR
    latin1 = tmp_path / "latin1.tsv"
    latin1.write_bytes("D1\tM\xe9ni\xe8re disease\n".encode("latin-1"))
    assert main([*p, "kb", "import", str(latin1), "--format", "tsv"]) == EXIT_ERROR
    assert "line 1" in capsys.readouterr().err
    stats = _stats(project_dir, capsys)
    assert (stats["documents"], stats["concepts"]) == (0, 0)


def test_commands_refuse_a_folder_that_is_not_a_project(tmp_path: Path, capsys) -> None:
    assert main(["-p", str(tmp_path), "stats"]) == EXIT_ERROR
    assert "not a Curalink project" in capsys.readouterr().err
    assert main(["stats"]) == EXIT_ERROR


def test_model_commands_explain_what_is_missing(project_dir: Path, capsys) -> None:
    p = ["-p", str(project_dir)]
    assert (
        main(
            [
                *p,
                "corpus",
                "import",
                str(DEMO / "abstracts.pubtator"),
                "--format",
                "pubtator",
                "--split",
                "test",
            ]
        )
        == 0
    )
    assert main([*p, "link"]) == EXIT_ERROR
    assert "no trained retriever" in capsys.readouterr().err
    assert main([*p, "train", "reranker", "--max-seconds", "1"]) == EXIT_ERROR
    assert "train retriever" in capsys.readouterr().err, "the reranker needs the retriever first"
    assert main([*p, "rollback", "retriever"]) == EXIT_ERROR
    assert "retriever" in capsys.readouterr().err
    assert main([*p, "retrain", "--kind", "retriever", "--max-seconds", "1"]) == EXIT_ERROR
    assert "knowledge base is empty" in capsys.readouterr().err
    assert main([*p, "kb", "import", str(DEMO / "kb.tsv"), "--format", "tsv"]) == 0
    assert main([*p, "retrain", "--kind", "retriever", "--max-seconds", "1"]) == EXIT_ERROR
    assert "nothing to learn from" in capsys.readouterr().err


def test_kb_import_summary_says_what_obo_imports_are_not_followed(project_dir: Path, tmp_path: Path, capsys):
    obo = tmp_path / "tiny.obo"
    obo.write_text(
        "format-version: 1.2\nimport: http://purl.obolibrary.org/obo/uo.obo\n\n"
        "[Term]\nid: TST:0000001\nname: tiny term\n",
        encoding="utf-8",
    )
    capsys.readouterr()
    assert main(["-p", str(project_dir), "kb", "import", str(obo), "--format", "obo"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "1 concepts added" in out
    assert "not kept:" in out and "import: http://purl.obolibrary.org/obo/uo.obo" in out
