"""What the literature XML readers (PubMed citations, JATS full text) share: the root element check,
text of mixed-content elements, passages laid out one after another, and parse errors as one line.

Parsing options and bounds are core.formats.xml_guard's: no DTD or external entity is
ever loaded, no network, no huge trees; only entities declared in the file itself are expanded and
libxml2 refuses an expansion that amplifies the input (a "billion laughs" file).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from lxml import etree

from core.documents import Infons, Passage
from core.errors import InputError
from core.formats.bioc_xml import xml_error
from core.formats.sniff import looks_like_hint
from core.formats.xml_guard import root_element

__all__ = ["check_root", "flat_text", "lay_out", "syntax_error"]


def check_root(path: Path, expected: tuple[str, ...], fmt: str) -> str:
    """The root element's name, read by lxml (a DOCTYPE of any length, UTF-16); an InputError when it
    is not one of `expected`. Checked before streaming: an element-filtered iterparse of another kind
    of XML would read the whole file and report nothing."""
    root, line = root_element(path)  # a damaged gzip stream is its own one-line error
    if root in expected:
        return root
    if root is None and line is not None:  # broken before the root: the reader's parse says how
        return ""
    found = f"the root element is <{root}>" if root else "no XML root element"
    raise InputError(
        path, f"not {fmt}: {found}, expected <{'> or <'.join(expected)}>" + looks_like_hint(path, fmt)
    )


def flat_text(element: etree._Element | None, skip: frozenset[str] = frozenset()) -> str:
    """The text of an element with inline markup (`<i>`, `<sub>`, `<xref>`) flattened and every run of
    whitespace (pretty-printing indentation included) made one space; subtrees tagged `skip` left out."""
    if element is None:
        return ""
    if not len(element):  # no markup inside: most names and titles
        return " ".join((element.text or "").split())
    if not skip:
        return " ".join("".join(element.itertext()).split())
    pieces: list[str] = []
    _collect(element, skip, pieces)
    return " ".join("".join(pieces).split())


def _collect(element: etree._Element, skip: frozenset[str], pieces: list[str]) -> None:
    if element.text and isinstance(element.tag, str):
        pieces.append(element.text)
    for child in element:
        if isinstance(child.tag, str) and child.tag not in skip:
            _collect(child, skip, pieces)
        if child.tail:
            pieces.append(child.tail)


def lay_out(pieces: Iterable[tuple[str, str, Infons]]) -> tuple[Passage, ...]:
    """Passages (text, kind, infons) one space apart from offset 0, as PubTator lays a title and its
    abstract out; empty texts are left out."""
    passages: list[Passage] = []
    offset = 0
    for text, kind, infons in pieces:
        if text:
            passages.append(Passage(offset, text, kind, infons))
            offset += len(text) + 1
    return tuple(passages)


def syntax_error(path: Path, error: etree.XMLSyntaxError, fmt: str, lenient: bool) -> InputError:
    """A parse error as one line naming the file and the XML line."""
    line, problem = xml_error(error)
    return InputError(
        path,
        f"malformed XML: {problem}"
        + looks_like_hint(path, fmt)
        + (" (the rest of the file could not be read)" if lenient else ""),
        line=line,
    )
