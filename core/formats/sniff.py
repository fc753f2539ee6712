"""Guessing a corpus format from a path: extension, sibling files and the first bytes.

Used to catch a wrong `--format` early (a BioC XML file imported as PubTator should fail with
"looks like bioc-xml", not with an obscure parse error on line 1) and to pick a format when the
user gives none.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from pathlib import Path

from core.errors import InputError
from core.formats.xml_guard import root_element

SNIFF_BYTES = 8192

_PUBTATOR_TITLE = re.compile(r"^[^\t|\s]+\|[ta]\|")
_PUBTATOR_ANNOTATION = re.compile(r"^[^\t]+\t\d+\t\d+\t[^\t]*\t[^\t]*(\t[^\t]*){0,2}$")
# XML declarations, processing instructions, comments and a DOCTYPE (with its internal subset) before
# the root element; then the root element's name.
_XML_PROLOG = re.compile(rb"\s*(<\?.*?\?>|<!--.*?-->|<!DOCTYPE(\[.*?\]|[^>\[])*>)", re.DOTALL)
_XML_ROOT = re.compile(rb"\s*<([A-Za-z_][\w.:-]*)")
# Root elements that are not BioC: PubMed citations, JATS full text (one article, or efetch's set).
XML_ROOTS = {"PubmedArticleSet": "pubmed-xml", "article": "jats", "pmc-articleset": "jats"}


def sniff_bytes(head: bytes) -> str | None:
    """The format the first bytes of a file look like, or None for empty or binary data."""
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    stripped = head.lstrip()
    if not stripped:
        return None
    if stripped.startswith(b"<"):
        return XML_ROOTS.get(xml_root(stripped) or "", "bioc-xml")
    text = stripped.decode("utf-8", errors="ignore")
    if stripped[:1] in (b"{", b"["):
        return _sniff_json(text)
    first_line = text.splitlines()[0] if text else ""
    if _PUBTATOR_TITLE.match(first_line) or _PUBTATOR_ANNOTATION.match(first_line):
        return "pubtator"
    if b"\x00" in head:
        return None
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        if error.reason != "unexpected end of data":  # more than a character cut at the sniff boundary
            return None
    return "text"


def xml_root(head: bytes) -> str | None:
    """The root element's name (prefix kept) from a file's first bytes, None when it is not there."""
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    position = 0
    while match := _XML_PROLOG.match(head, position):
        position = match.end()
    root = _XML_ROOT.match(head, position)
    return root.group(1).decode("ascii") if root else None


def _sniff_json(text: str) -> str | None:
    if text.startswith("["):
        return "bioc-json"
    first_line = text.split("\n", 1)[0]
    try:
        obj = json.loads(first_line)
    except (json.JSONDecodeError, RecursionError):  # nested too deeply: the reader says so, with the line
        obj = None
    if isinstance(obj, dict):
        if "doc_id" in obj:
            return "jsonl"
        if any(key in obj for key in ("bioctype", "documents", "passages", "PubTator3")):
            return "bioc-json"
        return None
    # a pretty-printed object, or a first line longer than the sniffed bytes: judge by its keys
    if '"doc_id"' in text:
        return "jsonl"
    if any(key in text for key in ('"documents"', '"bioctype"', '"passages"', '"PubTator3"')):
        return "bioc-json"
    return None


def guess_format(path: Path | str) -> str | None:
    """The likely format of a file or folder, or None when nothing fits."""
    path = Path(path)
    if path.is_dir():
        if any(path.glob("*.nxml")) or any(path.glob("*.nxml.gz")):
            return "jats"
        if any(path.glob("*.ann")):
            return "brat"
        if any(path.glob("*.txt")):
            return "text"
        return None
    if not path.is_file():
        return None
    if path.suffix.lower() == ".ann":
        return "brat"
    head = read_head(path)
    sniffed = sniff_bytes(head)
    if (sniffed == "bioc-xml" and xml_root(head) is None) or _utf16_markup(head):
        sniffed = _parsed_root_format(path) or sniffed
    if sniffed == "text" and path.with_suffix(".ann").is_file():
        return "brat"
    return sniffed


def _utf16_markup(head: bytes) -> bool:
    """True when the file starts like UTF-16 XML (a byte-order mark or NUL-interleaved, then '<')."""
    for encoding in ("utf-16", "utf-16-le", "utf-16-be"):
        if head.startswith((b"\xff\xfe", b"\xfe\xff")) != (encoding == "utf-16"):
            continue
        text = head[: len(head) // 2 * 2].decode(encoding, errors="ignore").lstrip("\ufeff \t\r\n")
        if text.startswith("<"):
            return True
    return False


def _parsed_root_format(path: Path) -> str | None:
    """The XML format by the root element lxml reads from the whole file (a DOCTYPE past the sniffed
    bytes, UTF-16), None when it finds none."""
    try:
        root, _ = root_element(path)
    except InputError:
        return None
    if root is None:
        return None
    return XML_ROOTS.get(root.rpartition("}")[2] if root.startswith("{") else root, "bioc-xml")


def read_head(path: Path) -> bytes:
    """The first SNIFF_BYTES of the file, decompressed when it is gzip (a damaged stream gives b"")."""
    with path.open("rb") as handle:
        head = handle.read(SNIFF_BYTES)
    if not head.startswith(b"\x1f\x8b"):
        return head
    try:
        with gzip.open(path, "rb") as handle:
            return handle.read(SNIFF_BYTES)
    except (OSError, EOFError, zlib.error):
        return b""


def looks_like_hint(path: Path, expected: str) -> str:
    """' (it looks like X: try --format X)' when the file sniffs as another format, else ''."""
    try:
        guessed = guess_format(path)
    except OSError:
        return ""
    if guessed and guessed != expected and guessed != "text":
        return f" (the file looks like {guessed}: try --format {guessed})"
    return ""
