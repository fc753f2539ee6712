"""Streaming an XML corpus one item at a time (a PubMed citation, a JATS article, a BioC document) with
what it may make lxml build bounded, so a small file cannot allocate gigabytes.

lxml's own limits hold with huge_tree off: a text node of at most 10 MB, at most 256 levels of
nesting, no entity expansion that amplifies the input. What they do not bound is how many elements
and how much text there are, and `iterparse` builds every element it is given, about 125 bytes
each: 512 million empty elements in a 2 MB gzip file, between two citations or inside one, are
3.5 GB and then a MemoryError. So the bytes lxml reads are metered on their way in (a count of '<'
and of bytes per chunk, nothing per element): at most `MAX_XML_TAGS` tags and `MAX_XML_BYTES`
bytes inside one item, and as many in the stretch between two items (counted afresh at each item's
start and end; lxml reads 32 KB at a time, so a stretch's count can include the start of the next).
Past either, reading stops with one InputError naming the file, the line and where
it is. Comments and processing instructions are not built at all; each item is freed once its
reader has it, with what came before it, so memory stays at about one item. Parsing stays in C:
lxml filters the events to the items' tags.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from lxml import etree

import core.limits as limits
from core.errors import InputError
from core.formats.files import open_bytes

# Entities declared in the file's own DTD (`<!ENTITY nbsp "&#160;">`) are expanded; external ones
# (SYSTEM / PUBLIC: a file or URL) never are, and no DTD is fetched. libxml2 refuses expansion that
# amplifies the input too much (a "billion laughs" file) without huge_tree.
PARSER_OPTIONS = {
    "resolve_entities": "internal",
    "load_dtd": False,
    "no_network": True,
    "huge_tree": False,
    "remove_comments": True,
    "remove_pis": True,
}


class Meter:
    """The file-like object lxml reads: counts bytes, tags and lines, and refuses a stretch (an item,
    or the gap between two) that passes the bounds."""

    def __init__(self, stream: BinaryIO, path: Path, what: str):
        self.stream = stream
        self.path = path
        self.what = what
        # read at each file, not at import: tests lower them
        self.max_tags, self.max_bytes = limits.limit("xml-tags"), limits.limit("xml-bytes")
        self.lines = 0  # line breaks read so far
        self.tags = 0  # '<' in the current stretch
        self.bytes = 0  # bytes in the current stretch
        self.item_line: int | None = None  # the current item's first line, None between items

    def read(self, size: int = -1) -> bytes:
        chunk = self.stream.read(size)
        tags, length = chunk.count(b"<"), len(chunk)
        if self.tags + tags > self.max_tags:
            self._refuse(chunk, _nth(chunk, b"<", self.max_tags - self.tags + 1), "xml-tags", self.max_tags)
        if self.bytes + length > self.max_bytes:
            self._refuse(chunk, self.max_bytes - self.bytes, "xml-bytes", self.max_bytes)
        self.tags += tags
        self.bytes += length
        self.lines += chunk.count(b"\n")
        return chunk

    def stretch(self, item_line: int | None) -> None:
        """A new stretch begins: an item (starting at `item_line`) or the gap after one (None)."""
        self.item_line = item_line
        self.tags = self.bytes = 0

    def _refuse(self, chunk: bytes, position: int, name: str, bound: int) -> None:
        line = self.lines + chunk.count(b"\n", 0, max(0, position)) + 1
        where = (
            f"one {self.what} (from line {self.item_line})"
            if self.item_line is not None
            else f"the stretch between two {self.what}s"
        )
        unit = "tags" if name == "xml-tags" else "bytes"
        raise InputError(
            self.path,
            f"{where} holds more than {bound:,} {unit}, refused: no real file comes close (a damaged or "
            f"hostile file?){limits.raise_hint(name)}",
            line=line,
        )


def _nth(data: bytes, needle: bytes, n: int) -> int:
    position = -1
    for _ in range(n):
        position = data.find(needle, position + 1)
    return position


def bounded_items(stream: BinaryIO, path: Path, items: frozenset[str], what: str) -> Iterator[etree._Element]:
    """Each item as it ends: the outermost element whose tag is in `items`. An item is cleared, with
    what came before it, when the caller asks for the next one. `what` names items in errors
    ("citation", "article"). lxml's XMLSyntaxError passes through for the caller to word."""
    meter = Meter(stream, path, what)
    events = etree.iterparse(meter, events=("start", "end"), tag=items, **PARSER_OPTIONS)
    open_items = 0
    for event, element in events:
        if event == "start":
            if not open_items:
                meter.stretch(element.sourceline)
            open_items += 1
            continue
        open_items -= 1
        if not open_items:
            yield element
            _release(element)
            meter.stretch(None)


def _release(element: etree._Element) -> None:
    """Free a read item and everything before it, so memory does not grow with the file."""
    element.clear(keep_tail=False)
    parent = element.getparent()
    if parent is not None:
        while element.getprevious() is not None:
            del parent[0]


def root_element(path: Path) -> tuple[str | None, int | None]:
    """(the root element's tag, its line), read by lxml from the file itself: a DOCTYPE of any length
    before it and any encoding lxml knows (UTF-16 included); (None, line) when the file ends or breaks
    before a root element."""
    with open_bytes(path) as stream:
        meter = Meter(stream, path, "root element")
        meter.max_tags = 1 << 62  # a chunk of a file's elements comes with its root: bound only its bytes
        try:
            for _, element in etree.iterparse(meter, events=("start",), **PARSER_OPTIONS):
                return str(element.tag), element.sourceline
        except etree.XMLSyntaxError as error:
            return None, error.lineno
    return None, None
