"""brat standoff: a folder (or one `.txt` path) of `.txt` + `.ann` pairs, doc_id = file stem.

Decisions:
- Passages: each non-blank line of the `.txt` is a passage at its character offset (kind ""):
  brat has no sections, and lines are how brat itself lays a text out. `Document.text` therefore
  equals the file with line breaks as spaces, and every offset is unchanged. The writer puts a
  line break in the gap before each passage, so a PubTator title and abstract come back as two
  lines, and two passages, at the same offsets.
- `T` lines become mentions. A discontinuous `T1 Type 0 5;9 14` becomes one mention over the
  covering span with `infons["fragments"]` (core.formats.annotations); the writer restores it.
- `N` lines (`N1 Reference T1 MESH:D003924`) set the concept id; several for one `T` are joined
  with "|" (a composite mention); `A+B` is written as one N line. `MESH:` before a MeSH-shaped id
  is dropped on read and added on write, the bare-MeSH convention of core.kb.identifiers; every
  other id is kept verbatim. brat cannot hold spaces in an id, so ids are written stripped.
- `R` lines become `Relation(type, ("Arg1:T1", "Arg2:T2"), "R1")`; the writer writes only
  relations whose arguments all name written mentions (PubTator's concept-level CID relations
  cannot be expressed in brat and are skipped with a warning).
- `#` AnnotatorNotes go to `infons["note"]`, `A`/`M` attributes to `infons[name]` ("true" when
  the attribute has no value); the writer gives back notes and every other infon whose name and
  value are single words (brat attributes cannot hold spaces); `E` events
  and `*` equivalences are skipped (logged): the linker has no use for them.
- Mention types: brat needs a type without spaces; spaces become "_" and an empty type is
  written as "Entity".
A `.txt` without `.ann` is a document without annotations.

Hand-written rather than `bioc.brat`: that decoder validates with `assert` (gone under -O),
strips the text column, does not read `N` normalisations and reports no line numbers.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from core.documents import Document, Mention, Passage, Relation
from core.errors import InputError
from core.formats.annotations import (
    FRAGMENTS,
    INDIVIDUAL_MENTIONS,
    SOURCE_TEXT,
    assign_ids,
    build_mention,
    format_fragments,
    fragments_of,
    id_mapping,
    parse_fragments,
    source_text,
)
from core.formats.files import atomic_text_writer, document_file, iter_lines, read_text

logger = logging.getLogger(__name__)

_MESH_ID = re.compile(r"^[CD]\d{6}(\d{3})?$")  # bare MeSH descriptor / supplementary id
_LINE = re.compile(r"[^\n]+")
_T_ID = re.compile(r"^T\d+$")
_R_ID = re.compile(r"^R\d+$")
_TOKEN = re.compile(r"^\S+$")
_NOT_ATTRIBUTES = {FRAGMENTS, SOURCE_TEXT, INDIVIDUAL_MENTIONS, "note"}
_FIELD_BREAKS = str.maketrans({"\n": " ", "\r": " ", "\t": " "})


@dataclass
class _Entity:
    line: int
    type: str
    fragments: list[tuple[int, int]]
    text: str
    concepts: list[str] = field(default_factory=list)
    infons: dict[str, str] = field(default_factory=dict)


def read(path: Path | str) -> Iterator[Document]:
    """One document per `.txt` (sorted by name); a bad `.ann` raises before its document."""
    path = Path(path)
    for text_path in _text_files(path):
        yield _read_pair(text_path)


def _text_files(path: Path) -> list[Path]:
    if path.is_dir():
        texts = sorted(path.glob("*.txt"))
        orphans = sorted(a for a in path.glob("*.ann") if not a.with_suffix(".txt").is_file())
        if orphans:
            raise InputError(orphans[0], "brat annotation file without its .txt text file")
        if not texts:
            raise InputError(path, "no .txt files in the folder: not a brat collection")
        return texts
    if path.suffix == ".ann":
        path = path.with_suffix(".txt")
    if path.suffix != ".txt":
        raise InputError(path, "a brat document is a .txt file (with its .ann) or a folder of them")
    if not path.is_file():
        raise InputError(path, "file not found")
    return [path]


def _passages(text: str) -> tuple[Passage, ...]:
    passages = []
    for match in _LINE.finditer(text):
        line = match.group().rstrip("\r")
        if line.strip():
            passages.append(Passage(match.start(), line, ""))
    return tuple(passages)


def _read_pair(text_path: Path) -> Document:
    raw_text = read_text(text_path)
    skeleton = Document(doc_id=text_path.stem, passages=_passages(raw_text))
    ann_path = text_path.with_suffix(".ann")
    if not ann_path.is_file():
        logger.info("%s: no .ann file; reading the text without annotations", text_path)
        return skeleton
    entities, relations = _parse_ann(ann_path)
    text = skeleton.text
    mentions: list[Mention] = []
    for entity_id, entity in entities.items():
        mentions.append(
            build_mention(
                text,
                entity.fragments,
                entity.text,
                source=ann_path,
                line=entity.line,
                item=entity_id,
                type=entity.type,
                concept_id="|".join(entity.concepts),
                mention_id=entity_id,
                infons=entity.infons,
            )
        )
    return Document(
        doc_id=skeleton.doc_id,
        passages=skeleton.passages,
        mentions=tuple(mentions),
        relations=tuple(relations),
    )


def _parse_ann(path: Path) -> tuple[dict[str, _Entity], list[Relation]]:
    entities: dict[str, _Entity] = {}
    relations: list[Relation] = []
    references: list[tuple[int, str, str, str, str]] = []  # line, kind, target, key, value
    skipped = 0
    for line_no, line in iter_lines(path, allow_empty=True):
        if not line.strip():
            continue
        annotation_id, _, rest = line.partition("\t")
        head, _, tail = rest.partition("\t")
        kind = annotation_id[:1]
        if kind == "T":
            entities[annotation_id] = _entity(path, line_no, annotation_id, head, tail, entities)
        elif kind == "N":
            parts = head.split()
            if len(parts) != 3:
                raise InputError(
                    path, "a normalisation line is 'N1<TAB>Reference T1 DB:ID<TAB>name'", line=line_no
                )
            references.append((line_no, "N", parts[1], "", _read_concept(parts[2])))
        elif kind == "R":
            parts = head.split()
            if len(parts) < 2 or not all(":" in argument for argument in parts[1:]):
                raise InputError(path, "a relation line is 'R1<TAB>Type Arg1:T1 Arg2:T2'", line=line_no)
            relations.append(Relation(type=parts[0], arguments=tuple(parts[1:]), relation_id=annotation_id))
        elif kind in ("A", "M"):
            parts = head.split()
            if len(parts) not in (2, 3):
                raise InputError(path, "an attribute line is 'A1<TAB>Name T1 [value]'", line=line_no)
            references.append((line_no, "A", parts[1], parts[0], parts[2] if len(parts) == 3 else "true"))
        elif kind == "#":
            parts = head.split()
            if len(parts) != 2:
                raise InputError(path, "a note line is '#1<TAB>AnnotatorNotes T1<TAB>text'", line=line_no)
            references.append((line_no, "#", parts[1], "note", tail))
        elif kind in ("E", "*"):
            skipped += 1
        else:
            raise InputError(path, f"unknown brat annotation id {annotation_id!r}", line=line_no)
    for line_no, kind, target, key, value in references:
        entity = entities.get(target)
        if entity is None:
            if kind == "N":
                raise InputError(
                    path, f"normalisation refers to unknown text-bound annotation {target!r}", line=line_no
                )
            continue  # a note or attribute on an event or relation: not ours to keep
        if kind == "N":
            entity.concepts.append(value)
        else:
            entity.infons[key] = value
    if skipped:
        logger.info("%s: skipped %d event / equivalence lines", path, skipped)
    return entities, relations


def _entity(
    path: Path, line_no: int, annotation_id: str, head: str, text: str, seen: dict[str, _Entity]
) -> _Entity:
    if annotation_id in seen:
        raise InputError(path, f"duplicate annotation id {annotation_id}", line=line_no)
    entity_type, _, spans = head.partition(" ")
    if not entity_type or not spans:
        raise InputError(path, "a text-bound line is 'T1<TAB>Type start end<TAB>text'", line=line_no)
    try:
        fragments = parse_fragments(spans)
    except ValueError as error:
        raise InputError(path, f"bad offsets {spans!r}: {error}", line=line_no) from None
    return _Entity(line=line_no, type=entity_type, fragments=fragments, text=text)


def _read_concept(reference: str) -> str:
    return "+".join(
        part[5:] if part.startswith("MESH:") and _MESH_ID.match(part[5:]) else part
        for part in reference.split("+")
    )


def _write_concept(concept: str) -> str:
    return "+".join(
        f"MESH:{part}" if _MESH_ID.match(part) else part for part in (p.strip() for p in concept.split("+"))
    )


def write(docs: Iterable[Document], path: Path | str) -> int:
    """`<doc_id>.txt` + `<doc_id>.ann` per document in the folder `path` (created); returns documents
    written. A repeated doc_id with identical content is written once; a conflicting one is an error."""
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise InputError(folder, "brat output must be a folder, and a file of that name exists")
    folder.mkdir(parents=True, exist_ok=True)
    written: dict[str, Document] = {}
    for document in docs:
        doc_id = document.doc_id
        text_path = document_file(folder, doc_id, ".txt")
        if doc_id in written:
            if written[doc_id] == document:
                logger.warning(
                    "%s: document %s appears again with identical content; written once", folder, doc_id
                )
                continue
            raise InputError(folder, "two different documents share this doc_id", item=f"document {doc_id}")
        written[doc_id] = document
        with atomic_text_writer(text_path) as out:
            out.write(brat_text(document))
        with atomic_text_writer(text_path.with_suffix(".ann")) as out:
            out.write(format_annotations(document))
    return len(written)


def brat_text(document: Document) -> str:
    """The document text with a line break in the gap before each passage."""
    chars = list(document.text)
    passages = sorted(document.passages, key=lambda p: p.offset)
    for before, after in zip(passages, passages[1:]):
        if after.offset > before.end:
            chars[after.offset - 1] = "\n"
    return "".join(chars) + "\n"


def format_annotations(document: Document) -> str:
    """The `.ann` content of one document."""
    old_ids = [m.mention_id for m in document.mentions]
    new_ids = assign_ids(old_ids, "T", lambda value: bool(_T_ID.match(value)))
    lines: list[str] = []
    normalisations: list[str] = []
    notes: list[str] = []
    attributes: list[str] = []
    for mention, entity_id in zip(document.mentions, new_ids):
        entity_type = "_".join(mention.type.split()) or "Entity"
        spans = format_fragments(fragments_of(mention))
        column = source_text(mention).translate(_FIELD_BREAKS)
        lines.append(f"{entity_id}\t{entity_type} {spans}\t{column}")
        for part in mention.concept_id.split("|"):
            if part.strip():
                reference = _write_concept(part)
                normalisations.append(
                    f"Reference {entity_id} {reference}\t{mention.text.translate(_FIELD_BREAKS)}"
                )
        for key, value in mention.infons.items():
            if key == "note" and value:
                notes.append(f"AnnotatorNotes {entity_id}\t{value.translate(_FIELD_BREAKS)}")
            elif key not in _NOT_ATTRIBUTES and _TOKEN.match(key) and _TOKEN.match(value):
                attributes.append(f"{key} {entity_id}" + ("" if value == "true" else f" {value}"))
    lines.extend(f"N{index}\t{body}" for index, body in enumerate(normalisations, start=1))
    mapping = id_mapping(old_ids, new_ids)
    expressible = []
    for relation in document.relations:
        arguments = [argument.partition(":") for argument in relation.arguments]
        if arguments and all(sep and ref in mapping for _, sep, ref in arguments):
            expressible.append((relation, [f"{role}:{mapping[ref]}" for role, _, ref in arguments]))
    skipped = len(document.relations) - len(expressible)
    if skipped:
        logger.warning(
            "document %s: %d relation(s) not between mentions cannot be written to brat",
            document.doc_id,
            skipped,
        )
    relation_ids = assign_ids(
        [r.relation_id for r, _ in expressible], "R", lambda value: bool(_R_ID.match(value))
    )
    for (relation, arguments), relation_id in zip(expressible, relation_ids):
        relation_type = "_".join(relation.type.split()) or "Relation"
        lines.append(f"{relation_id}\t{relation_type} {' '.join(arguments)}")
    lines.extend(f"A{index}\t{body}" for index, body in enumerate(attributes, start=1))
    lines.extend(f"#{index}\t{body}" for index, body in enumerate(notes, start=1))
    return "".join(line + "\n" for line in lines)
