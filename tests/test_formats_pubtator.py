"""PubTator reader/writer on the real NCBI-disease splits and on hand-written files."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import InputError
from core.formats import pubtator

SPLITS = {
    "train": ("NCBItrainset_corpus.txt", 593, 5145),
    "dev": ("NCBIdevelopset_corpus.txt", 100, 787),
    "test": ("NCBItestset_corpus.txt", 100, 960),
}


@pytest.mark.parametrize("split", list(SPLITS))
def test_ncbi_counts_and_offsets(ncbi_dir: Path, split: str) -> None:
    name, n_docs, n_mentions = SPLITS[split]
    docs = list(pubtator.read(ncbi_dir / name))
    assert len(docs) == n_docs
    assert sum(len(d.mentions) for d in docs) == n_mentions
    # Mention.text is the text at the offsets everywhere, the one whitespace quirk included
    assert all(not d.mention_text_mismatches() for d in docs)
    for doc in docs:
        assert [p.kind for p in doc.passages] == ["title", "abstract"]
        assert doc.passages[1].offset == len(doc.passages[0].text) + 1
    types = {m.type for d in docs for m in d.mentions}
    assert types == {"SpecificDisease", "DiseaseClass", "Modifier", "CompositeMention"}


def test_ncbi_train_quirks(ncbi_dir: Path) -> None:
    docs = list(pubtator.read(ncbi_dir / "NCBItrainset_corpus.txt"))
    ids = [d.doc_id for d in docs]
    assert ids[0] == "10192393"  # the leading blank line is skipped
    assert ids.count("8528200") == 2 and len(set(ids)) == 592
    first, second = (d for d in docs if d.doc_id == "8528200")
    assert first == second and len(first.mentions) == 11
    quirky = [(d.doc_id, m) for d in docs for m in d.mentions if "source_text" in m.infons]
    assert len(quirky) == 1
    doc_id, mention = quirky[0]
    assert (doc_id, mention.start, mention.end) == ("10923035", 711, 761)
    assert mention.text == 'generalized epilepsy and febrile seizures " plus "'
    assert mention.infons["source_text"] == mention.text + "  "
    assert mention.concept_id == "D004829+D003294"
    composite = [m for d in docs for m in d.mentions if "|" in m.concept_id or "+" in m.concept_id]
    assert len(composite) == 115
    assert {m.concept_id for m in composite} >= {"D001943|D010051", "D004829+D003294"}


@pytest.mark.parametrize("split", list(SPLITS))
def test_ncbi_write_back(ncbi_dir: Path, tmp_path: Path, split: str) -> None:
    source = ncbi_dir / SPLITS[split][0]
    docs = list(pubtator.read(source))
    out = tmp_path / "out.txt"
    assert pubtator.write(docs, out) == len(docs)
    again = list(pubtator.read(out))
    assert again == docs
    assert [[m.infons for m in d.mentions] for d in again] == [[m.infons for m in d.mentions] for d in docs]
    # byte-identical except the leading blank line that train and dev begin with
    original = source.read_bytes()
    assert out.read_bytes() == original.lstrip(b"\n")
    assert (out.read_bytes() == original) is (split == "test")


def test_composite_fixture(fixtures_dir: Path, tmp_path: Path) -> None:
    source = fixtures_dir / "formats" / "composite.pubtator"
    first, second = pubtator.read(source)
    assert first.doc_id == "1000001" and first.title.startswith("Acute kidney injury")
    by_id = {m.concept_id: m for m in first.mentions}
    assert by_id["D001943|D010051"].text == "breast and ovarian cancer"
    assert by_id["D001943|D010051"].infons["individual_mentions"] == "breast cancer|ovarian cancer"
    assert by_id["D001943|D010051"].concept_ids == ("D001943", "D010051")
    assert by_id["-1"].text == "neurotoxicity" and by_id["-1"].concept_ids == ()
    assert [(r.type, r.arguments) for r in first.relations] == [
        ("CID", ("D008727", "D058186")),
        ("CID", ("D008727", "D012640")),
    ]
    assert len(second.passages) == 1 and second.mentions[0].concept_id == "D004829+D003294"
    out = tmp_path / "again.pubtator"
    pubtator.write([first, second], out)
    assert out.read_bytes() == source.read_bytes()


def _write(tmp_path: Path, text: str | bytes, name: str = "bad.txt") -> Path:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


GOOD_BLOCK = "1|t|Fever and rash.\n1|a|Rash spread.\n1\t0\t5\tFever\tDisease\tD005334\n"


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("2\t0\t5\tFever\tDisease\tD005334\textra\tmore", "wrong field count: 8"),
        ("2\t0\t5", "wrong field count: 3"),
        ("2\t0\t5\tFever", "wrong field count: 4"),
        ("2\tzero\t5\tFever\tDisease\tD005334", "non-integer offsets 'zero', '5'"),
        ("2\t0.5\t5\tFever\tDisease\tD005334", "non-integer offsets"),
        ("2\t5\t0\tFever\tDisease\tD005334", "start offset 5 is after end offset 0"),
        ("2\t0\t5\tFevers\tDisease\tD005334", "does not match the document text"),
        ("2\t30\t40\tFever\tDisease\tD005334", "run past the end of the document text"),
        ("3\t0\t5\tFever\tDisease\tD005334", "annotation for '3' inside the block of 2"),
        ("this is not pubtator", "not a PubTator line"),
    ],
)
def test_malformed_lines_name_file_and_line(tmp_path: Path, line: str, problem: str) -> None:
    path = _write(tmp_path, GOOD_BLOCK + "\n2|t|Fever.\n2|a|None.\n" + line + "\n")
    reader = pubtator.read(path)
    assert next(reader).doc_id == "1"  # the good document before the bad one still arrives
    with pytest.raises(InputError) as caught:
        next(reader)
    assert caught.value.line == 7
    assert caught.value.source == str(path)
    assert problem in str(caught.value)
    assert f"{path}, line 7" in str(caught.value)


def test_whitespace_only_difference_is_accepted(tmp_path: Path) -> None:
    path = _write(tmp_path, "1|t|Febrile  seizures.\n1|a|\n1\t0\t17\tFebrile seizures \tDisease\tD003294\n")
    (doc,) = pubtator.read(path)
    mention = doc.mentions[0]
    assert mention.text == "Febrile  seizures"
    assert mention.infons["source_text"] == "Febrile seizures "
    out = tmp_path / "out.txt"
    pubtator.write([doc], out)
    assert out.read_bytes() == path.read_bytes()


def test_non_utf8_names_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, GOOD_BLOCK.encode() + b"\n2|t|Caf\xe9 au lait spots.\n2|a|\n")
    reader = pubtator.read(path)
    assert next(reader).doc_id == "1"
    with pytest.raises(InputError, match=r"line 5: not valid UTF-8: byte 0xe9 at column 8"):
        next(reader)


@pytest.mark.parametrize(("content", "problem"), [(b"", "empty"), (b"\n\n  \n", "only blank lines")])
def test_empty_file_is_an_error(tmp_path: Path, content: bytes, problem: str) -> None:
    with pytest.raises(InputError, match=problem):
        list(pubtator.read(_write(tmp_path, content)))


def test_bioc_xml_read_as_pubtator(fixtures_dir: Path) -> None:
    path = fixtures_dir / "formats" / "sample.bioc.xml"
    with pytest.raises(InputError, match=r"line 1: not a PubTator line.*looks like bioc-xml"):
        list(pubtator.read(path))


def test_structure_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="line 1: annotation line before any title line"):
        list(pubtator.read(_write(tmp_path, "1\t0\t5\tFever\tDisease\tD005334\n")))
    # an abstract line with no title before it is GNormPlus input, not an error (see
    # test_formats_pubtator_blocks.py::test_abstract_only_blocks)
    with pytest.raises(InputError, match="line 2: abstract line for 2 inside the block of 1"):
        list(pubtator.read(_write(tmp_path, "1|t|Rash.\n2|a|Rash.\n")))


def test_lenient_variants(tmp_path: Path) -> None:
    """CRLF endings, a BOM, a missing blank line between blocks, 5-column (unlinked) annotations and
    BioRED-style 5-column relations are all real-world PubTator."""
    content = (
        "\ufeff1|t|Fever.\r\n1|a|\r\n1\t0\t5\tFever\tDisease\r\n"
        "2|t|Rash.\r\n2|a|Itch.\r\n2\tAssociation\tD005334\tD012201\tNovel\r\n"
    )
    first, second = pubtator.read(_write(tmp_path, content))
    assert first.mentions[0].concept_id == "" and first.mentions[0].text == "Fever"
    assert second.relations[0].arguments == ("D005334", "D012201", "Novel")


def test_writer_refuses_unwritable_ids(tmp_path: Path, fixtures_dir: Path) -> None:
    from dataclasses import replace

    (doc, _) = pubtator.read(fixtures_dir / "formats" / "composite.pubtator")
    with pytest.raises(InputError, match="PMID must be non-empty"):
        pubtator.write([replace(doc, doc_id="12|3")], tmp_path / "x.txt")
    assert not (tmp_path / "x.txt").exists()  # nothing half-written
