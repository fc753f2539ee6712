"""NCBI E-utilities over HTTP (stdlib urllib): the one place Curalink talks to a server, and only when a
curator asks it to (File ▸ Add PubMed abstracts, `curalink corpus fetch-pubmed`).

NCBI's usage policy allows 3 requests a second without an API key and 10 with one; more gets HTTP 429.
A `RateLimiter` spaces the requests to that rate, a 429 or a 5xx answer is retried with exponential
backoff (or after the server's Retry-After), and a network that cannot be reached ends the work at
once with one line that says so: nothing is half-fetched behind the curator's back. The base URL is
configurable so the tests point it at a local server that plays recorded efetch answers.
"""

from __future__ import annotations

import http.client
import ipaddress
import logging
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence

from core.errors import CuralinkError
from core.limits import read_bounded
from core.progress import NEVER_CANCELLED, CancelToken

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/"
RATE_WITHOUT_KEY = 3.0  # requests per second NCBI allows without an API key
RATE_WITH_KEY = 10.0  # ... and with one
TOOL = "curalink"  # NCBI asks every program to name itself (the `tool` parameter)
RETRIED = frozenset({429, 500, 502, 503, 504})
_SLICE = 0.05  # seconds between two looks at the cancel flag while waiting


EMPTY_ARTICLE_SET = b'<?xml version="1.0" ?>\n<PubmedArticleSet></PubmedArticleSet>\n'


class EutilsError(CuralinkError):
    """E-utilities could not answer: offline, refused, or an error status after the retries."""

    def __init__(self, message: str, status: int | None = None, detail: str = ""):
        super().__init__(message)
        self.status = status
        self.detail = detail


