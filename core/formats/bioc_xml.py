"""BioC XML through the maintained `bioc` package (model, decoder, streaming writer).

Reading walks the file with lxml's `iterparse` and hands each complete `<document>` element to
`bioc.biocxml.loads`, instead of using `bioc.biocxml.BioCXMLDocumentReader` directly: that reader
looks one document ahead (so a malformed document would also swallow the good one before it) and
its errors carry no line numbers. This way every document is yielded as soon as it is complete,
a truncated or malformed file raises with the XML line, and memory stays flat (core.formats.xml_guard
bounds the elements and text of one document and between two). External entities
and DTDs are never loaded. The mapping to our data classes is core.formats.bioc_model (reading) and
core.formats.bioc_write (writing).

The collection's source, date, key, version and infons go to each document's `collection`, and the
writer gives the first document's back. BioC 2.0 (`<document id="1">`, `<passage offset="0">`:
ids and offsets as attributes, as in the `bioc` package's `everything_v2.xml`) is read by moving
those attributes into the 1.0 elements first; it is written in the 1.0 layout. With a
`FormatReport`, a document that cannot be read is recorded and skipped; malformed XML ends the
reading there (the documents before it are kept) and is recorded too.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Iterator
from itertools import chain
from pathlib import Path

import bioc
from bioc import biocxml
from lxml import etree

from core.documents import Document, Infons
from core.errors import InputError
from core.formats.bioc_model import from_bioc
from core.formats.bioc_write import check_collection, collection_header, to_bioc
from core.formats.files import atomic_output, open_bytes, require_nonempty
from core.formats.report import FormatReport, skip_or_raise
from core.formats.sniff import looks_like_hint
from core.formats.xml_guard import bounded_items, root_element
from core.limits import LayoutBudget, strict_integer

logger = logging.getLogger(__name__)

_COLLECTION_FIELDS = ("source", "date", "key", "version")
_ITEMS = frozenset({"document", "infon", *_COLLECTION_FIELDS})
_OTHER_XML = {
    "PubmedArticleSet": "PubMed citation XML: try --format pubmed-xml",
    "article": "JATS / PMC full-text XML: try --format jats",
    "pmc-articleset": "JATS / PMC full-text XML: try --format jats",
}


def read(path: Path | str, report: FormatReport | None = None) -> Iterator[Document]:
    """Documents as each `</document>` is reached."""
    path = Path(path)
    require_nonempty(path)
    collection: Infons = {}
    documents = 0
    layout = LayoutBudget()
    root, line = root_element(path)
    if root is not None and root != "collection":
        other = _OTHER_XML.get(root)
        raise InputError(
            path,
            f"not BioC XML: the root element is <{root}>, expected <collection>"
            + (f" ({other})" if other else ""),
            line=line,
        )
    with open_bytes(path) as stream:
        try:
            for element in bounded_items(stream, path, _ITEMS, "document"):
                if element.getparent() is None or element.getparent().getparent() is not None:
                    continue  # not a child of <collection>
                if element.tag != "document":
                    _collection_part(element, collection)
                    continue
                try:
                    document = _convert(element, path, report, collection, layout)
                except InputError as error:
                    skip_or_raise(report, error)
                    document = None
                if document is not None:
                    yield document
                    documents += 1
        except etree.XMLSyntaxError as error:
            line, problem = xml_error(error)
            skip_or_raise(
                report,
                InputError(
                    path,
                    f"malformed XML: {problem}"
                    + looks_like_hint(path, "bioc-xml")
                    + (" (the rest of the file could not be read)" if report is not None else ""),
                    line=line,
                ),
            )
            return
    if documents == 0 and (report is None or not report.problem_count):
        raise InputError(path, "the BioC collection holds no <document>")


def xml_error(error: etree.XMLSyntaxError) -> tuple[int | None, str]:
    """(line, problem) of a parse error, the problem worded for a curator. (Entities are expanded while
    parsing, so an undefined one is reported on its own line, not as a later "no element found".)"""
    line = error.lineno if error.lineno and error.lineno > 0 else None
    problem = str(error.msg or error).strip()
    suffix = f", line {error.lineno}, column "
    if suffix in problem:  # lxml repeats the position in the message
        problem = problem[: problem.index(suffix)]
    if problem.startswith("Excessive depth in document"):  # lxml's own bound; the option it names is off
        problem = "elements nested more than 256 levels deep, refused (no real file nests so deep)"
    elif "XML_PARSE_HUGE" in problem or "huge_tree" in problem:  # names a parser option the user cannot set
        problem = (
            f"a text node or name longer than lxml's 10,000,000-byte bound, refused (no real file comes close: "
            f"a damaged or hostile file?) ({problem.split(', try XML_PARSE_HUGE')[0].split(' try ')[0]})"
        )
    elif "amplification" in problem:
        problem = f"entity expansion too large, refused ({problem})"
    elif "not defined" in problem and "Entity" in problem:
        problem += (
            " (entities declared outside the file, in an external DTD or as SYSTEM files, are never loaded)"
        )
    return line, problem


def _collection_part(element: etree._Element, collection: Infons) -> None:
    if element.tag in _COLLECTION_FIELDS:
        collection[element.tag] = element.text or ""
    elif element.tag == "infon":
        collection.setdefault("infons", {})[element.get("key", "")] = element.text or ""


def _upgrade_v2(element: etree._Element) -> None:
    """BioC 2.0 -> 1.0: `id` and `offset` attributes become the child elements 1.0 has."""
    for node in chain([element], element.iter("passage", "sentence")):
        name = "id" if node.tag == "document" else "offset"
        value = node.attrib.pop(name, None)
        if value is not None and node.find(name) is None:
            child = etree.Element(name)
            child.text = value
            node.insert(0, child)


def _convert(
    element: etree._Element, path: Path, report: FormatReport | None, collection: Infons, layout: LayoutBudget
) -> Document:
    line = element.sourceline
    _upgrade_v2(element)
    doc_id = (element.findtext("id") or "").strip()
    item = f"document {doc_id}" if doc_id else "document"
    _check_offsets(element, path, item)
    annotation_lines = {a.get("id", ""): a.sourceline for a in element.iter("annotation") if a.sourceline}
    wrapped = b"<collection>" + etree.tostring(element, encoding="utf-8", with_tail=False) + b"</collection>"
    try:
        parsed = biocxml.loads(wrapped.decode("utf-8"))
    except (KeyError, ValueError, TypeError, AttributeError) as error:
        raise InputError(
            path, f"malformed BioC document: {type(error).__name__}: {error}", line=line, item=item
        ) from None
    return from_bioc(
        parsed.documents[0],
        source=path,
        line=line,
        annotation_lines=annotation_lines,
        report=report,
        collection={k: dict(v) if isinstance(v, dict) else v for k, v in collection.items()},
        xml=True,
        layout=layout,
    )


def _check_offsets(element: etree._Element, path: Path, item: str) -> None:
    """Offsets and lengths are whole numbers (bioc's decoder would say "invalid literal for int()")."""
    for node in element.iter("offset"):
        strict_integer(
            node.text, f"<{node.getparent().tag}> offset", source=path, line=node.sourceline, item=item
        )
    for node in element.iter("location"):
        for name in ("offset", "length"):
            if node.get(name) is not None:
                strict_integer(
                    node.get(name), f"location {name}", source=path, line=node.sourceline, item=item
                )


def write(docs: Iterable[Document], path: Path | str, report: FormatReport | None = None) -> int:
    """A BioC collection written one document at a time; returns documents written. The collection
    header is the first document's collection (Curalink's own when it has none)."""
    path = Path(path)
    count = 0
    documents = iter(docs)
    first = next(documents, None)
    header = collection_header(first)
    with atomic_output(path) as temporary:
        writer = biocxml.BioCXMLDocumentWriter(os.fspath(temporary), encoding="UTF-8")
        try:
            info = bioc.BioCCollection()
            info.source, info.date, info.key = header["source"], header["date"], header["key"]
            info.infons = {k: v if isinstance(v, str) else json.dumps(v) for k, v in header["infons"].items()}
            writer.write_collection_info(info)
            for document in chain([first] if first is not None else [], documents):
                check_collection(document, header, report)
                try:
                    writer.write_document(to_bioc(document, report, xml=True))
                except ValueError as error:  # lxml refuses control characters and NUL bytes
                    raise InputError(
                        path, f"cannot write as XML: {error}", item=f"document {document.doc_id}"
                    ) from None
                count += 1
        finally:
            writer.close()
    if count == 0:
        logger.warning("%s: no documents written; the collection is empty", path)
    return count
