"""From our data model to the `bioc` package's, shared by the BioC XML and BioC JSON writers (the
mapping is described in core.formats.bioc_model).

- Annotations go inside the passage holding their start (document level when none does); ids are made
  unique so relations can name them. Relations are written at document level.
- Relations with roles are written as nodes; positional ones (PubTator's `CID chem dis`) as `arg1`,
  `arg2`, ... infons, unless their infons already hold the arguments (read from BC5CDR-style infons).
- Passages that were the sentences of one BioC passage (`bioc_sentence_of`) become that passage's
  sentences again.
- BioC XML infons are text: a typed value (`true`, a number, a list) is written as its JSON text and
  counted in the `FormatReport`; BioC JSON keeps the types. PubTator3's extra document fields are
  written back as top-level keys in JSON, as document infons (JSON text) in XML.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

import bioc

from core.documents import Document, Infons, Passage, Relation
from core.formats.annotations import FRAGMENTS, SOURCE_TEXT, assign_ids, fragments_of, id_mapping, source_text
from core.formats.report import FormatReport, lost

SENTENCE_OF = "bioc_sentence_of"
JSON_FIELDS = "bioc_json_fields"
_WRITTEN_ELSEWHERE = {SOURCE_TEXT, FRAGMENTS, "type", "origin"}
SOURCE = "Curalink"


def collection_header(first: Document | None) -> Infons:
    """source, date, key, (version,) infons of the collection to write: the first document's, or
    Curalink's own when it came from no collection."""
    collection = first.collection if first is not None else {}
    if not collection:
        return {
            "source": SOURCE,
            "date": time.strftime("%Y-%m-%d"),
            "key": "",
            "version": "1.0",
            "infons": {},
        }
    return {
        "source": collection.get("source") or "",
        "date": collection.get("date") or "",
        "key": collection.get("key") or "",
        **({"version": collection["version"]} if "version" in collection else {}),
        "infons": dict(collection.get("infons") or {}),
    }


def check_collection(document: Document, header: Infons, report: FormatReport | None) -> None:
    """Count a document whose own collection differs from the one written (it cannot be kept)."""
    if document.collection and collection_header(document) != header:
        lost(report, "documents from another BioC collection: their collection header was not written")


def to_bioc(
    document: Document, report: FormatReport | None = None, *, xml: bool = False
) -> bioc.BioCDocument:
    """A BioC document: annotations inside the passage holding their start, ids made unique."""
    textual = _Textual(report) if xml else None
    result = bioc.BioCDocument()
    result.id = document.doc_id
    metadata = dict(document.metadata)
    extra = metadata.pop(JSON_FIELDS, None)
    if xml and isinstance(extra, dict):
        metadata.update(extra)  # XML has no place for them but document infons
    result.infons = _infons(metadata, textual)
    holders = _passages(document, result, textual)
    old_ids = [m.mention_id for m in document.mentions]
    new_ids = assign_ids(old_ids, "T", lambda _: True)
    for mention, annotation_id in zip(document.mentions, new_ids):
        annotation = bioc.BioCAnnotation()
        annotation.id = annotation_id
        infons = {k: v for k, v in mention.infons.items() if k not in _WRITTEN_ELSEWHERE}
        if mention.concept_id:
            infons.pop("identifier", None)
        if mention.type:
            infons["type"] = mention.type
        if mention.concept_id:
            infons["identifier"] = mention.concept_id
        if mention.origin != "gold":
            infons["origin"] = mention.origin
        annotation.infons = _infons(infons, textual)
        for start, end in fragments_of(mention):
            annotation.add_location(bioc.BioCLocation(start, end - start))
        annotation.text = source_text(mention)
        holder = next(
            (
                converted
                for passage, converted in holders
                if passage.offset <= mention.start < passage.end
                or passage.offset == mention.start == mention.end
            ),
            result,
        )
        holder.add_annotation(annotation)
    mapping = id_mapping(old_ids, new_ids)
    relation_ids = assign_ids([r.relation_id for r in document.relations], "R", lambda _: True)
    for relation, relation_id in zip(document.relations, relation_ids):
        result.add_relation(_relation(relation, relation_id, mapping, textual))
    return result


def json_fields(document: Document) -> dict[str, Any]:
    """The extra top-level keys to put back into a BioC JSON document object."""
    extra = document.metadata.get(JSON_FIELDS)
    return dict(extra) if isinstance(extra, dict) else {}


def _passages(
    document: Document, result: bioc.BioCDocument, textual: _Textual | None
) -> list[tuple[Passage, bioc.BioCPassage | bioc.BioCSentence]]:
    """Add the passages (regrouping sentences); returns (our passage, where its annotations go)."""
    holders: list[tuple[Passage, Any]] = []
    parent_of: tuple[Any, bioc.BioCPassage] | None = None
    for passage in sorted(document.passages, key=lambda p: p.offset):
        infons = dict(passage.infons)
        parent = infons.pop(SENTENCE_OF, None)
        if isinstance(parent, dict) and isinstance(parent.get("offset"), int):
            if parent_of is None or parent_of[0] != parent:
                container = bioc.BioCPassage()
                container.offset = parent["offset"]
                container.infons = _infons(dict(parent.get("infons") or {}), textual)
                result.add_passage(container)
                parent_of = (parent, container)
            sentence = bioc.BioCSentence()
            sentence.offset = passage.offset
            sentence.text = passage.text
            sentence.infons = _infons(infons, textual)
            parent_of[1].add_sentence(sentence)
            holders.append((passage, sentence))
            continue
        parent_of = None
        converted = bioc.BioCPassage()
        converted.offset = passage.offset
        converted.text = passage.text
        if passage.kind and "type" not in infons and infons.get("section_type") != passage.kind:
            infons["type"] = passage.kind
        converted.infons = _infons(infons, textual)
        holders.append((passage, converted))
        result.add_passage(converted)
    return holders


def _relation(
    relation: Relation, relation_id: str, mapping: Mapping[str, str], textual: _Textual | None
) -> bioc.BioCRelation:
    converted = bioc.BioCRelation()
    converted.id = relation_id
    infons: Infons = {"type": relation.type} if relation.type else {}
    if relation.roles:
        for ref, role in zip(relation.arguments, relation.roles):
            converted.add_node(bioc.BioCNode(mapping.get(ref, ref), role))
    else:
        legacy = [argument.partition(":") for argument in relation.arguments]
        if legacy and all(sep and ref in mapping for _, sep, ref in legacy):  # "Arg1:T1" from older JSONL
            for role, _, ref in legacy:
                converted.add_node(bioc.BioCNode(mapping[ref], role))
        elif tuple(v for v in relation.infons.values() if isinstance(v, str)) != relation.arguments:
            infons.update({f"arg{index}": argument for index, argument in enumerate(relation.arguments, 1)})
    infons.update(relation.infons)
    converted.infons = _infons(infons, textual)
    return converted


class _Textual:
    """Turns typed infon values into the text BioC XML can hold, counting each one."""

    def __init__(self, report: FormatReport | None):
        self.report = report

    def __call__(self, value: Any) -> str:
        if isinstance(value, str):
            return value
        lost(
            self.report, "typed infon values (true, numbers, lists, objects) written as JSON text in BioC XML"
        )
        return json.dumps(value, ensure_ascii=False)


def _infons(infons: Infons, textual: _Textual | None) -> Infons:
    if textual is None:
        return infons
    return {key: textual(value) for key, value in infons.items()}
