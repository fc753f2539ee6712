"""Every file of ../shared/data/realworld imports (or is refused with a clear reason), round-trips
through JSONL and the store identically (texts, offsets, ids, relations, infons), and through its own
format with only the differences docs/realworld-roundtrips.md lists."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.errors import InputError
from core.formats import FORMATS, read_corpus, write_corpus
from core.formats.jsonl import to_json
from core.formats.report import FormatReport
from core.store import Project

REALWORLD = Path(
    os.environ.get("CURALINK_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
REALWORLD = REALWORLD / "realworld"

# (path, format, problems in the file, keys of a document that differ after a round trip through its
# own format) -- the table of docs/realworld-roundtrips.md
FILES = [
    ("pubtator/aioner_BioRED_Test.PubTator", "pubtator", 0, set()),
    ("pubtator/aioner_GNormPlus_Test.PubTator", "pubtator", 4, set()),
    ("pubtator/aioner_NLMchem_Test.PubTator", "pubtator", 0, set()),
    ("pubtator/aioner_NLMgene_Test.PubTator", "pubtator", 0, set()),
    ("pubtator/aioner_tmVar3_Test.PubTator", "pubtator", 0, set()),
    ("pubtator/bioc_tmVar.Normalization.txt", "pubtator", 0, set()),
    ("pubtator/gnormplus_sample_data_pubtator.txt", "pubtator", 0, set()),
    ("pubtator/tmVar3Corpus.Gene.txt", "pubtator", 7, set()),
    ("bioc/aioner_ex2.xml", "bioc-xml", 0, set()),
    ("bioc/bionlplab_everything.json", "bioc-json", 0, set()),
    ("bioc/bionlplab_everything.xml", "bioc-xml", 0, set()),
    ("bioc/bionlplab_everything_v2.xml", "bioc-xml", 0, {"collection"}),  # version 2.0 -> the 1.0 layout
    *[
        (f"bioc/{name}", "bioc-json", 0, {"collection"})  # one document object -> a collection
        for name in (
            "factoid_10.1016_j.molcel.2016.11.034.json",
            "factoid_10.1016_j.molcel.2019.03.023.json",
            "factoid_10.1016_j.molcel.2019.04.005.json",
            "factoid_10.1016_j.molcel.2024.01.007.json",
            "factoid_10.1038_s41556-021-00642-9.json",
            "factoid_10.1126_scisignal.abf3535.json",
            "factoid_10.15252_embj.2023113616.json",
            "factoid_pubtator_8.json",
        )
    ],
    ("bioc/teamtat_11773052_v0.xml", "bioc-xml", 0, set()),
    ("bioc/teamtat_18093912_v0.xml", "bioc-xml", 0, set()),
    ("bioc/teamtat_3757249_v0.xml", "bioc-xml", 0, set()),
    ("bioc/teamtat_sample_test.xml", "bioc-xml", 0, set()),
    ("bioc/teamtat_sample_training.xml", "bioc-xml", 0, set()),
    ("brat/brat_epi", "brat", 0, set()),
    ("brat/brat_ge", "brat", 0, set()),
    ("brat/brat_id", "brat", 0, set()),
    ("brat/brat_tutorial", "brat", 0, set()),
]


@pytest.fixture(scope="module")
def realworld() -> Path:
    if not REALWORLD.is_dir():
        pytest.skip(f"{REALWORLD} not found (set CURALINK_SHARED_DATA)")
    return REALWORLD


def test_the_table_covers_every_file(realworld: Path) -> None:
    present = {
        f"{d.name}/{p.name}"
        for d in realworld.iterdir()
        if d.name in ("pubtator", "bioc", "brat")
        for p in d.iterdir()
    }
    assert present == {path for path, *_ in FILES}


def _read(path: Path, fmt: str) -> tuple[list, FormatReport]:
    report = FormatReport()
    return list(read_corpus(path, fmt, report=report)), report


def _canonical(document) -> dict:
    """A document as JSON with mentions in offset order (the store keeps them that way)."""
    full = to_json(document)
    full["mentions"] = sorted(full["mentions"], key=lambda m: (m["start"], m["end"]))
    return full


@pytest.mark.parametrize(("name", "fmt", "problems", "differences"), FILES, ids=[f[0] for f in FILES])
def test_realworld_file(
    realworld: Path, tmp_path: Path, name: str, fmt: str, problems: int, differences: set
) -> None:
    source = realworld / name
    docs, report = _read(source, fmt)
    assert report.problem_count == problems, [str(p) for p in report.problems]
    assert docs and all(not d.mention_text_mismatches() for d in docs)
    if problems:
        with pytest.raises(InputError):  # strict by default
            list(read_corpus(source, fmt))
    # JSONL: identical
    write_corpus(docs, tmp_path / "all.jsonl", "jsonl")
    assert [to_json(d) for d in read_corpus(tmp_path / "all.jsonl", "jsonl")] == [to_json(d) for d in docs]
    # the store: identical (mentions in offset order)
    with Project.create(tmp_path / "p") as project:
        summary = project.documents.import_documents(iter(docs), report=report, on_invalid="skip")
        assert summary.added == len({d.doc_id for d in docs})
        stored = {d.doc_id: d for d in project.documents.documents()}
        assert [_canonical(stored[d.doc_id]) for d in docs] == [_canonical(d) for d in docs]
    # its own format: only the listed differences
    out = tmp_path / ("own" if fmt == "brat" else f"own{source.suffix}")
    write_corpus(docs, out, fmt)
    again = list(read_corpus(out, fmt))
    assert [d.doc_id for d in again] == [d.doc_id for d in docs]
    found = {
        key
        for a, b in zip(docs, again)
        for key in to_json(a).keys() | to_json(b).keys()
        if to_json(a).get(key) != to_json(b).get(key)
    }
    assert found == differences
    if fmt == "pubtator" and not problems:  # byte for byte, but for a blank line ending the file
        assert out.read_bytes() == source.read_bytes().rstrip(b"\n") + b"\n"


@pytest.mark.parametrize(
    ("name", "fmt"), [("pubmed/pubmed-29768149.xml", "pubmed-xml"), ("pubmed/pone.0046493.nxml", "jats")]
)
def test_pubmed_and_jats_read_and_point_away_from_bioc(realworld: Path, name: str, fmt: str) -> None:
    (document,) = read_corpus(realworld / name, fmt)  # details: tests/test_formats_pubmed.py
    assert document.mentions == ()
    with pytest.raises(InputError, match=f"given as bioc-xml, but the file looks like {fmt}"):
        read_corpus(realworld / name, "bioc-xml")
    with pytest.raises(InputError, match=f"not BioC XML: the root element is .*try --format {fmt}"):
        list(FORMATS["bioc-xml"].read(realworld / name))
