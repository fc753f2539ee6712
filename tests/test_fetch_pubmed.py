"""Abstracts by PMID (issue 23 item 14): NCBI efetch through urllib against a local server that plays
recorded citations back (tests/efetch_server.py); nothing here reaches the network."""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

import pytest

from app.cli import EXIT_ERROR, main
from core.errors import Cancelled, InputError
from core.formats import read_corpus
from core.jobs.io.eutils import EutilsClient, EutilsError
from core.jobs.io.fetch_pubmed import InvalidPmids, fetch_pubmed, parse_pmids, read_pmid_file
from core.progress import CancelToken
from core.store import Project

FIXTURE = Path(__file__).parent / "fixtures" / "pubmed" / "efetch_sample.xml"
SAMPLE = ["91000001", "91000002", "91000003", "91000004", "91000005"]


@pytest.fixture
def project(tmp_path: Path):
    with Project.create(tmp_path / "proj") as project:
        yield project


def _fixture_documents() -> dict:
    """The sample citations as the PubMed reader reads the committed file itself (not over HTTP)."""
    return {doc.doc_id: doc for doc in read_corpus(FIXTURE, "pubmed-xml")}


def _stored(project) -> dict:
    return {doc.doc_id: doc for doc in project.documents.documents()}


def _client(server, **options) -> EutilsClient:
    return EutilsClient(server.url, backoff=options.pop("backoff", 0.01), **options)


def test_pmid_lists_report_every_bad_item_with_its_line(tmp_path: Path) -> None:
    given = parse_pmids("91000001, 91000002\n  abc 0 91000001\n# a comment 77x\n12345678901;007\n", "typed")
    assert given.pmids == ["91000001", "91000002", "7"]
    assert [(p.line, p.item) for p in given.problems] == [(2, "'abc'"), (2, "'0'"), (4, "'12345678901'")]
    with pytest.raises(InvalidPmids) as raised:
        given.require_valid("typed")
    message = str(raised.value)
    assert "3 items are not PMIDs" in message and "typed, line 2, 'abc'" in message
    assert "typed, line 4, '12345678901'" in message
    listed = tmp_path / "pmids.txt"
    listed.write_text("91000004\n\n91000005 # two\n", encoding="utf-8")
    assert read_pmid_file(listed).pmids == ["91000004", "91000005"]
    with pytest.raises(InputError, match="missing.txt: file not found"):
        read_pmid_file(tmp_path / "missing.txt")
    with pytest.raises(InputError, match="no PMID given"):
        parse_pmids("  \n# nothing\n").require_valid("typed")


def test_fetched_citations_are_stored_as_the_pubmed_reader_reads_them(project, efetch_server) -> None:
    asked = [*SAMPLE, "91000099"]  # the last one PubMed does not know
    seen = []
    summary = fetch_pubmed(
        project, asked, _client(efetch_server), batch_size=2, progress=lambda *a: seen.append(a)
    )
    assert [r.ids for r in efetch_server.requests] == [asked[0:2], asked[2:4], asked[4:6]]
    assert {r.fields["db"] for r in efetch_server.requests} == {"pubmed"}
    assert all(r.fields["tool"] == "curalink" and "api_key" not in r.fields for r in efetch_server.requests)
    expected = _fixture_documents()
    stored = _stored(project)
    assert sorted(stored) == sorted(expected) == SAMPLE
    for pmid in SAMPLE:
        assert stored[pmid].text == expected[pmid].text
        assert [p.offset for p in stored[pmid].passages] == [p.offset for p in expected[pmid].passages]
    assert (summary.added, summary.returned, summary.requests) == (5, 5, 3)
    assert summary.missing == ["91000099"]
    assert "5 PubMed abstracts added" in summary.lines()[0]
    assert any("91000099" in line and "not found in PubMed" in line for line in summary.lines())
    assert seen and seen[-1][2]  # progress was reported

    again = fetch_pubmed(project, ["91000001", "91000002"], _client(efetch_server))
    assert again.already_stored == ["91000001", "91000002"] and again.requests == 0
    assert len(efetch_server.requests) == 3  # nothing asked for twice


