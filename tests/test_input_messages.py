"""Issue 24, items 9 (readers) and 10: what an import or export says is what is wrong. A DOCTYPE past
the sniffed bytes and UTF-16 XML are read by their root element; CR-only line ends, an NFD mention
column, empty, UTF-16 and binary files each say what they are; a brat export refuses a doc_id too long
for a file name in one line; a title-only PubTator document is written back without an abstract line."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from core.errors import InputError
from core.formats import guess_format, read_corpus, write_corpus
from core.kb import load_kb
from core.limits import CR_ONLY

CITATION = (
    "<PubmedArticle><MedlineCitation><PMID>7</PMID><Article><ArticleTitle>Breast cancer</ArticleTitle>"
    "</Article></MedlineCitation></PubmedArticle>"
)


def _write(path: Path, data: str | bytes) -> Path:
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


# --- XML: the root element is read by lxml, not from the first 8 KB ------------------------------------


def test_a_doctype_past_8_kb_is_read_not_taken_for_bioc(tmp_path: Path) -> None:
    entities = "".join(f'<!ENTITY e{n} "entity number {n}">\n' for n in range(400))  # ~12 KB
    path = _write(
        tmp_path / "big_doctype.xml",
        f'<?xml version="1.0"?>\n<!DOCTYPE PubmedArticleSet [\n{entities}]>\n<PubmedArticleSet>{CITATION}'
        "</PubmedArticleSet>\n",
    )
    assert path.stat().st_size > 8192
    assert guess_format(path) == "pubmed-xml"
    assert [d.doc_id for d in read_corpus(path, "pubmed-xml")] == ["7"]
    assert [d.doc_id for d in read_corpus(path)] == ["7"]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_valid_utf16_xml_is_read(tmp_path: Path, encoding: str) -> None:
    declared = "UTF-16"
    text = f'<?xml version="1.0" encoding="{declared}"?>\n<PubmedArticleSet>{CITATION}</PubmedArticleSet>\n'
    data = text.encode(encoding)
    if encoding != "utf-16":  # lxml needs the byte-order mark or the declaration to tell the order
        data = ("\ufeff" + text).encode(encoding)
    path = _write(tmp_path / "utf16.xml", data)
    assert guess_format(path) == "pubmed-xml"
    (document,) = read_corpus(path, "pubmed-xml")
    assert document.text == "Breast cancer"


def test_jats_with_a_long_doctype_is_read(tmp_path: Path) -> None:
    comment = "<!-- " + "x" * 9000 + " -->\n"
    path = _write(
        tmp_path / "a.nxml",
        f'<?xml version="1.0"?>\n{comment}<article><front><article-meta><article-id pub-id-type="pmc">'
        "PMC9</article-id><title-group><article-title>A title</article-title></title-group>"
        "</article-meta></front></article>\n",
    )
    assert guess_format(path) == "jats"
    assert [d.doc_id for d in read_corpus(path, "jats")] == ["PMC9"]


def test_nesting_past_lxml_depth_is_worded(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "deep.xml",
        f"<PubmedArticleSet>{'<x>' * 300}{'</x>' * 300}</PubmedArticleSet>\n",
    )
    with pytest.raises(
        InputError, match=r"deep\.xml, line 1: malformed XML: elements nested more than 256"
    ) as raised:
        list(read_corpus(path, "pubmed-xml"))
    assert "XML_PARSE_HUGE" not in str(raised.value)


# --- line ends, normalisation, files that are not text ----------------------------------------------------


def test_cr_only_line_ends_are_named_not_called_cut_short(tmp_path: Path) -> None:
    pubtator = "1|t|Breast cancer\r1|a|A study.\r1\t0\t13\tBreast cancer\tDisease\tD001943\r\r"
    path = _write(tmp_path / "mac.pubtator", pubtator)
    with pytest.raises(InputError) as raised:
        list(read_corpus(path, "pubtator"))
    assert str(raised.value) == f"{path}, line 1: {CR_ONLY}"
    medic = _write(tmp_path / "medic.txt", "MESH:D000001|||Disease one|\rMESH:D000002|||Disease two|\r")
    with pytest.raises(InputError, match="lines end in CR alone"):
        list(load_kb(medic, "medic"))
    line = '{"doc_id": "%s", "passages": [{"offset": 0, "text": "x"}]}\r'
    jsonl = _write(tmp_path / "c.jsonl", line % 1 + line % 2)
    with pytest.raises(InputError, match="lines end in CR alone"):
        list(read_corpus(jsonl, "jsonl"))


def test_an_nfd_mention_column_against_nfc_text_shows_the_code_points(tmp_path: Path) -> None:
    title = unicodedata.normalize("NFC", "Ménière disease")
    column = unicodedata.normalize("NFD", title)
    assert column != title and len(title) == 15
    path = _write(tmp_path / "nfd.pubtator", f"1|t|{title}\n1\t0\t15\t{column}\tDisease\tD008575\n\n")
    with pytest.raises(InputError) as raised:
        list(read_corpus(path, "pubtator"))
    message = str(raised.value)
    assert (
        "they differ at character 2: U+0065 U+0301 U+006E in the column, U+00E9 U+006E U+0069 in the text"
        in message
    )
    assert "the same text in Unicode NFC form" in message


def test_an_ascii_mismatch_keeps_the_plain_message(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.pubtator", "1|t|Breast cancer\n1\t0\t6\tBreath\tDisease\tD001943\n\n")
    with pytest.raises(InputError) as raised:
        list(read_corpus(path, "pubtator"))
    assert str(raised.value).endswith("does not match the document text at offsets 0-6: 'Breast'")


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"", r"the file is empty \(0 bytes\)"),
        ("1|t|Breast cancer\n".encode("utf-16"), "the file is UTF-16 text, not UTF-8"),
        (bytes(range(256)) * 4, "a NUL byte: this is a binary file"),
    ],
)
def test_a_file_of_no_format_says_what_it_is(tmp_path: Path, data: bytes, problem: str) -> None:
    path = _write(tmp_path / "shard.dat", data)
    with pytest.raises(InputError, match=problem) as raised:
        list(read_corpus(path))
    assert "cannot tell the corpus format" not in str(raised.value)


# --- item 9: exports -----------------------------------------------------------------------------------


def test_a_brat_export_of_a_doc_id_too_long_for_a_file_name_is_one_line(tmp_path: Path) -> None:
    doc_id = "é" * 150  # 150 characters (within the id bound), 300 bytes as UTF-8
    source = _write(tmp_path / "c.pubtator", f"{doc_id}|t|Breast cancer\n{doc_id}|a|A study.\n\n")
    documents = list(read_corpus(source, "pubtator"))
    with pytest.raises(InputError) as raised:
        write_corpus(documents, tmp_path / "out", "brat")
    assert "doc_id is too long for a file name: 300 bytes in UTF-8" in str(raised.value)
    assert not list((tmp_path / "out").iterdir())  # nothing half-written
    fits = "é" * 110  # 220 bytes: written and read back
    written = list(read_corpus(_write(tmp_path / "d.pubtator", f"{fits}|t|Breast cancer\n\n"), "pubtator"))
    assert write_corpus(written, tmp_path / "fits", "brat") == 1
    assert [d.doc_id for d in read_corpus(tmp_path / "fits", "brat")] == [fits]


@pytest.mark.parametrize(
    "text",
    [
        "1|t|A title only\n1\t2\t7\ttitle\tDisease\tD1\n\n2|t|Another\n2|a|With an abstract.\n",
        "1|t|An empty abstract line\n1|a|\n",
        "1|t|Title only, alone\n",
    ],
)
def test_a_pubtator_document_is_written_back_with_the_lines_it_had(tmp_path: Path, text: str) -> None:
    source = _write(tmp_path / "in.pubtator", text)
    write_corpus(read_corpus(source, "pubtator"), tmp_path / "out.pubtator", "pubtator")
    assert (tmp_path / "out.pubtator").read_text(encoding="utf-8") == text
