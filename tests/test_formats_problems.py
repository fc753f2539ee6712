"""Every problem of a file in one run, and `--on-invalid skip|error` (issue 10, item 8), for every
corpus reader; the real GNormPlus and tmVar3 files carry a few annotations that miss their span."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from app.cli import EXIT_ERROR, main
from core.errors import InputError
from core.formats import read_corpus
from core.store import Project

REALWORLD = ("realworld", "pubtator")


def _report():
    from core.formats.report import FormatReport

    return FormatReport()


def _is_annotation(line: str) -> bool:
    fields = line.split("\t")
    return len(fields) >= 5 and fields[1].isdigit() and fields[2].isdigit()


def _mismatches(path: Path) -> list[int]:
    """Line numbers of annotations whose text column is not the text at their offsets (whitespace
    aside), found with a parser written here, independent of Curalink's."""
    bad: list[int] = []
    title = abstract = ""
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if "|t|" in line.split("\t")[0]:
            title, abstract = line.split("|t|", 1)[1], ""
        elif "|a|" in line.split("\t")[0]:
            abstract = line.split("|a|", 1)[1]
        elif _is_annotation(line):
            fields = line.split("\t")
            text = title + " " + abstract
            if text[int(fields[1]) : int(fields[2])].split() != fields[3].split():
                bad.append(number)
    return bad


@pytest.mark.parametrize(
    ("name", "count"), [("aioner_GNormPlus_Test.PubTator", 4), ("tmVar3Corpus.Gene.txt", 7)]
)
def test_real_files_every_problem_in_one_run(shared_data: Path, name: str, count: int) -> None:
    source = shared_data.joinpath(*REALWORLD, name)
    if not source.is_file():
        pytest.skip(f"{source} not found")
    expected = _mismatches(source)
    assert len(expected) == count
    report = _report()
    docs = list(read_corpus(source, "pubtator", report=report))
    assert [p.line for p in report.problems] == expected
    assert all(
        "does not match the document text" in p.reason or "run past the end" in p.reason
        for p in report.problems
    )
    annotation_lines = sum(1 for line in source.read_text().split("\n") if _is_annotation(line))
    assert sum(len(d.mentions) for d in docs) == annotation_lines - count  # the rest is kept


def test_cli_strict_lists_all_and_stores_nothing(shared_data: Path, tmp_path: Path, capsys) -> None:
    source = shared_data.joinpath(*REALWORLD, "aioner_GNormPlus_Test.PubTator")
    if not source.is_file():
        pytest.skip(f"{source} not found")
    Project.create(tmp_path / "p").close()
    args = ["-p", str(tmp_path / "p"), "corpus", "import", str(source), "--format", "pubtator"]
    assert main(args) == EXIT_ERROR
    err = capsys.readouterr().err.replace("\n", " ")
    for line in _mismatches(source):
        assert f"line {line}, document" in err
    assert "4 problems, nothing imported" in err and "--on-invalid skip" in err
    with Project.open(tmp_path / "p") as project:
        assert project.documents.document_ids() == []

    assert main([*args, "--on-invalid", "skip"]) == 0
    out = capsys.readouterr().out.replace("\n", " ")
    assert "262 documents (4845 mentions) added" in out
    listed = re.search(r"each listed in (\S+\.tsv)", out)
    assert listed, out
    report = Path(listed.group(1))
    assert report.parent == tmp_path / "p" / "logs"
    rows = list(csv.DictReader(report.open(encoding="utf-8"), delimiter="\t"))
    assert [int(r["line"]) for r in rows] == _mismatches(source)
    assert {r["file"] for r in rows} == {str(source)}
    assert all("does not match" in r["reason"] for r in rows)


def _bioc_xml(tmp_path: Path) -> tuple[Path, int, int]:
    path = tmp_path / "bad.xml"
    path.write_text(
        "<collection><source>s</source><date/><key/>"
        "<document><id>1</id><passage><offset>0</offset><text>Fever and rash.</text>"
        '<annotation id="a"><location offset="0" length="5"/><text>Fever</text></annotation>'
        '<annotation id="b"><location offset="0" length="5"/><text>Rash!</text></annotation>'
        '<annotation id="c"><location offset="10" length="40"/><text>rash.</text></annotation>'
        "</passage></document>"
        "<document><passage><offset>0</offset><text>No id.</text></passage></document>"
        "<document><id>3</id><passage><offset>0</offset><text>Fine.</text></passage></document>"
        "</collection>"
    )
    return path, 3, 2  # problems, documents kept


