"""A local stand-in for NCBI efetch: plays recorded citations back over real HTTP on 127.0.0.1, so the
PubMed fetch is tested through urllib, the rate limiter and the retries without reaching the network.

Each request's `id` list is answered with the known citations in the order asked for (unknown PMIDs are
left out, as efetch does); `fail_next` holds HTTP statuses to answer with first (a 429 or 503 burst).
Every request is recorded with its arrival time (time.monotonic) and its form fields."""

from __future__ import annotations

import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from lxml import etree

HEADER = (
    b'<?xml version="1.0" ?>\n<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January '
    b'2024//EN" "https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_240101.dtd">\n'
)


def citations_in(path: Path) -> dict[str, bytes]:
    """PMID -> the serialized `<PubmedArticle>` of a PubMed XML file (no DTD loaded, no network)."""
    parser = etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False)
    root = etree.parse(str(path), parser).getroot()
    return {
        article.findtext("MedlineCitation/PMID").strip(): etree.tostring(article)
        for article in root.iter("PubmedArticle")
    }


@dataclass
class Recorded:
    at: float
    fields: dict[str, str]

    @property
    def ids(self) -> list[str]:
        return self.fields.get("id", "").split(",")


@dataclass
class EfetchServer:
    citations: dict[str, bytes]
    fail_next: list[int] = field(default_factory=list)
    retry_after: str = ""  # the Retry-After header sent with a failure
    requests: list[Recorded] = field(default_factory=list)
    url: str = ""

    def answer(self, fields: dict[str, str]) -> tuple[int, bytes]:
        self.requests.append(Recorded(time.monotonic(), fields))
        if self.fail_next:
            status = self.fail_next.pop(0)
            return status, b'{"error":"API rate limit exceeded"}' if status == 429 else b"busy"
        ids = [i for i in fields.get("id", "").split(",") if i in self.citations]
        body = b"\n".join(self.citations[i] for i in ids)
        return 200, HEADER + b"<PubmedArticleSet>\n" + body + b"\n</PubmedArticleSet>\n"


def serve(citations: dict[str, bytes]):
    """Start the server in a thread; returns (server state, stop function)."""
    state = EfetchServer(citations)

    class Handler(BaseHTTPRequestHandler):
        def _reply(self, query: str) -> None:
            fields = {k: v[-1] for k, v in urllib.parse.parse_qs(query).items()}
            status, body = state.answer(fields)
            self.send_response(status)
            if status != 200 and state.retry_after:
                self.send_header("Retry-After", state.retry_after)
            self.send_header("Content-Type", "text/xml" if status == 200 else "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            self._reply(urllib.parse.urlsplit(self.path).query)

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            self._reply(self.rfile.read(length).decode("ascii"))

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/entrez/eutils/"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def stop() -> None:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

    return state, stop
