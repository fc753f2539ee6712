"""Issue 24, items 4 and 5: a small compressed file cannot make a reader hold gigabytes. A line longer
than core.limits.MAX_LINE_BYTES, and too many elements or too much text in (or between) the items of
an XML file, are refused with one line naming the file and the line, in bounded memory.

Each input is gzip, kilobytes on disk. Most tests lower the bound (1 MB lines) to stay fast; one test
per bound runs the real default (a 40 MB line against the 16 MB bound; 1,000,001 empty elements).
"""

from __future__ import annotations

import gzip
import tracemalloc
from pathlib import Path

import pytest

import core.limits
from core.errors import InputError
from core.formats import FormatReport, read_corpus
from core.kb import load_kb
from core.limits import MAX_LINE_BYTES

BOUND = 1 << 20  # the lowered line bound of most tests
LONG = 8 * BOUND  # the old readers hold such a line whole (and import it)


@pytest.fixture
def low_bound(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(core.limits, "MAX_LINE_BYTES", BOUND)
    return BOUND


def _gzip(path: Path, *parts: bytes) -> Path:
    with gzip.open(path, "wb", compresslevel=6) as handle:
        for part in parts:
            handle.write(part)
    return path


def _long(prefix: bytes, suffix: bytes = b"\n", length: int = LONG) -> bytes:
    return prefix + b"a" * length + suffix


def _traced_peak_mb(function) -> tuple[float, BaseException | None]:
    """Peak Python-heap megabytes while `function` runs, and what it raised."""
    tracemalloc.start()
    raised: BaseException | None = None
    try:
        function()
    except Exception as error:  # noqa: BLE001 - returned to the test to judge
        raised = error
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak / 1e6, raised


# --- item 5: line readers bound a line ----------------------------------------------------------------

PUBTATOR_GOOD = b"1|t|Breast cancer\n1|a|A study.\n1\t0\t13\tBreast cancer\tDisease\tD001943\n\n"


def _corpus_cases(tmp_path: Path) -> dict[str, tuple[Path, str, int]]:
    """format -> (file, format, line of the long line)."""
    brat = tmp_path / "brat"
    brat.mkdir()
    (brat / "d1.txt").write_text("Breast cancer\n", encoding="utf-8")
    _gzip(brat / "d1.ann", b"T1\tDisease 0 6\tBreast\n", _long(b"#1\tAnnotatorNotes T1\t"))
    return {
        "pubtator": (_gzip(tmp_path / "c.pubtator.gz", PUBTATOR_GOOD, _long(b"2|t|")), "pubtator", 5),
        "jsonl": (
            _gzip(
                tmp_path / "c.jsonl.gz",
                b'{"doc_id": "1", "passages": [{"offset": 0, "text": "x"}]}\n',
                _long(b'{"doc_id": "2", "passages": [{"offset": 0, "text": "', b'"}]}\n'),
            ),
            "jsonl",
            2,
        ),
        "brat": (brat, "brat", 2),
    }


def test_the_default_bound_refuses_a_40_mb_line_without_holding_it(tmp_path: Path) -> None:
    path = _gzip(tmp_path / "c.pubtator.gz", PUBTATOR_GOOD, _long(b"2|t|", length=MAX_LINE_BYTES * 5 // 2))
    assert path.stat().st_size < 200_000
    peak, raised = _traced_peak_mb(lambda: list(read_corpus(path, "pubtator")))
    assert isinstance(raised, InputError), raised
    assert str(raised).startswith(f"{path}, line 5: the line is longer than 16,777,216 bytes, refused")
    assert peak < 2.5 * MAX_LINE_BYTES / 1e6, f"held {peak:.0f} MB"  # a read buffer or two, not the line


@pytest.mark.parametrize("name", ["pubtator", "jsonl", "brat"])
def test_a_corpus_line_over_the_bound_is_refused_with_file_and_line(
    tmp_path: Path, name: str, low_bound: int
) -> None:
    path, fmt, line = _corpus_cases(tmp_path)[name]
    assert sum(p.stat().st_size for p in ([path] if path.is_file() else path.iterdir())) < 50_000
    peak, raised = _traced_peak_mb(lambda: list(read_corpus(path, fmt)))
    assert isinstance(raised, InputError), raised
    assert f", line {line}: the line is longer than {low_bound:,} bytes" in str(raised)
    assert "\n" not in str(raised)
    assert peak < 3.5 * low_bound / 1e6, f"held {peak:.1f} MB"  # read buffers, not the 8 MB line


def test_with_a_report_the_long_line_is_reported_and_the_rest_kept(tmp_path: Path, low_bound: int) -> None:
    third = b"3|t|Colon cancer\n3|a|Another study.\n3\t0\t12\tColon cancer\tDisease\tD003110\n"
    path = _gzip(tmp_path / "c.pubtator.gz", PUBTATOR_GOOD, _long(b"2|t|"), b"\n", third)
    report = FormatReport()
    documents = list(read_corpus(path, "pubtator", report=report))
    assert [d.doc_id for d in documents] == ["1", "3"]
    assert report.problem_count == 1 and "line 5: the line is longer than" in str(report.problems[0])


MEDIC_ROW = b"MESH:D000001|OMIM:100001||Disease number 1|Disease synonym 1\n"


@pytest.mark.parametrize(
    ("fmt", "good", "long"),
    [
        ("medic", MEDIC_ROW * 3, _long(b"MESH:D000009|OMIM:1||Disease|")),
        ("ctd", b"Disease A\tMESH:D000001\t\t\t\t\t\t\n" * 3, _long(b"Disease B\tMESH:D000002\t\t\t\t\t\t")),
        ("tsv", b"D000001\tDisease A\n" * 3, _long(b"D000002\t")),
        (
            "umls-rrf",
            b"C0000001|ENG|P|L0000001|PF|S0000001|Y|A00000001||M0000001|D000001|MSH|MH|D000001|name|0|N|256|\n"
            * 3,
            _long(
                b"C0000002|ENG|P|L0000001|PF|S0000001|Y|A00000002||M0000001|D000001|MSH|MH|D000001|",
                b"|0|N|256|\n",
            ),
        ),
    ],
)
def test_a_vocabulary_line_over_the_bound_is_refused(
    tmp_path: Path, fmt: str, good: bytes, long: bytes, low_bound: int
) -> None:
    name = "MRCONSO.RRF" if fmt == "umls-rrf" else f"vocabulary.{fmt}"
    path = _gzip(tmp_path / name, good, long)
    assert path.stat().st_size < 50_000
    peak, raised = _traced_peak_mb(lambda: list(load_kb(path, fmt)))
    assert isinstance(raised, InputError), raised
    assert f"{name}, line 4: the line is longer than {low_bound:,} bytes" in str(raised)
    assert peak < 3.5 * low_bound / 1e6, f"held {peak:.1f} MB"  # read buffers, not the 8 MB line


def test_a_line_of_exactly_the_bound_is_read(tmp_path: Path, low_bound: int) -> None:
    title = b"a" * (low_bound - len(b"1|t|"))
    path = _gzip(tmp_path / "c.pubtator.gz", b"1|t|" + title + b"\n\n")
    (document,) = read_corpus(path, "pubtator")
    assert len(document.text) == len(title)


# --- item 4: XML element and text bombs -----------------------------------------------------------------


def _citation(pmid: int, inside: bytes = b"") -> bytes:
    return (
        (
            f"<PubmedArticle><MedlineCitation><PMID>{pmid}</PMID><Article><ArticleTitle>Title {pmid}"
            "</ArticleTitle><Abstract><AbstractText>An abstract.</AbstractText>"
        ).encode()
        + inside
        + b"</Abstract></Article></MedlineCitation></PubmedArticle>\n"
    )


def _pubmed(path: Path, *parts: bytes) -> Path:
    return _gzip(path, b'<?xml version="1.0"?>\n<PubmedArticleSet>\n', *parts, b"</PubmedArticleSet>\n")


def _jats(path: Path, body: bytes) -> Path:
    return _gzip(
        path,
        b'<?xml version="1.0"?>\n<article><front><article-meta><article-id pub-id-type="pmc">PMC1</article-id>'
        b"<title-group><article-title>A title</article-title></title-group></article-meta></front>\n<body>",
        body,
        b"</body></article>\n",
    )


def _bioc(path: Path, *parts: bytes) -> Path:
    document = (
        b"<document><id>1</id><passage><offset>0</offset><text>Some text.</text></passage></document>\n"
    )
    return _gzip(
        path, b'<?xml version="1.0"?>\n<collection><source>x</source>\n', document, *parts, b"</collection>\n"
    )


def test_a_million_and_one_empty_elements_between_citations_are_refused(tmp_path: Path) -> None:
    """The default bound, exercised (2,020,000 tags): the old reader builds them all and imports both
    citations."""
    assert core.limits.MAX_XML_TAGS == 2_000_000
    # 2,020,000 tags: lxml reads 32 KB ahead, so the first few thousand count with the first citation
    path = _pubmed(tmp_path / "bomb.xml.gz", _citation(1), b"<x></x>" * 1_010_000, _citation(2))
    assert path.stat().st_size < 100_000
    with pytest.raises(InputError) as raised:
        list(read_corpus(path, "pubmed-xml"))
    assert str(raised.value) == (
        f"{path}, line 4: the stretch between two citations holds more than 2,000,000 tags, refused: "
        "no real file comes close (a damaged or hostile file?); if it is real, raise the limit with "
        "--limit xml-tags=N"
    )


def test_more_bytes_than_the_bound_inside_one_citation_are_refused(tmp_path: Path) -> None:
    """The default byte bound, exercised: eight 9 MB abstract sections (lxml allows 10 MB a node)."""
    section = b"<AbstractText>" + b"a" * 9_000_000 + b"</AbstractText>\n"
    path = _pubmed(tmp_path / "text.xml.gz", _citation(1, section * 8))
    assert path.stat().st_size < 400_000
    with pytest.raises(
        InputError,
        match=r"text\.xml\.gz, line 10: one citation \(from line 3\) holds more than 67,108,864 bytes, refused",
    ):
        list(read_corpus(path, "pubmed-xml"))


@pytest.fixture
def low_xml(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(core.limits, "MAX_XML_TAGS", 20_000)  # lxml reads 32 KB (up to 8,000 tags) at a time
    monkeypatch.setattr(core.limits, "MAX_XML_BYTES", 1_000_000)
    return 20_000


@pytest.mark.parametrize(
    ("fmt", "make", "where"),
    [
        (
            "pubmed-xml",
            lambda p, junk: _pubmed(p, _citation(1), junk, _citation(2)),
            "the stretch between two citations",
        ),
        ("pubmed-xml", lambda p, junk: _pubmed(p, _citation(1, junk)), "one citation (from line 3)"),
        ("jats", lambda p, junk: _jats(p, b"<p>text</p>" + junk), "one article (from line 2)"),
        ("bioc-xml", lambda p, junk: _bioc(p, junk), "the stretch between two documents"),
        (
            "bioc-xml",
            lambda p, junk: _bioc(p, b"<document><id>2</id>" + junk + b"</document>"),
            "one document (from line 4)",
        ),
    ],
)
def test_elements_past_the_bound_are_refused_wherever_they_are(
    tmp_path: Path, low_xml: int, fmt: str, make, where: str
) -> None:
    path = make(tmp_path / "bomb.xml.gz", b"<x/>" * 200_000)  # 10 times the lowered bound
    with pytest.raises(InputError) as raised:
        list(read_corpus(path, fmt))
    assert f"{where} holds more than 20,000 tags, refused" in str(raised.value), raised.value
    assert "\n" not in str(raised.value)
    report = FormatReport()
    with pytest.raises(InputError):  # a bomb ends the reading with a report too: nothing after it is read
        list(read_corpus(path, fmt, report=report))


def test_text_past_the_bound_between_items_is_refused(tmp_path: Path, low_xml: int) -> None:
    junk = b"<x>" + b"a" * 600_000 + b"</x>"
    path = _pubmed(tmp_path / "text.xml.gz", _citation(1), junk * 3, _citation(2))
    with pytest.raises(InputError, match="the stretch between two citations holds more than 1,000,000 bytes"):
        list(read_corpus(path, "pubmed-xml"))


def test_within_the_bounds_every_item_is_read_and_the_count_starts_afresh(
    tmp_path: Path, low_xml: int
) -> None:
    """About 12,000 tags in each citation and between each two, 5 times the bound in all: under the bound
    of 20,000 each time."""
    padding = b"<x/>" * 12_000
    parts = [part for n in range(1, 6) for part in (_citation(n, padding), padding)]
    path = _pubmed(tmp_path / "ok.xml.gz", *parts)
    assert [d.doc_id for d in read_corpus(path, "pubmed-xml")] == ["1", "2", "3", "4", "5"]
    document = b"<document><id>%d</id><passage><offset>0</offset><text>Text.</text></passage></document>\n"
    bioc = _bioc(tmp_path / "ok.bioc.xml.gz", *(part for n in (2, 3) for part in (padding, document % n)))
    assert [d.doc_id for d in read_corpus(bioc, "bioc-xml")] == ["1", "2", "3"]
