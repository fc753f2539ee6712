"""The format registry: names, guessing, and catching a wrong --format before parsing."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import InputError
from core.formats import FORMATS, WRITABLE_FORMATS, guess_format, read_corpus, write_corpus


@pytest.fixture
def formats_dir(fixtures_dir: Path) -> Path:
    return fixtures_dir / "formats"


SAMPLES = {
    "composite.pubtator": "pubtator",
    "sample.bioc.xml": "bioc-xml",
    "sample.bioc.json": "bioc-json",
    "brat": "brat",
    "brat/4000001.txt": "brat",
    "brat/4000001.ann": "brat",
    "brat/4000002.txt": "text",  # no .ann beside it
    "abstract.txt": "text",
}


def test_registry_names() -> None:
    assert set(FORMATS) == {
        "pubtator",
        "bioc-xml",
        "bioc-json",
        "brat",
        "jsonl",
        "text",
        "pubmed-xml",
        "jats",
    }
    assert set(WRITABLE_FORMATS) == set(FORMATS) - {"pubmed-xml", "jats"}
    assert FORMATS["brat"].folder and not FORMATS["pubtator"].folder


@pytest.mark.parametrize("fmt", ["pubmed-xml", "jats"])
def test_read_only_formats_refuse_export(formats_dir: Path, tmp_path: Path, fmt: str) -> None:
    docs = list(read_corpus(formats_dir / "sample.bioc.xml", "bioc-xml"))
    with pytest.raises(InputError, match=f"{fmt} is read-only in Curalink .*; export formats: pubtator, "):
        write_corpus(docs, tmp_path / "out.xml", fmt)
    assert not (tmp_path / "out.xml").exists()


@pytest.mark.parametrize(("name", "expected"), list(SAMPLES.items()))
def test_guess_format(formats_dir: Path, name: str, expected: str) -> None:
    assert guess_format(formats_dir / name) == expected


def test_guess_by_content_not_extension(formats_dir: Path, tmp_path: Path) -> None:
    for name, fmt in (("composite.pubtator", "pubtator"), ("sample.bioc.xml", "bioc-xml")):
        disguised = tmp_path / f"{fmt}.dat"
        disguised.write_bytes((formats_dir / name).read_bytes())
        assert guess_format(disguised) == fmt
    jsonl_path = tmp_path / "docs.json"
    write_corpus(read_corpus(formats_dir / "composite.pubtator", "pubtator"), jsonl_path, "jsonl")
    assert guess_format(jsonl_path) == "jsonl"
    (tmp_path / "empty.xml").write_bytes(b"")
    assert guess_format(tmp_path / "empty.xml") is None
    (tmp_path / "binary.bin").write_bytes(bytes(range(128, 256)) * 4)
    assert guess_format(tmp_path / "binary.bin") is None
    assert guess_format(tmp_path / "missing.txt") is None


@pytest.mark.parametrize(
    ("name", "wrong"),
    [
        ("sample.bioc.xml", "pubtator"),
        ("sample.bioc.xml", "bioc-json"),
        ("sample.bioc.json", "bioc-xml"),
        ("sample.bioc.json", "jsonl"),
        ("composite.pubtator", "bioc-xml"),
        ("composite.pubtator", "text"),
        ("brat", "pubtator"),
    ],
)
def test_wrong_format_is_refused_before_parsing(formats_dir: Path, name: str, wrong: str) -> None:
    expected = SAMPLES[name]
    with pytest.raises(
        InputError, match=f"given as {wrong}, but the file looks like {expected}: try --format {expected}"
    ):
        read_corpus(formats_dir / name, wrong)  # raises at the call, not at the first next()


def test_unknown_format_and_missing_path(formats_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown corpus format 'conll'; known formats: pubtator, bioc-xml"):
        read_corpus(formats_dir / "composite.pubtator", "conll")
    with pytest.raises(InputError, match="unknown corpus format 'xml'"):
        write_corpus([], tmp_path / "x", "xml")
    with pytest.raises(InputError, match="not found"):
        read_corpus(tmp_path / "missing.txt", "pubtator")


def test_read_with_guessing_and_compatible_pairs(formats_dir: Path, tmp_path: Path) -> None:
    assert [d.doc_id for d in read_corpus(formats_dir / "sample.bioc.xml")] == ["2000001", "2000002"]
    # a brat text read as plain text drops the annotations; bare .txt files read as brat have none
    (as_text,) = read_corpus(formats_dir / "brat" / "4000001.txt", "text")
    assert as_text.mentions == ()
    (as_brat,) = read_corpus(formats_dir / "abstract.txt", "brat")
    assert as_brat.mentions == () and len(as_brat.passages) == 4  # brat passages are lines
    (tmp_path / "mystery").write_bytes(b"\x00\x01\x02\xff\xfe")
    with pytest.raises(
        InputError, match="UTF-16|binary"
    ):  # what it is (issue 24, item 10), not "cannot tell"
        read_corpus(tmp_path / "mystery")
    (tmp_path / "unclear").write_text('{"neither": "format"}\n', encoding="utf-8")
    with pytest.raises(InputError, match="cannot tell the corpus format"):
        read_corpus(tmp_path / "unclear")


@pytest.mark.parametrize("fmt", sorted(WRITABLE_FORMATS))
def test_write_corpus_every_format(formats_dir: Path, tmp_path: Path, fmt: str) -> None:
    docs = list(read_corpus(formats_dir / "sample.bioc.xml", "bioc-xml"))
    out = tmp_path / ("out.txt" if fmt == "pubtator" else "out")
    assert write_corpus(docs, out, fmt) == 2
    back = list(read_corpus(out, fmt))
    assert [d.doc_id for d in back] == ["2000001", "2000002"]
    assert [d.text for d in back][0].startswith("Huntington disease")
