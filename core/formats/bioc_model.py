"""Conversion between the `bioc` package's data model and ours, shared by BioC XML and BioC JSON.

Mapping (the PubTator / BioC convention):
- passage `offset`, `text` and infon `type` (title / abstract; `section_type` also read) <->
  `Passage(offset, text, kind)`; a passage given only as sentences becomes one passage per sentence;
- annotations (document, passage or sentence level) <-> mentions, sorted by offset; infon `type`
  <-> `Mention.type`; the id under infon `identifier` (read also from `concept_id`, `MESH`,
  `Identifier`) <-> `Mention.concept_id`; infon `origin` <-> `Mention.origin`; other infons <->
  `Mention.infons`; several locations <-> one covering mention with `infons["fragments"]`;
- relations: nodes <-> arguments `"role:refid"`; a relation without nodes (BC5CDR's
  `relation=CID, Chemical=.., Disease=..`) <-> arguments from its other infons, in order;
- document infons <-> `Document.metadata`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import bioc

from core.documents import Document, Mention, Passage, Relation
from core.errors import InputError
from core.formats.annotations import (
    FRAGMENTS,
    SOURCE_TEXT,
    assign_ids,
    build_mention,
    fragments_of,
    id_mapping,
    source_text,
)

ID_KEYS = ("identifier", "concept_id", "MESH", "Identifier")
RELATION_TYPE_KEYS = ("type", "relation")
_WRITTEN_ELSEWHERE = {SOURCE_TEXT, FRAGMENTS, "type", "identifier", "origin"}


def _infons(raw: Mapping[object, object] | None) -> dict[str, str]:
    return {str(k): "" if v is None else str(v) for k, v in (raw or {}).items()}


def _integer(value: object, what: str, source: Path | str, line: int | None, item: str) -> int:
    if isinstance(value, bool):
        raise InputError(source, f"{what} must be an integer, got {value!r}", line=line, item=item)
    try:
        return int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        raise InputError(source, f"{what} must be an integer, got {value!r}", line=line, item=item) from None


def from_bioc(
    document: bioc.BioCDocument,
    *,
    source: Path | str,
    line: int | None = None,
    annotation_lines: Mapping[str, int] | None = None,
) -> Document:
    """Our document from a BioC one; raises InputError naming the document and annotation."""
    doc_id = (document.id or "").strip()
    if not doc_id:
        raise InputError(source, "BioC document without an <id>", line=line, item="document")
    where = f"document {doc_id}"
    passages: list[Passage] = []
    annotations: list[bioc.BioCAnnotation] = list(document.annotations)
    relations: list[bioc.BioCRelation] = list(document.relations)
    for passage in document.passages:
        infons = _infons(passage.infons)
        kind = infons.get("type") or infons.get("section_type") or ""
        offset = _integer(passage.offset, "passage offset", source, line, where)
        if not passage.text and passage.sentences:
            for sentence in passage.sentences:
                passages.append(
                    Passage(
                        _integer(sentence.offset, "sentence offset", source, line, where),
                        sentence.text or "",
                        kind,
                    )
                )
        else:
            passages.append(Passage(offset, passage.text or "", kind))
        annotations.extend(passage.annotations)
        relations.extend(passage.relations)
        for sentence in passage.sentences:
            annotations.extend(sentence.annotations)
            relations.extend(sentence.relations)
    skeleton = Document(doc_id=doc_id, passages=tuple(passages), metadata=_infons(document.infons))
    text = skeleton.text
    mentions = [_mention(a, text, source, line, annotation_lines or {}, where) for a in annotations]
    mentions.sort(key=lambda m: (m.start, m.end))
    return Document(
        doc_id=doc_id,
        passages=skeleton.passages,
        mentions=tuple(mentions),
        relations=tuple(_relation(r) for r in relations),
        metadata=skeleton.metadata,
    )


def _mention(
    annotation: bioc.BioCAnnotation,
    text: str,
    source: Path | str,
    line: int | None,
    annotation_lines: Mapping[str, int],
    where: str,
) -> Mention:
    mention_id = annotation.id or ""
    item = f"{where}, annotation {mention_id or '(no id)'}"
    line = annotation_lines.get(mention_id, line)
    infons = _infons(annotation.infons)
    mention_type = infons.pop("type", "")
    concept_id = ""
    for key in ID_KEYS:
        if infons.get(key):
            concept_id = infons.pop(key)
            break
    origin = infons.pop("origin", "") or "gold"
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
        annotation.text or None,  # an empty or missing <text> gives nothing to check against
        source=source,
        line=line,
        item=item,
        type=mention_type,
        concept_id=concept_id,
        mention_id=mention_id,
        origin=origin,
        infons=infons,
    )


def _relation(relation: bioc.BioCRelation) -> Relation:
    infons = _infons(relation.infons)
    relation_type = ""
    for key in RELATION_TYPE_KEYS:
        if key in infons:
            relation_type = infons.pop(key)
            break
    if relation.nodes:
        arguments = tuple(f"{node.role}:{node.refid}" for node in relation.nodes)
    else:
        arguments = tuple(infons.values())
    return Relation(type=relation_type, arguments=arguments, relation_id=relation.id or "")


def to_bioc(document: Document) -> bioc.BioCDocument:
    """A BioC document: annotations inside the passage holding their start, ids made unique."""
    result = bioc.BioCDocument()
    result.id = document.doc_id
    result.infons = dict(document.metadata)
    passages: list[tuple[Passage, bioc.BioCPassage]] = []
    for passage in sorted(document.passages, key=lambda p: p.offset):
        converted = bioc.BioCPassage()
        converted.offset = passage.offset
        converted.text = passage.text
        if passage.kind:
            converted.infons["type"] = passage.kind
        passages.append((passage, converted))
        result.add_passage(converted)
    old_ids = [m.mention_id for m in document.mentions]
    new_ids = assign_ids(old_ids, "T", lambda _: True)
    for mention, annotation_id in zip(document.mentions, new_ids):
        annotation = bioc.BioCAnnotation()
        annotation.id = annotation_id
        annotation.infons = {k: v for k, v in mention.infons.items() if k not in _WRITTEN_ELSEWHERE}
        if mention.type:
            annotation.infons["type"] = mention.type
        if mention.concept_id:
            annotation.infons["identifier"] = mention.concept_id
        if mention.origin != "gold":
            annotation.infons["origin"] = mention.origin
        for start, end in fragments_of(mention):
            annotation.add_location(bioc.BioCLocation(start, end - start))
        annotation.text = source_text(mention)
        holder = next(
            (
                c
                for p, c in passages
                if p.offset <= mention.start < p.end or p.offset == mention.start == mention.end
            ),
            result,
        )
        holder.add_annotation(annotation)
    mapping = id_mapping(old_ids, new_ids)
    relation_ids = assign_ids([r.relation_id for r in document.relations], "R", lambda _: True)
    for relation, relation_id in zip(document.relations, relation_ids):
        result.add_relation(_to_bioc_relation(relation, relation_id, mapping))
    return result


def _to_bioc_relation(relation: Relation, relation_id: str, mapping: Mapping[str, str]) -> bioc.BioCRelation:
    converted = bioc.BioCRelation()
    converted.id = relation_id
    converted.infons = {"type": relation.type}
    nodes = [argument.partition(":") for argument in relation.arguments]
    if nodes and all(sep and ref in mapping for _, sep, ref in nodes):
        for role, _, ref in nodes:
            converted.add_node(bioc.BioCNode(mapping[ref], role))
    else:
        for index, argument in enumerate(relation.arguments, start=1):
            converted.infons[f"arg{index}"] = argument
    return converted
