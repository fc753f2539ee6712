"""BioC JSON through the `bioc` package (`bioc.biocjson`): decoder, encoder, data model.

Read: a collection object (`{"source": .., "documents": [..]}`, the PubTator Central / BioC
JSON layout), PubTator3's `{"PubTator3": [..]}`, a bare array of documents, a single document
object, or JSON lines of documents (what `bioc.biocjson.iterwriter` writes). Keys that `bioc`'s
decoder insists on but many producers leave out (`infons`, `relations`, `annotations`,
`sentences`) default to empty. Infon values keep their JSON types; keys of a document object that
BioC does not define (PubTator3's `_id`, `pmid`, `journal`, `authors`, `relations_display`, ...)
are kept in `metadata["bioc_json_fields"]` and written back; the collection's source, date, key,
version and infons go to each document's `collection`. A collection is one JSON value, so it is
parsed whole (the stdlib has no streaming parser), within the text-bytes and json-nodes limits
(core.limits); documents are still converted and yielded one
at a time. Write: one collection object, streamed one document per line (which of the layouts
above a file came in is not kept). The mapping to our data classes is core.formats.bioc_model and
core.formats.bioc_write. With a `FormatReport`, a document that cannot be read is recorded and
skipped.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from itertools import chain
from pathlib import Path
from typing import Any

from bioc import biocjson

from core.documents import Document, Infons
from core.errors import InputError
from core.formats.bioc_model import from_bioc
from core.formats.bioc_write import check_collection, collection_header, json_fields, to_bioc
from core.formats.files import atomic_text_writer, read_text
from core.formats.report import FormatReport, skip_or_raise
from core.formats.sniff import looks_like_hint
from core.limits import LayoutBudget, json_nodes_problem, parse_json

logger = logging.getLogger(__name__)

# The keys BioC JSON defines for a document; any other key of a document object is kept aside.
_DOCUMENT_KEYS = {"bioctype", "id", "infons", "passages", "annotations", "relations"}
_COLLECTION_KEYS = ("source", "date", "key", "version", "infons")


def read(path: Path | str, report: FormatReport | None = None) -> Iterator[Document]:
    """Documents from any of the layouts above."""
    path = Path(path)
    text = read_text(path)
    if not text.strip():
        raise InputError(path, "the file holds only whitespace: no documents to read")
    json_nodes_problem(text, path)  # parsed whole: bounded before json builds every value
    documents = 0
    collection: Infons = {}
    layout = LayoutBudget()
    for line, item, obj in _document_objects(text, path, collection, report):
        try:
            document = _convert(obj, path, line, item, report, collection, layout)
        except InputError as error:
            skip_or_raise(report, error)
            continue
        yield document
        documents += 1
    if documents == 0 and (report is None or not report.problem_count):
        raise InputError(path, "the BioC JSON holds no documents")


def _document_objects(
    text: str, path: Path, collection: Infons, report: FormatReport | None
) -> Iterator[tuple[int | None, str, Any]]:
    try:
        value = parse_json(text, source=path)
    except json.JSONDecodeError as error:
        if error.msg != "Extra data":
            raise InputError(
                path,
                f"invalid JSON: {error.msg} (column {error.colno})" + looks_like_hint(path, "bioc-json"),
                line=error.lineno,
            ) from None
        yield from _json_lines(text, path, report)
        return
    if isinstance(value, list):
        for index, obj in enumerate(value):
            yield None, f"documents[{index}]", obj
    elif isinstance(value, dict) and ("documents" in value or "PubTator3" in value):
        key = "documents" if "documents" in value else "PubTator3"
        if not isinstance(value[key], list):
            raise InputError(path, f'"{key}" must be a list', item="collection")
        collection.update({k: value[k] for k in _COLLECTION_KEYS if k in value})
        for index, obj in enumerate(value[key]):
            yield None, f"{key}[{index}]", obj
    elif isinstance(value, dict) and "passages" in value and ("id" in value or "bioctype" in value):
        yield 1, "document", value
    else:
        raise InputError(
            path,
            'not BioC JSON: expected a collection with "documents", a list of documents or a document'
            + looks_like_hint(path, "bioc-json"),
            line=1,
        )


def _json_lines(text: str, path: Path, report: FormatReport | None) -> Iterator[tuple[int | None, str, Any]]:
    for line_no, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = parse_json(line, source=path, line=line_no)
        except json.JSONDecodeError as error:
            skip_or_raise(
                report, InputError(path, f"invalid JSON: {error.msg} (column {error.colno})", line=line_no)
            )
            continue
        except InputError as error:
            skip_or_raise(report, error)
            continue
        yield line_no, "document", obj


_ANNOTATION_DEFAULTS: dict[str, Any] = {"id": "", "infons": {}, "text": None, "locations": []}
_RELATION_DEFAULTS: dict[str, Any] = {"id": "", "infons": {}, "nodes": []}
_CONTAINER_DEFAULTS: dict[str, Any] = {"infons": {}, "annotations": [], "relations": []}


def _filled(obj: Any, defaults: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise TypeError(f"expected a JSON object, got {type(obj).__name__}")
    for key, default in defaults.items():  # bioc's decoder would fail on these with an AttributeError
        if (
            isinstance(default, dict | list)
            and obj.get(key) is not None
            and type(obj[key]) is not type(default)
        ):
            expected = "an object" if isinstance(default, dict) else "a list"
            raise TypeError(f'"{key}" must be {expected}, got {type(obj[key]).__name__}')
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


def _convert(
    obj: Any,
    path: Path,
    line: int | None,
    item: str,
    report: FormatReport | None,
    collection: Infons,
    layout: LayoutBudget,
) -> Document:
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
        if document.id is not None and not isinstance(document.id, int):
            raise InputError(
                path,
                f"a document id must be a string or a number, got {type(document.id).__name__}",
                line=line,
                item=item,
            )
        document.id = "" if document.id is None else str(document.id)
    extra = {k: v for k, v in obj.items() if k not in _DOCUMENT_KEYS}
    return from_bioc(
        document,
        source=path,
        line=line,
        report=report,
        collection={k: dict(v) if isinstance(v, dict) else v for k, v in collection.items()},
        json_fields=extra,
        layout=layout,
    )


def write(docs: Iterable[Document], path: Path | str, report: FormatReport | None = None) -> int:
    """One BioC JSON collection object, one document per line; returns documents written. The
    collection header is the first document's collection (Curalink's own when it has none)."""
    path = Path(path)
    documents = iter(docs)
    first = next(documents, None)
    header = collection_header(first)
    count = 0
    with atomic_text_writer(path) as out:
        out.write(
            json.dumps({"bioctype": "BioCCollection", **header}, ensure_ascii=False)[:-1]
            + ', "documents": [\n'
        )
        for document in chain([first] if first is not None else [], documents):
            check_collection(document, header, report)
            if count:
                out.write(",\n")
            obj = {**biocjson.toJSON(to_bioc(document, report)), **json_fields(document)}
            out.write(json.dumps(obj, ensure_ascii=False))
            count += 1
        out.write("\n]}\n")
    if count == 0:
        logger.warning("%s: no documents written; the collection is empty", path)
    return count
