"""BioC JSON through the `bioc` package (`bioc.biocjson`): decoder, encoder, data model.

Read: a collection object (`{"source": .., "documents": [..]}`, the PubTator Central / BioC
JSON layout), a bare array of documents, a single document object, or JSON lines of documents
(what `bioc.biocjson.iterwriter` writes). Keys that `bioc`'s decoder insists on but many producers
leave out (`infons`, `relations`, `annotations`, `sentences`) default to empty. A collection is
one JSON value, so it is parsed whole (the stdlib has no streaming parser); documents are still
converted and yielded one at a time. Write: one collection object, streamed one document per line.
The mapping to our data classes is core.formats.bioc_model.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from bioc import biocjson

from core.documents import Document
from core.errors import InputError
from core.formats.bioc_model import from_bioc, to_bioc
from core.formats.files import atomic_text_writer, read_text
from core.formats.sniff import looks_like_hint

logger = logging.getLogger(__name__)

SOURCE = "Curalink"


def read(path: Path | str) -> Iterator[Document]:
    """Documents from any of the layouts above."""
    path = Path(path)
    text = read_text(path)
    if not text.strip():
        raise InputError(path, "the file holds only whitespace: no documents to read")
    documents = 0
    for line, item, obj in _document_objects(text, path):
        yield _convert(obj, path, line, item)
        documents += 1
    if documents == 0:
        raise InputError(path, "the BioC JSON holds no documents")


def _document_objects(text: str, path: Path) -> Iterator[tuple[int | None, str, Any]]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        if error.msg != "Extra data":
            raise InputError(
                path,
                f"invalid JSON: {error.msg} (column {error.colno})" + looks_like_hint(path, "bioc-json"),
                line=error.lineno,
            ) from None
        yield from _json_lines(text, path)
        return
    if isinstance(value, list):
        for index, obj in enumerate(value):
            yield None, f"documents[{index}]", obj
    elif isinstance(value, dict) and "documents" in value:
        if not isinstance(value["documents"], list):
            raise InputError(path, '"documents" must be a list', item="collection")
        for index, obj in enumerate(value["documents"]):
            yield None, f"documents[{index}]", obj
    elif isinstance(value, dict) and "passages" in value and ("id" in value or "bioctype" in value):
        yield 1, "document", value
    else:
        raise InputError(
            path,
            'not BioC JSON: expected a collection with "documents", a list of documents or a document'
            + looks_like_hint(path, "bioc-json"),
            line=1,
        )


def _json_lines(text: str, path: Path) -> Iterator[tuple[int | None, str, Any]]:
    for line_no, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            yield line_no, "document", json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(
                path, f"invalid JSON: {error.msg} (column {error.colno})", line=line_no
            ) from None


_ANNOTATION_DEFAULTS: dict[str, Any] = {"id": "", "infons": {}, "text": None, "locations": []}
_RELATION_DEFAULTS: dict[str, Any] = {"id": "", "infons": {}, "nodes": []}
_CONTAINER_DEFAULTS: dict[str, Any] = {"infons": {}, "annotations": [], "relations": []}


def _filled(obj: Any, defaults: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise TypeError(f"expected a JSON object, got {type(obj).__name__}")
    return {
        **{
            k: (list(v) if isinstance(v, list) else dict(v) if isinstance(v, dict) else v)
            for k, v in defaults.items()
        },
        **obj,
    }


def _with_defaults(obj: dict[str, Any]) -> dict[str, Any]:
    """Fill the keys bioc's decoder requires but the BioC JSON spec leaves optional."""

    def container(value: Any, defaults: dict[str, Any]) -> dict[str, Any]:
        filled = _filled(value, defaults)
        filled["annotations"] = [_filled(a, _ANNOTATION_DEFAULTS) for a in filled["annotations"] or []]
        filled["relations"] = [_filled(r, _RELATION_DEFAULTS) for r in filled["relations"] or []]
        return filled

    document = container(obj, {**_CONTAINER_DEFAULTS, "passages": []})
    passages = []
    for passage in document["passages"] or []:
        filled = container(passage, {**_CONTAINER_DEFAULTS, "sentences": []})
        filled["sentences"] = [
            container(s, {**_CONTAINER_DEFAULTS, "text": None}) for s in filled["sentences"] or []
        ]
        passages.append(filled)
    document["passages"] = passages
    return document


def _convert(obj: Any, path: Path, line: int | None, item: str) -> Document:
    if not isinstance(obj, dict):
        raise InputError(
            path, f"a BioC document must be a JSON object, got {type(obj).__name__}", line=line, item=item
        )
    if "id" in obj:
        item = f"{item} (id {obj['id']})"
    try:
        document = biocjson.fromJSON(_with_defaults(obj), "BioCDocument")
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        problem = f"missing key {error}" if isinstance(error, KeyError) else str(error)
        raise InputError(path, f"malformed BioC document: {problem}", line=line, item=item) from None
    if not isinstance(document.id, str):
        document.id = "" if document.id is None else str(document.id)
    return from_bioc(document, source=path, line=line)


def write(docs: Iterable[Document], path: Path | str) -> int:
    """One BioC JSON collection object, one document per line; returns documents written."""
    path = Path(path)
    header = {
        "bioctype": "BioCCollection",
        "source": SOURCE,
        "date": time.strftime("%Y-%m-%d"),
        "key": "",
        "version": "1.0",
        "infons": {},
    }
    count = 0
    with atomic_text_writer(path) as out:
        out.write(json.dumps(header, ensure_ascii=False)[:-1] + ', "documents": [\n')
        for document in docs:
            if count:
                out.write(",\n")
            out.write(json.dumps(biocjson.toJSON(to_bioc(document)), ensure_ascii=False))
            count += 1
        out.write("\n]}\n")
    if count == 0:
        logger.warning("%s: no documents written; the collection is empty", path)
    return count