def _bioc_json(tmp_path: Path) -> tuple[Path, int, int]:
    path = tmp_path / "bad.json"
    annotation = {"id": "a", "infons": {}, "text": "Fever", "locations": [{"offset": 0, "length": 5}]}
    documents = [
        {
            "id": "1",
            "passages": [
                {
                    "offset": 0,
                    "text": "Fever and rash.",
                    "annotations": [annotation, {**annotation, "id": "b", "text": "Rash!"}],
                }
            ],
        },
        {"id": "2", "passages": [{"text": "no offset"}]},
        {"id": "3", "passages": [{"offset": 0, "text": "Fine.", "annotations": [{**annotation, "id": "c"}]}]},
    ]
    path.write_text(json.dumps({"source": "s", "date": "", "key": "", "infons": {}, "documents": documents}))
    return path, 3, 2


def _brat(tmp_path: Path) -> tuple[Path, int, int]:
    folder = tmp_path / "brat"
    folder.mkdir()
    (folder / "a.txt").write_text("Fever and rash.\n")
    (folder / "a.ann").write_text(
        "T1\tDisease 0 5\tFever\nT2\tDisease 0 5\tRash!\nN1\tReference T2 MESH:D005076\trash\n"
        "T3\tDisease 10 x\trash\nR1\tCauses T1\nT4\tDisease 10 14\trash\n#1\tAnnotatorNotes T9\tmissing\n"
    )
    (folder / "b.txt").write_bytes(b"Caf\xe9\n")
    return folder, 5, 1  # T2, T3, R1, #1 (N1 follows T2 silently), b.txt; one document kept


def _jsonl(tmp_path: Path) -> tuple[Path, int, int]:
    path = tmp_path / "bad.jsonl"
    good = {"doc_id": "1", "passages": [{"offset": 0, "text": "Fever and rash."}]}
    path.write_text(
        "\n".join(
            [
                json.dumps(
                    {**good, "mentions": [{"start": 0, "end": 5, "text": "Rash!"}, {"start": 0, "end": 5}]}
                ),
                '{"doc_id": "2", "passages": [',
                json.dumps({"passages": []}),
                json.dumps({**good, "doc_id": "4"}),
            ]
        )
        + "\n"
    )
    return path, 3, 2


def _text(tmp_path: Path) -> tuple[Path, int, int]:
    folder = tmp_path / "texts"
    folder.mkdir()
    (folder / "a.txt").write_text("Fever and rash.\n")
    (folder / "b.txt").write_bytes(b"Caf\xe9\n")
    (folder / "c.txt").write_text("   \n")
    return folder, 2, 1


def _pubtator(tmp_path: Path) -> tuple[Path, int, int]:
    path = tmp_path / "bad.pubtator"
    path.write_text(
        "1|t|Fever and rash.\n1|a|\n1\t0\t5\tFevers\tDisease\tD005334\n1\t0\t5\tFever\tDisease\tD005334\n"
        "1\tzero\t5\tFever\tDisease\tD005334\n\n2|t|Rash.\n2|a|\n3\t0\t4\tRash\tDisease\tD005076\n"
    )
    return path, 3, 2


@pytest.mark.parametrize(
    ("fmt", "make"),
    [
        ("pubtator", _pubtator),
        ("bioc-xml", _bioc_xml),
        ("bioc-json", _bioc_json),
        ("brat", _brat),
        ("jsonl", _jsonl),
        ("text", _text),
    ],
)
def test_every_reader_reports_all_problems(tmp_path: Path, fmt: str, make) -> None:
    path, problems, kept = make(tmp_path)
    with pytest.raises(InputError):  # without a report: the first problem raises, as before
        list(read_corpus(path, fmt))
    report = _report()
    docs = list(read_corpus(path, fmt, report=report))
    assert report.problem_count == problems, [str(p) for p in report.problems]
    assert len(docs) == kept
    assert all(p.line is not None or p.item or p.source != str(path) for p in report.problems)
    # the store: strict stores nothing and lists every problem; skip stores the rest
    with Project.create(tmp_path / "p") as project:
        from core.formats.report import InvalidItemsError

        report = _report()
        with pytest.raises(InvalidItemsError) as caught:
            project.documents.import_documents(read_corpus(path, fmt, report=report), report=report)
        assert caught.value.report.problem_count == problems
        assert str(caught.value).count("\n  ") == problems  # one listed line each
        assert project.documents.document_ids() == []
        report = _report()
        summary = project.documents.import_documents(
            read_corpus(path, fmt, report=report), report=report, on_invalid="skip"
        )
        assert summary.added == kept and summary.invalid == problems
