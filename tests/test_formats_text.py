"""Plain text: paragraphs become passages at their offsets in the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.documents import Document, Passage
from core.errors import InputError
from core.formats import text


def test_paragraphs_at_file_offsets(fixtures_dir: Path) -> None:
    path = fixtures_dir / "formats" / "abstract.txt"
    (doc,) = text.read(path)
    raw = path.read_text()
    assert doc.doc_id == "abstract"
    assert [p.text for p in doc.passages] == [
        "Familial Mediterranean fever in children",
        "Familial Mediterranean fever (FMF) is an autoinflammatory disease.\nAttacks of fever and serositis recur.",
        "Colchicine prevents attacks and amyloidosis.",
    ]
    for passage in doc.passages:
        assert raw[passage.offset : passage.end] == passage.text
        assert doc.text[passage.offset : passage.end] == passage.text
    assert doc.title == "Familial Mediterranean fever in children"


def test_folder_and_crlf(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_bytes(b"Second file.\r\n\r\nWith two paragraphs.\r\n")
    (tmp_path / "a.txt").write_text("First file.")
    (tmp_path / "ignored.ann").write_text("")
    first, second = text.read(tmp_path)
    assert (first.doc_id, second.doc_id) == ("a", "b")
    assert [(p.offset, p.text) for p in second.passages] == [
        (0, "Second file."),
        (16, "With two paragraphs."),
    ]


def test_write_one_file_or_a_folder(tmp_path: Path) -> None:
    doc = Document("d1", (Passage(0, "Title", "title"), Passage(6, "Abstract text.", "abstract")))
    assert text.write([doc], tmp_path / "one.txt") == 1
    assert (tmp_path / "one.txt").read_text() == "Title\n\nAbstract text.\n"
    (back,) = text.read(tmp_path / "one.txt")
    assert back.doc_id == "one" and [p.text for p in back.passages] == ["Title", "Abstract text."]
    with pytest.raises(InputError, match="a .txt path holds one document"):
        text.write([doc, doc], tmp_path / "two.txt")
    assert text.write([doc, Document("d2", (Passage(0, "Other."),))], tmp_path / "folder") == 2
    assert sorted(p.name for p in (tmp_path / "folder").iterdir()) == ["d1.txt", "d2.txt"]


def test_errors(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_bytes(b"")
    with pytest.raises(InputError, match="empty.txt: the file is empty"):
        list(text.read(tmp_path / "empty.txt"))
    (tmp_path / "blank.txt").write_text(" \n\n \n")
    with pytest.raises(InputError, match="only whitespace"):
        list(text.read(tmp_path / "blank.txt"))
    (tmp_path / "latin1.txt").write_bytes(b"First line.\nSecond line with caf\xe9.\n")
    with pytest.raises(InputError, match=r"latin1.txt, line 2: not valid UTF-8: byte 0xe9 at column 21"):
        list(text.read(tmp_path / "latin1.txt"))
    empty_folder = tmp_path / "nothing-here"
    empty_folder.mkdir()
    with pytest.raises(InputError, match="no .txt files"):
        list(text.read(empty_folder))


def test_a_title_line_over_an_abstract_is_a_title_and_an_abstract(tmp_path: Path) -> None:
    """'title⏎abstract' (an abstract pasted from PubMed) is a title and an abstract, not one long title
    (issue 31); a hard-wrapped paragraph, whose first line is as long as any, stays one passage."""
    title = "Complement factor H deficiency in two siblings"
    abstract = (
        "We describe two siblings with recurrent infections and low complement levels. Sequencing found "
        "a homozygous mutation in CFH, and both improved on plasma therapy."
    )
    (tmp_path / "pasted.txt").write_text(f"{title}\r\n{abstract}\n", encoding="utf-8")
    wrapped = (
        "Familial Mediterranean fever is an autoinflammatory disease of recurrent\n"
        "attacks of fever and serositis; colchicine prevents attacks and\n"
        "amyloidosis.\n"
    )
    (tmp_path / "wrapped.txt").write_text(wrapped, encoding="utf-8")
    pasted, hard_wrapped = text.read(tmp_path)
    raw = (tmp_path / "pasted.txt").read_bytes().decode("utf-8")
    assert [(p.kind, p.text) for p in pasted.passages] == [("title", title), ("abstract", abstract)]
    assert pasted.title == title
    for passage in pasted.passages:
        assert raw[passage.offset : passage.end] == passage.text
    assert [p.text for p in hard_wrapped.passages] == [wrapped.strip()]
