"""From the `bioc` package's data model to ours, shared by BioC XML and BioC JSON (writing back is
core.formats.bioc_write).

Mapping (the PubTator / BioC convention):
- passage `offset`, `text` and infon `type` (title / abstract; `section_type` when there is no
  `type`) <-> `Passage(offset, text, kind)`; every other passage infon <-> `Passage.infons`; a
  passage given only as sentences becomes one passage per sentence, each keeping the sentence's
  infons and, under `bioc_sentence_of`, its passage's offset and infons, so the writer regroups them;
- annotations (document, passage or sentence level) <-> mentions, sorted by offset; infon `type`
  <-> `Mention.type`; the id under infon `identifier` (read also from `concept_id`, `MESH`,
  `Identifier`) <-> `Mention.concept_id`, verbatim (several ids joined as the source joins them;
  Curalink's own `A|B|C` is written there as it is); infon `origin` <-> `Mention.origin`; other
  infons <-> `Mention.infons`, with their JSON types (`true`, numbers, lists, objects) as BioC JSON
  gives them; several locations <-> one covering mention with `infons["fragments"]`;
- relations: nodes <-> arguments (the refids) with `roles`; infon `type` (or `relation`) <->
  `Relation.type`; every other infon (PubTator3's `score`, `role1`, `role2`) <-> `Relation.infons`;
  a relation without nodes takes its arguments from `arg1`, `arg2`, ... infons (what the writer
  writes), else from its other infons' values in order (BC5CDR's `Chemical=.., Disease=..`);
- document infons <-> `Document.metadata`; keys of a BioC JSON document object that BioC does not
  define (PubTator3's `_id`, `pmid`, `journal`, `authors`, ...) <-> `metadata["bioc_json_fields"]`;
  the collection's source, date, key, version and infons <-> `Document.collection`.
With a `FormatReport`, a bad annotation or relation is recorded and skipped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import bioc

from core.documents import Document, Infons, Mention, Passage, Relation
from core.errors import InputError
from core.formats.annotations import build_mention
from core.formats.bioc_write import JSON_FIELDS, SENTENCE_OF, to_bioc
from core.formats.report import FormatReport, lost, skip_or_raise
from core.limits import MAX_CONCEPT_ID_LENGTH, LayoutBudget, check_id, check_optional_id, strict_integer

ID_KEYS = ("identifier", "concept_id", "MESH", "Identifier")
RELATION_TYPE_KEYS = ("type", "relation")
__all__ = ["from_bioc", "to_bioc"]

_ARGUMENT = re.compile(r"^arg(\d+)$")


def infons_of(raw: Mapping[object, object] | None, xml: bool = False) -> Infons:
    """Infons with their values as given (JSON types kept); an XML `<infon/>` without text is ""."""
    return {str(k): "" if v is None and xml else v for k, v in (raw or {}).items()}


def _integer(value: object, what: str, source: Path | str, line: int | None, item: str) -> int:
    return strict_integer(value, what, source=source, line=line, item=item)


def passage_kind(infons: Infons) -> str:
    """The passage's kind, taken out of `infons`: its `type`, or its `section_type` when it has none
    (left in place then; a `type` equal to the `section_type` is left in place too, so the writer can
    tell the three cases apart)."""
    if "type" in infons and infons["type"] != infons.get("section_type"):
        return str(infons.pop("type"))
    return str(infons.get("type", infons.get("section_type", "")) or "")


def from_bioc(
    document: bioc.BioCDocument,
    *,
    source: Path | str,
    line: int | None = None,
    annotation_lines: Mapping[str, int] | None = None,
    report: FormatReport | None = None,
    collection: Infons | None = None,
    json_fields: Infons | None = None,
    xml: bool = False,
    layout: LayoutBudget | None = None,
) -> Document:
    """Our document from a BioC one; raises InputError naming the document (with `report`, a bad
    annotation or relation is recorded and skipped). `layout` is the file's budget of padding between
    passages (core.limits); a fresh one when not given."""
    doc_id = document.id.strip() if isinstance(document.id, str) else ""
    if not doc_id:
        raise InputError(source, "BioC document without an <id>", line=line, item="document")
    check_id(doc_id, "document id", source=source, line=line, item="document")
    where = f"document {doc_id}"
    passages: list[Passage] = []
    annotations: list[bioc.BioCAnnotation] = []
    relations: list[bioc.BioCRelation] = []
    for passage in document.passages:
        infons = infons_of(passage.infons, xml)
        kind = passage_kind(infons)
        offset = _integer(passage.offset, "passage offset", source, line, where)
        if not passage.text and passage.sentences:
            parent = {"offset": offset, "infons": infons_of(passage.infons, xml)}
            for sentence in passage.sentences:
                sentence_offset = _integer(sentence.offset, "sentence offset", source, line, where)
                sentence_infons = {**infons_of(sentence.infons, xml), SENTENCE_OF: parent}
                sentence_text = _string(sentence.text, "sentence text", source, line, where)
                passages.append(Passage(sentence_offset, sentence_text, kind, sentence_infons))
        else:
            if passage.sentences:
                lost(report, "sentence boundaries inside passages that have their own text not kept")
            passages.append(
                Passage(offset, _string(passage.text, "passage text", source, line, where), kind, infons)
            )
        annotations.extend(passage.annotations)
        relations.extend(passage.relations)
        for sentence in passage.sentences:
            annotations.extend(sentence.annotations)
            relations.extend(sentence.relations)
    annotations.extend(document.annotations)  # document level last, where BioC files put them
    relations.extend(document.relations)
    metadata = infons_of(document.infons, xml)
    if json_fields:
        metadata[JSON_FIELDS] = json_fields
    (layout or LayoutBudget()).check(
        [(p.offset, len(p.text)) for p in passages], source=source, line=line, item=where
    )
    text = Document(doc_id=doc_id, passages=tuple(passages)).text
    mentions = []
    for annotation in annotations:
        try:
            mentions.append(_mention(annotation, text, source, line, annotation_lines or {}, where, xml))
        except InputError as error:
            skip_or_raise(report, error)
    mentions.sort(key=lambda m: (m.start, m.end))
    return Document(
        doc_id=doc_id,
        passages=tuple(passages),
        mentions=tuple(mentions),
        relations=tuple(_relation(r, xml) for r in relations),
        metadata=metadata,
        collection=dict(collection or {}),
    )


def _mention(
    annotation: bioc.BioCAnnotation,
    text: str,
    source: Path | str,
    line: int | None,
    annotation_lines: Mapping[str, int],
    where: str,
    xml: bool,
) -> Mention:
    mention_id = annotation.id if isinstance(annotation.id, str) else str(annotation.id or "")
    item = f"{where}, annotation {mention_id[:60] or '(no id)'}"
    line = annotation_lines.get(mention_id, line)
    check_optional_id(mention_id, "annotation id", source=source, line=line, item=item)
    infons = infons_of(annotation.infons, xml)
    mention_type = _text(infons.pop("type", ""))
    concept_id = ""
    for key in ID_KEYS:
        if isinstance(infons.get(key), str) and infons[key]:
            concept_id = infons.pop(key)
            break
    check_optional_id(
        concept_id, "identifier", source=source, line=line, item=item, max_length=MAX_CONCEPT_ID_LENGTH
    )
    origin = _text(infons.pop("origin", "")) or "gold"
    fragments = []
    for location in annotation.locations:
        start = _integer(location.offset, "location offset", source, line, item)
        length = _integer(location.length, "location length", source, line, item)
        if length < 0:
            raise InputError(source, f"negative location length {length}", line=line, item=item)
        fragments.append((start, start + length))
    return build_mention(
        text,
        fragments,
        _string(annotation.text, "annotation text", source, line, item) or None,  # empty: nothing to check
        source=source,
        line=line,
        item=item,
        type=mention_type,
        concept_id=concept_id,
        mention_id=mention_id,
        origin=origin,
        infons=infons,
    )


def _string(value: Any, what: str, source: Path | str, line: int | None, item: str) -> str:
    """A text field as given, "" when absent; a JSON number, list or object there is an error."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InputError(source, f"{what} must be a string, got {type(value).__name__}", line=line, item=item)
    return value


def _text(value: Any) -> str:
    return "" if value is None else value if isinstance(value, str) else str(value)


def _relation(relation: bioc.BioCRelation, xml: bool) -> Relation:
    infons = infons_of(relation.infons, xml)
    relation_type = ""
    for key in RELATION_TYPE_KEYS:
        if key in infons:
            relation_type = _text(infons.pop(key))
            break
    relation_id = _text(relation.id)
    if relation.nodes:
        arguments = tuple(_text(node.refid) for node in relation.nodes)
        roles = tuple(_text(node.role) for node in relation.nodes)
        return Relation(relation_type, arguments, relation_id, roles, infons)
    numbered = sorted((int(m.group(1)), key) for key in infons if (m := _ARGUMENT.match(key)))
    if numbered and [n for n, _ in numbered] == list(range(1, len(numbered) + 1)):
        arguments = tuple(_text(infons.pop(key)) for _, key in numbered)
    else:
        arguments = tuple(v for v in infons.values() if isinstance(v, str))
    return Relation(relation_type, arguments, relation_id, (), infons)
