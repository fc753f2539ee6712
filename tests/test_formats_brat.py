"""brat standoff: the hand-written sample collection, round trips and bad input."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from core.documents import Document, Mention, Passage, Relation
from core.errors import InputError
from core.formats import brat, pubtator


@pytest.fixture
def brat_dir(fixtures_dir: Path) -> Path:
    return fixtures_dir / "formats" / "brat"


def test_sample_collection(brat_dir: Path) -> None:
    annotated, plain = brat.read(brat_dir)
    assert annotated.doc_id == "4000001" and plain.doc_id == "4000002"
    assert [(p.offset, p.text) for p in annotated.passages] == [
        (0, "Hereditary breast and ovarian cancer in a kindred."),
        (51, "Affected women carried BRCA1 mutations; one man had prostate cancer."),
    ]
    rows = [(m.mention_id, m.type, m.text, m.concept_id) for m in annotated.mentions]
    assert rows == [
        ("T1", "Disease", "Hereditary breast and ovarian cancer", "D061325|OMIM:604370"),
        ("T2", "Disease", "breast and ovarian cancer", "D001943"),
        ("T3", "Gene", "BRCA1", "NCBIGene:672"),
        ("T4", "Disease", "prostate cancer", "D011471"),
        ("T5", "Mutation", "mutations", ""),
    ]
    assert annotated.mentions[1].infons == {"fragments": "11 17;30 36", "source_text": "breast cancer"}
    assert annotated.mentions[3].infons == {"Negated": "true", "note": "only one affected man"}
    # relations name their arguments by id with a role each; the event E1 is kept (issue 10, item 9)
    assert annotated.relations == (
        Relation("Has_mutation", ("T3", "T5"), "R1", ("Arg1", "Arg2")),
        Relation("Mutation", ("T5", "T3"), "E1", ("Trigger", "Theme")),
    )
    assert annotated.relations[1].infons == {"brat_kind": "event"}
    assert plain.mentions == () and plain.passages[0].text == "No annotations in this one."
    assert not annotated.mention_text_mismatches()
    # a single .txt (or .ann) path reads that one document
    assert list(brat.read(brat_dir / "4000001.ann")) == [annotated]


def test_round_trip(brat_dir: Path, tmp_path: Path) -> None:
    docs = list(brat.read(brat_dir))
    out = tmp_path / "again"
    assert brat.write(docs, out) == 2
    again = list(brat.read(out))
    assert again == docs
    assert [[m.infons for m in d.mentions] for d in again] == [[m.infons for m in d.mentions] for d in docs]
    assert (out / "4000001.txt").read_text() == (brat_dir / "4000001.txt").read_text()
    written = (out / "4000001.ann").read_text().splitlines()
    assert "T2\tDisease 11 17;30 36\tbreast cancer" in written
    assert "N1\tReference T1 MESH:D061325\tHereditary breast and ovarian cancer" in written
    assert "N2\tReference T1 OMIM:604370\tHereditary breast and ovarian cancer" in written


def test_pubtator_document_through_brat(fixtures_dir: Path, tmp_path: Path) -> None:
    docs = list(pubtator.read(fixtures_dir / "formats" / "composite.pubtator"))
    brat.write(docs, tmp_path)
    text = (tmp_path / "1000001.txt").read_text()
    assert text.split("\n")[0] == docs[0].title  # title and abstract on their own lines
    ann = (tmp_path / "1000002.ann").read_text()
    assert "N1\tReference T1 MESH:D004829+MESH:D003294\t" in ann
    back = list(brat.read(tmp_path))
    for before, after in zip(docs, back):
        assert after.text == before.text
        assert [(p.offset, p.text) for p in after.passages] == [(p.offset, p.text) for p in before.passages]
        assert [(m.start, m.end, m.text, m.type, m.concept_id) for m in after.mentions] == [
            (m.start, m.end, m.text, m.type, m.concept_id) for m in before.mentions
        ]
    # PubTator's concept-level CID relations have no brat form: they are skipped, not garbled
    assert back[0].relations == ()


def _pair(folder: Path, text: str, ann: str | bytes, stem: str = "doc") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{stem}.txt").write_text(text)
    path = folder / f"{stem}.ann"
    path.write_bytes(ann if isinstance(ann, bytes) else ann.encode())
    return path


@pytest.mark.parametrize(
    ("ann", "line", "problem"),
    [
        ("T1\tDisease 0 5\tFever\nT2\tDisease 0 x\tFever\n", 2, "bad offsets '0 x'"),
        ("T1\tDisease 0 5\tFever\nT2\tDisease 5 0\tFever\n", 2, "start offset 5 is after end offset 0"),
        (
            "T1\tDisease 0 5\tFever\nT2\tDisease 0 4\tFever\n",
            2,
            "does not match the document text at offsets 0-4",
        ),
        ("T1\tDisease 0 5\tFever\nT1\tDisease 0 5\tFever\n", 2, "duplicate annotation id T1"),
        ("T1\tDisease 0 5\tFever\nT2\tDisease\tFever\n", 2, "a text-bound line is"),
        (
            "T1\tDisease 0 5\tFever\nN1\tReference T9 MESH:D005334\tFever\n",
            2,
            "unknown text-bound annotation 'T9'",
        ),
        ("T1\tDisease 0 5\tFever\nN1\tReference T1\tFever\n", 2, "a normalisation line is"),
        ("T1\tDisease 0 5\tFever\nR1\tCauses T1 T2\n", 2, "a relation line is"),
        ("T1\tDisease 0 5\tFever\nX1\tsomething\n", 2, "unknown brat annotation id 'X1'"),
        (b"T1\tDisease 0 5\tFever\n#1\tAnnotatorNotes T1\tcaf\xe9\n", 2, "not valid UTF-8"),
    ],
)
def test_bad_ann_lines(tmp_path: Path, ann: str | bytes, line: int, problem: str) -> None:
    path = _pair(tmp_path, "Fever and rash.\n", ann)
    with pytest.raises(InputError) as caught:
        list(brat.read(tmp_path))
    assert caught.value.source == str(path) and caught.value.line == line
    assert problem in str(caught.value)


def test_bad_collections(tmp_path: Path) -> None:
    (tmp_path / "orphan.ann").write_text("T1\tDisease 0 5\tFever\n")
    with pytest.raises(InputError, match="orphan.ann: brat annotation file without its .txt"):
        list(brat.read(tmp_path))
    (tmp_path / "orphan.ann").unlink()
    with pytest.raises(InputError, match="no .txt files"):
        list(brat.read(tmp_path))
    (tmp_path / "empty.txt").write_bytes(b"")
    with pytest.raises(InputError, match="empty.txt: the file is empty"):
        list(brat.read(tmp_path))
    (tmp_path / "empty.txt").write_bytes(b"Caf\xe9\n")
    with pytest.raises(InputError, match=r"empty.txt, line 1: not valid UTF-8"):
        list(brat.read(tmp_path))


def test_crlf_text_keeps_offsets(tmp_path: Path) -> None:
    _pair(tmp_path, "", "T1\tDisease 7 12\trash\n")
    (tmp_path / "doc.txt").write_bytes(b"Fever\r\nrash.\r\n")
    with pytest.raises(InputError, match="does not match"):
        list(brat.read(tmp_path))  # 'rash' is at 7-11: brat offsets count the \r
    (tmp_path / "doc.ann").write_text("T1\tDisease 7 11\trash\n")
    (doc,) = brat.read(tmp_path)
    assert [(p.offset, p.text) for p in doc.passages] == [(0, "Fever"), (7, "rash.")]
    assert doc.mentions[0].text == "rash"


def test_writer_duplicates_and_names(tmp_path: Path) -> None:
    doc = Document("d1", (Passage(0, "Fever."),), (Mention(0, 5, "Fever", "", "D005334"),))
    assert brat.write([doc, doc], tmp_path / "out") == 1  # an identical repeat is written once
    assert (tmp_path / "out" / "d1.ann").read_text() == (
        "T1\tEntity 0 5\tFever\nN1\tReference T1 MESH:D005334\tFever\n"
    )
    with pytest.raises(InputError, match="two different documents share this doc_id"):
        brat.write([doc, replace(doc, mentions=())], tmp_path / "out2")
    with pytest.raises(InputError, match="cannot be used as a file name"):
        brat.write([replace(doc, doc_id="../escape")], tmp_path / "out3")
