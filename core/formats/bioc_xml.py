"""BioC XML through the maintained `bioc` package (model, decoder, streaming writer).

Reading walks the file with lxml's `iterparse` and hands each complete `<document>` element to
`bioc.biocxml.loads`, instead of using `bioc.biocxml.BioCXMLDocumentReader` directly: that reader
looks one document ahead (so a malformed document would also swallow the good one before it) and
its errors carry no line numbers. This way every document is yielded as soon as it is complete,
a truncated or malformed file raises with the XML line, and memory stays flat. External entities
and DTDs are never loaded. The mapping to our data classes is core.formats.bioc_model.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import bioc
from bioc import biocxml
from lxml import etree

from core.documents import Document
from core.errors import InputError
from core.formats.bioc_model import from_bioc, to_bioc
from core.formats.files import atomic_output, require_nonempty
from core.formats.sniff import looks_like_hint

logger = logging.getLogger(__name__)

SOURCE = "Curalink"


def read(path: Path | str) -> Iterator[Document]:
    """Documents as each `</document>` is reached."""
    path = Path(path)
    require_nonempty(path)
    root: etree._Element | None = None
    documents = 0
    events = etree.iterparse(
        str(path), events=("start", "end"), resolve_entities=False, load_dtd=False, no_network=True
    )
    try:
        for event, element in events:
            if root is None:
                root = element
                if element.tag != "collection":
                    raise InputError(
                        path,
                        f"not BioC XML: the root element is <{element.tag}>, expected <collection>",
                        line=element.sourceline,
                    )
                continue
            if event != "end" or element.tag != "document" or element.getparent() is not root:
                continue
            yield _convert(element, path)
            documents += 1
            element.clear()
            while element.getprevious() is not None:
                del root[0]
    except etree.XMLSyntaxError as error:
        raise InputError(
            path, f"malformed XML: {error.msg}" + looks_like_hint(path, "bioc-xml"), line=error.lineno
        ) from None
    if documents == 0:
        raise InputError(path, "the BioC collection holds no <document>")


def _convert(element: etree._Element, path: Path) -> Document:
    line = element.sourceline
    doc_id = (element.findtext("id") or "").strip()
    item = f"document {doc_id}" if doc_id else "document"
    annotation_lines = {a.get("id", ""): a.sourceline for a in element.iter("annotation") if a.sourceline}
    wrapped = b"<collection>" + etree.tostring(element, encoding="utf-8", with_tail=False) + b"</collection>"
    try:
        collection = biocxml.loads(wrapped.decode("utf-8"))
    except (KeyError, ValueError, TypeError, AttributeError) as error:
        raise InputError(
            path, f"malformed BioC document: {type(error).__name__}: {error}", line=line, item=item
        ) from None
    return from_bioc(collection.documents[0], source=path, line=line, annotation_lines=annotation_lines)


def write(docs: Iterable[Document], path: Path | str) -> int:
    """A BioC collection written one document at a time; returns documents written."""
    path = Path(path)
    count = 0
    with atomic_output(path) as temporary:
        writer = biocxml.BioCXMLDocumentWriter(os.fspath(temporary), encoding="UTF-8")
        try:
            info = bioc.BioCCollection()
            info.source = SOURCE
            writer.write_collection_info(info)
            for document in docs:
                try:
                    writer.write_document(to_bioc(document))
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