def test_requests_keep_to_ncbis_rate_with_and_without_an_api_key(project, efetch_server) -> None:
    """Arrival times at the server, over a run of requests: a request's own handling can be late by tens
    of milliseconds on a loaded machine, hence the 0.15 s tolerance on the span (a limiter at the other
    rate, or none, misses by far more)."""
    fetch_pubmed(project, SAMPLE[:4], _client(efetch_server), batch_size=1)
    times = [r.at for r in efetch_server.requests]
    assert len(times) == 4
    assert times[-1] - times[0] >= 3 / 3 - 0.15  # 3 a second without a key: 4 requests span >= 1 s

    efetch_server.requests.clear()
    keyed = _client(efetch_server, api_key="secret")
    fetch_pubmed(project, SAMPLE[4:], keyed, on_duplicate="update")
    for pmid in SAMPLE:
        keyed.efetch([pmid])
    times = [r.at for r in efetch_server.requests]
    assert len(times) == 6
    assert 5 / 10 - 0.15 <= times[-1] - times[0] < 1.1  # 10 a second with one (0.5 s), not 3 (1.67 s)
    assert {r.fields["api_key"] for r in efetch_server.requests} == {"secret"}


def test_busy_answers_are_retried_with_backoff(project, efetch_server) -> None:
    efetch_server.fail_next = [429, 503]
    summary = fetch_pubmed(project, SAMPLE[:2], _client(efetch_server, backoff=0.2))
    assert summary.added == 2 and len(efetch_server.requests) == 3
    first, second, third = (r.at for r in efetch_server.requests)
    assert second - first >= 0.2 - 0.02 and third - second >= 0.4 - 0.02  # the wait doubles

    efetch_server.fail_next = [500] * 5
    with pytest.raises(EutilsError, match=r"HTTP 500 .* after 3 tries"):
        fetch_pubmed(project, SAMPLE[2:], _client(efetch_server, retries=2))
    assert sorted(_stored(project)) == SAMPLE[:2]  # nothing of the failed fetch stored


def test_the_servers_retry_after_is_waited_for(project, efetch_server) -> None:
    efetch_server.fail_next, efetch_server.retry_after = [429], "1"
    assert fetch_pubmed(project, SAMPLE[:1], _client(efetch_server, backoff=0.01)).added == 1
    first, second = (r.at for r in efetch_server.requests)
    assert second - first >= 1.0 - 0.02  # its 1 s, not the client's 0.01 s backoff


def test_a_failure_in_a_later_batch_stores_nothing(project, efetch_server) -> None:
    original = efetch_server.answer

    def fail_second(fields):
        if len(efetch_server.requests) == 1:
            efetch_server.fail_next = [400]
        return original(fields)

    efetch_server.answer = fail_second
    with pytest.raises(EutilsError, match="HTTP 400"):
        fetch_pubmed(project, SAMPLE, _client(efetch_server), batch_size=2)
    assert _stored(project) == {}


def test_offline_is_one_clear_error_and_stores_nothing(project) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(EutilsError) as raised:
        fetch_pubmed(project, SAMPLE, EutilsClient(f"http://127.0.0.1:{port}/eutils/"))
    message = str(raised.value)
    assert "cannot reach NCBI E-utilities" in message and "offline" in message and "\n" not in message
    assert _stored(project) == {}


def test_cancel_stops_between_requests_and_stores_nothing(project, efetch_server) -> None:
    cancel = CancelToken()

    def progress(done, total, message):
        if done == 1 and "fetching" in message:
            cancel.cancel()

    with pytest.raises(Cancelled):
        fetch_pubmed(project, SAMPLE, _client(efetch_server), batch_size=1, progress=progress, cancel=cancel)
    assert len(efetch_server.requests) == 1 and _stored(project) == {}


