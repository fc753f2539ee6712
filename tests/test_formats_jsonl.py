"""Curalink JSON lines: the lossless format, and its errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.documents import Document, Mention, Passage, Relation
from core.errors import InputError
from core.formats import bioc_xml, brat, jsonl, pubtator


def _everything(fixtures_dir: Path) -> list[Document]:
    folder = fixtures_dir / "formats"
    return [
        *pubtator.read(folder / "composite.pubtator"),
        *bioc_xml.read(folder / "sample.bioc.xml"),
        *brat.read(folder / "brat"),
        Document(
            "multi-line",
            (
                Passage(0, "Line one\nline two", "paragraph"),
                Passage(20, "µ-opioid — “quoted” \u2028 text", ""),
            ),
            (Mention(20, 28, "µ-opioid", "Chemical", "", "m1", "detected", {"score": "0.5"}),),
            (Relation("binds", ("Arg1:m1",), "r1"),),
            {"source": "test", "year": "2024"},
        ),
    ]


def test_lossless_round_trip(fixtures_dir: Path, tmp_path: Path) -> None:
    docs = _everything(fixtures_dir)
    path = tmp_path / "all.jsonl"
    assert jsonl.write(docs, path) == len(docs)
    # one line per document: U+2028 inside a text is not a line break for JSON lines
    assert path.read_text(encoding="utf-8").count("\n") == len(docs)
    again = list(jsonl.read(path))
    assert again == docs
    assert [d.metadata for d in again] == [d.metadata for d in docs]
    assert [[m.infons for m in d.mentions] for d in again] == [[m.infons for m in d.mentions] for d in docs]
    # and the file is a fixed point
    jsonl.write(again, tmp_path / "again.jsonl")
    assert (tmp_path / "again.jsonl").read_bytes() == path.read_bytes()


def test_schema_example(tmp_path: Path) -> None:
    line = {
        "doc_id": "8528200",
        "passages": [{"offset": 0, "text": "Machado-Joseph disease in a family.", "kind": "title"}],
        "mentions": [{"start": 0, "end": 22, "concept_id": "D017827"}],
    }
    path = tmp_path / "one.jsonl"
    path.write_text("\n" + json.dumps(line) + "\n\n")
    (doc,) = jsonl.read(path)
    assert doc.mentions == (Mention(0, 22, "Machado-Joseph disease", "", "D017827"),)
    assert doc.relations == () and doc.metadata == {}


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"doc_id": "1", "passages": [', "invalid JSON: Expecting value"),
        ('["not", "an", "object"]', "expected a JSON object, got list"),
        ('{"passages": []}', "doc_id: required field is missing"),
        ('{"doc_id": 7, "passages": []}', "doc_id: must be a string, got int"),
        ('{"doc_id": "1"}', "passages: required field is missing"),
        (
            '{"doc_id": "1", "passages": [{"offset": "0", "text": "x"}]}',
            "passages[0].offset: must be an integer",
        ),
        ('{"doc_id": "1", "passages": [{"offset": 0}]}', "passages[0].text: required field is missing"),
        (
            '{"doc_id": "1", "passages": [{"offset": 0, "text": "Fever"}], "mentions": [{"start": 0, "end": 9}]}',
            "run past the end of the document text",
        ),
        (
            '{"doc_id": "1", "passages": [{"offset": 0, "text": "Fever"}], "mentions": [{"start": 0, "end": 5, "text": "Rash!"}]}',
            "document 1, mentions[0]: mention text 'Rash!' does not match",
        ),
        (
            # infon values may be any JSON value (BioC JSON's typed infons), but infons are an object
            '{"doc_id": "1", "passages": [{"offset": 0, "text": "F"}], "mentions": [{"start": 0, "end": 1, "infons": [1]}]}',
            "mentions[0].infons: must be an object, got list",
        ),
        ('{"bioctype": "BioCDocument", "id": "1", "passages": []}', "looks like a BioC JSON document"),
    ],
)
def test_bad_lines(tmp_path: Path, line: str, problem: str) -> None:
    good = json.dumps({"doc_id": "0", "passages": [{"offset": 0, "text": "Fine."}]})
    path = tmp_path / "bad.jsonl"
    path.write_text(good + "\n" + line + "\n")
    reader = jsonl.read(path)
    assert next(reader).doc_id == "0"
    with pytest.raises(InputError) as caught:
        next(reader)
    assert caught.value.line == 2
    assert problem in str(caught.value)


def test_empty_and_undecodable(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"")
    with pytest.raises(InputError, match="empty"):
        list(jsonl.read(path))
    path.write_bytes(b"\n\n")
    with pytest.raises(InputError, match="no documents found"):
        list(jsonl.read(path))
    path.write_bytes(b'{"doc_id": "caf\xe9", "passages": []}\n')
    with pytest.raises(InputError, match=r"line 1: not valid UTF-8: byte 0xe9 at column 16"):
        list(jsonl.read(path))
