"""Issue 33, item 6: messages say what happened, and the small holes are mended: a NUL byte in PubTator
text is refused on import (it made every later BioC XML export of the project fail), full-width and
Arabic-Indic digits are not PMIDs, a never-learnt synonym is not "removed" (with an undo step), lxml's
"try XML_PARSE_HUGE" and an E-utilities address that is not http(s) ("offline?") are worded for a
curator, and history shows a long label cut."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli import main
from app.cli.curation_commands import SHOWN_LABEL, shown
from core.errors import CuralinkError, InputError
from core.formats import FormatReport, read_corpus, write_corpus
from core.jobs.io.eutils import EutilsClient
from core.jobs.io.fetch_pubmed import parse_pmids


def test_a_nul_byte_in_pubtator_text_is_refused_and_the_rest_exports(tmp_path: Path) -> None:
    path = tmp_path / "c.pubtator"
    path.write_bytes(b"1|t|Breast\x00 cancer\n1|a|A study.\n\n2|t|Colon cancer\n2|a|Another \x00one.\n\n3|t|ok\n3|a|x\n\n")
    with pytest.raises(InputError, match="line 1: a NUL byte"):
        list(read_corpus(path, "pubtator"))
    report = FormatReport()
    kept = list(read_corpus(path, "pubtator", report=report))
    assert [d.doc_id for d in kept] == ["3"] and report.problem_count == 2
    assert write_corpus(kept, tmp_path / "out.xml", "bioc-xml") == 1  # what failed for the whole project


def test_pmids_are_ascii_digits_only() -> None:
    found = parse_pmids("123 ١٢٣ １２３ 0045")
    assert found.pmids == ["123", "45"]
    assert len(found.problems) == 2 and all("not a PMID" in str(p) for p in found.problems)


def test_removing_a_synonym_nothing_learnt_is_refused_without_a_step(demo, capsys) -> None:
    from core.jobs.curation.learnt import remove_learnt
    from core.jobs.curation.operations import history_of

    concept = next(iter(demo.kb.knowledge_base().concepts))
    with pytest.raises(CuralinkError, match="is not a learnt synonym of .* nothing to remove"):
        remove_learnt(demo, concept, "a string no curator ever taught", curator="ann")
    assert not history_of(demo, "ann").labels, "no undo step for what did not happen"


def test_an_eutils_address_that_is_not_http_says_so() -> None:
    with pytest.raises(CuralinkError, match="not an E-utilities address") as refused:
        EutilsClient("file:///etc/")
    assert "offline" not in str(refused.value)


def test_a_huge_text_node_is_worded_without_the_parser_option(tmp_path: Path) -> None:
    path = tmp_path / "huge.xml"
    path.write_bytes(
        b'<?xml version="1.0"?>\n<collection><source>x</source><date/><key/><document><id>1</id><passage>'
        b"<offset>0</offset><text>" + b"a" * 10_500_000 + b"</text></passage></document></collection>\n"
    )
    with pytest.raises(InputError) as refused:
        list(read_corpus(path, "bioc-xml"))
    assert "XML_PARSE_HUGE" not in str(refused.value) and "10,000,000-byte bound" in str(refused.value)


def test_history_shows_a_long_label_cut(capsys) -> None:
    label = "accept “" + "x" * 120_000 + "” → D000001"
    line = shown(label)
    assert len(line) < SHOWN_LABEL + 80 and line.startswith(label[:SHOWN_LABEL]) and "120,0" in line
    assert shown("short") == "short"
    assert main(["history", "--help"]) == 0


def test_an_endless_eutils_answer_stops_at_its_limit(monkeypatch) -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Endless(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            self.send_response(200)
            self.end_headers()
            try:
                while True:
                    self.wfile.write(b"<PubmedArticleSet>" + b" " * 65536)
            except OSError:
                pass

        def log_message(self, *args) -> None:
            pass

    monkeypatch.setenv("CURALINK_LIMIT_ANSWER_BYTES", str(1 << 20))
    server = ThreadingHTTPServer(("127.0.0.1", 0), Endless)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        client = EutilsClient(f"http://127.0.0.1:{server.server_port}/", retries=0)
        with pytest.raises(InputError, match="passes the limit answer-bytes=1,048,576") as refused:
            client.efetch(["1"])
        assert "\n" not in str(refused.value)
    finally:
        server.shutdown()


def test_an_answer_of_too_many_tags_is_refused_before_lxml_builds_it(monkeypatch) -> None:
    from core.jobs.io.fetch_pubmed import _returned_pmids

    monkeypatch.setenv("CURALINK_LIMIT_XML_TAGS", "1000")
    with pytest.raises(CuralinkError, match="xml-tags=1,000"):
        _returned_pmids(b"<PubmedArticleSet>" + b"<a/>" * 5000 + b"</PubmedArticleSet>", "batch 1")