def test_a_waiting_request_sees_the_cancel(efetch_server) -> None:
    client = _client(efetch_server, rate=0.1)  # one request every 10 s
    client.efetch(SAMPLE[:1])
    cancel = CancelToken()
    threading.Timer(0.05, cancel.cancel).start()
    started = time.monotonic()
    with pytest.raises(Cancelled):
        client.efetch(SAMPLE[1:2], cancel)  # waits ~10 s for its turn; the cancel comes first
    assert time.monotonic() - started < 5  # seen while waiting, not after the wait
    assert len(efetch_server.requests) == 1


def test_the_real_citation_is_fetched_as_the_reader_reads_the_file(
    project, efetch_server, shared_data
) -> None:
    real = shared_data / "realworld" / "pubmed" / "pubmed-29768149.xml"
    if not real.is_file():
        pytest.skip(f"{real} not found")
    summary = fetch_pubmed(project, ["29768149"], _client(efetch_server))
    assert summary.added == 1
    (expected,) = read_corpus(real, "pubmed-xml")
    stored = _stored(project)["29768149"]
    assert stored.text == expected.text
    assert stored.text.startswith("Inhaled Combined Budesonide-Formoterol as Needed in Mild Asthma.")


def test_cli_fetch_pubmed(tmp_path: Path, efetch_server, capsys, monkeypatch) -> None:
    path = tmp_path / "proj"
    assert main(["init", str(path)]) == 0
    listed = tmp_path / "pmids.txt"
    listed.write_text("91000003\n91000004\n", encoding="utf-8")
    monkeypatch.setenv("NCBI_API_KEY", "from-env")
    url = ["--eutils-url", efetch_server.url]
    args = ["-p", str(path), "corpus", "fetch-pubmed"]
    assert main([*args, "91000001", "91000002", "91000077", "--file", str(listed), *url]) == 0
    out = capsys.readouterr().out
    assert "4 PubMed abstracts added" in out and "91000077" in out
    assert {r.fields["api_key"] for r in efetch_server.requests} == {"from-env"}
    with Project.open(path) as project:
        assert sorted(project.documents.document_ids()) == SAMPLE[:4]

    bad = tmp_path / "bad.txt"
    bad.write_text("91000005\nPMC123\n", encoding="utf-8")
    assert main([*args, "x1", "--file", str(bad), *url]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert (
        "2 items are not PMIDs" in err
        and "the command line, argument 1, 'x1'" in err
        and "bad.txt, line 2, 'PMC123'" in err
    )
    assert main([*args, *url]) == EXIT_ERROR
    assert "give PMIDs" in capsys.readouterr().err
    with Project.open(path) as project:
        assert sorted(project.documents.document_ids()) == SAMPLE[:4]


def test_cli_takes_the_api_key_saved_in_the_desk(tmp_path: Path, efetch_server, capsys, monkeypatch) -> None:
    from PySide6.QtCore import QSettings

    from app.gui.settings import AppSettings

    native, user = QSettings.Format.NativeFormat, QSettings.Scope.UserScope
    before = Path(QSettings("Curalink", "Curalink").fileName()).parents[1]
    QSettings.setPath(native, user, str(tmp_path / "config"))  # the desk's settings file, for this test
    try:
        AppSettings().ncbi_api_key = "saved-in-desk"
        if "NCBI_API_KEY" in os.environ:  # unset for this test only
            monkeypatch.delenv("NCBI_API_KEY")
        path = tmp_path / "proj"
        assert main(["init", str(path)]) == 0
        args = ["-p", str(path), "corpus", "fetch-pubmed", "--eutils-url", efetch_server.url]
        assert main([*args, "91000001"]) == 0
        assert main([*args, "91000002", "--api-key", "given"]) == 0
    finally:
        QSettings.setPath(native, user, str(before))
    assert [r.fields.get("api_key") for r in efetch_server.requests] == ["saved-in-desk", "given"]