def wait(seconds: float, cancel: CancelToken, sleep: Callable[[float], None] = time.sleep) -> None:
    """Sleep `seconds` in short slices, so a cancel is seen within a twentieth of a second."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        cancel.raise_if_cancelled()
        sleep(min(left, _SLICE))
    cancel.raise_if_cancelled()


class RateLimiter:
    """At most `per_second` requests a second: each request starts no sooner than 1/per_second after the
    one before (thread-safe; a waiting caller still sees its cancel flag)."""

    def __init__(self, per_second: float):
        if per_second <= 0:
            raise ValueError(f"rate must be positive, not {per_second}")
        self.interval = 1.0 / per_second
        self._next = 0.0
        self._lock = threading.Lock()

    def acquire(self, cancel: CancelToken = NEVER_CANCELLED) -> None:
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            wait(start - now, cancel)


def _local(url: str) -> bool:
    host = urllib.parse.urlsplit(url).hostname or ""
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class EutilsClient:
    """Requests to one E-utilities server, spaced to NCBI's rate and retried when the server is busy."""

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        *,
        api_key: str = "",
        email: str = "",
        retries: int = 4,
        backoff: float = 1.0,
        timeout: float = 60.0,
        rate: float | None = None,
    ):
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise CuralinkError(
                f"{base_url}: not an E-utilities address (give an http:// or https:// URL with a host, "
                f"such as {DEFAULT_BASE_URL})"
            )
        self.base_url = base_url.rstrip("/") + "/"
        self.api_key = api_key.strip()
        self.email = email.strip()
        self.retries = retries
        self.backoff = backoff
        self.timeout = timeout
        self.rate = rate or (RATE_WITH_KEY if self.api_key else RATE_WITHOUT_KEY)
        self.limiter = RateLimiter(self.rate)
        # A proxy set in the environment would take even a request to this machine elsewhere.
        handlers = [urllib.request.ProxyHandler({})] if _local(self.base_url) else []
        self._opener = urllib.request.build_opener(*handlers)

    def efetch(self, pmids: Sequence[str], cancel: CancelToken = NEVER_CANCELLED) -> bytes:
        """The PubMed XML (`<PubmedArticleSet>`) of these PMIDs, as efetch returns it."""
        try:
            return self.post("efetch.fcgi", {"db": "pubmed", "id": ",".join(pmids), "retmode": "xml"}, cancel)
        except EutilsError as error:
            # efetch refuses a list with no PMID it knows with HTTP 400 "ID list is empty! Possibly it has no
            # correct IDs." (an unknown PMID among known ones is just left out): none of them exists.
            if error.status == 400 and "ID list is empty" in error.detail:
                return EMPTY_ARTICLE_SET
            raise

    def post(self, utility: str, fields: dict[str, str], cancel: CancelToken = NEVER_CANCELLED) -> bytes:
        """POST to one utility (NCBI's advice for long id lists), retrying 429 and 5xx answers."""
        url = self.base_url + utility
        fields = {**fields, "tool": TOOL}
        if self.email:
            fields["email"] = self.email
        if self.api_key:
            fields["api_key"] = self.api_key
        body = urllib.parse.urlencode(fields).encode("ascii")
        for attempt in range(self.retries + 1):
            cancel.raise_if_cancelled()
            self.limiter.acquire(cancel)
            request = urllib.request.Request(
                url, data=body, headers={"User-Agent": f"{TOOL} (Python urllib)"}
            )
            try:
                with self._opener.open(request, timeout=self.timeout) as response:
                    return bytes(read_bounded(response, url, "answer-bytes", "the answer"))
            except urllib.error.HTTPError as error:
                detail = _error_text(error)
                if not _transient(error.code, detail) or attempt == self.retries:
                    raise EutilsError(
                        f"{url}: HTTP {error.code} {error.reason}"
                        + (f" ({detail})" if detail else "")
                        + (f" after {attempt + 1} tries" if attempt else ""),
                        status=error.code,
                        detail=detail,
                    ) from None
                delay = _retry_after(error) or self.backoff * 2**attempt
            except (TimeoutError, ConnectionError, http.client.HTTPException, urllib.error.URLError) as error:
                if isinstance(error, urllib.error.URLError) and not _timed_out(error):
                    reason = getattr(error.reason, "strerror", None) or str(error.reason)
                    raise EutilsError(
                        f"cannot reach NCBI E-utilities at {self.base_url} ({reason}): is this computer "
                        "offline? Nothing was fetched or stored; try again when the network is back"
                    ) from None
                if attempt == self.retries:  # a timeout or a dropped connection, every time
                    what = f"no answer within {self.timeout:g} s" if _timed_out(error) else repr(error)
                    raise EutilsError(f"{url}: {what}, {attempt + 1} tries") from None
                delay = self.backoff * 2**attempt
            log.warning("%s: busy (try %d of %d), again in %.1f s", url, attempt + 1, self.retries + 1, delay)
            wait(delay, cancel)
        raise AssertionError("unreachable")


def _transient(status: int, detail: str) -> bool:
    """Worth another try: busy (429), a server error, or NCBI's relayed backend failure (a 400 whose
    page names its proxy)."""
    return status in RETRIED or (
        status == 400 and ("proxy_stream" in detail or "Failed to connect" in detail)
    )


def _timed_out(error: OSError) -> bool:
    """A timeout, raised as itself (while reading) or wrapped in a URLError (while connecting)."""
    return isinstance(error, TimeoutError) or isinstance(getattr(error, "reason", None), TimeoutError)


def _retry_after(error: urllib.error.HTTPError) -> float | None:
    """The server's Retry-After in seconds (only the delta-seconds form; capped at a minute)."""
    value = (error.headers.get("Retry-After") or "").strip() if error.headers else ""
    return min(60.0, float(value)) if value.isdigit() else None


def _error_text(error: urllib.error.HTTPError) -> str:
    """An error page's text, markup dropped and short (NCBI's `<ERROR>` says what was wrong)."""
    try:
        text = error.read(2000).decode("utf-8", "replace")
    except OSError:
        return ""
    return " ".join(re.sub(r"<[^>]*>", " ", text).split())[:300]
