"""brat standoff: a folder (or one `.txt` path) of `.txt` + `.ann` pairs, doc_id = file stem.

Decisions (the writer, core.formats.brat_write, gives back what is read here):
- Passages: each non-blank line of the `.txt` is a passage at its character offset (kind ""):
  brat has no sections, and lines are how brat itself lays a text out. `Document.text` therefore
  equals the file with line breaks as spaces, and every offset is unchanged.
- `T` lines become mentions. A discontinuous `T1 Type 0 5;9 14` becomes one mention over the
  covering span with `infons["fragments"]` (core.formats.annotations).
- `N` lines (`N1 Reference T1 MESH:D003924`) set the concept id; several for one `T` are joined
  with "|" (several concepts); `A+B` is one N line. `MESH:` before a MeSH-shaped id is dropped on
  read and added on write, the bare-MeSH convention of core.kb.identifiers; every other id is kept
  verbatim. The name after the id is not kept (the writer puts the mention text there).
- `R` lines become `Relation(type, ("T1", "T2"), "R1", roles=("Arg1", "Arg2"))`.
- `E` events become `Relation(type, (trigger, arg, ...), "E1", roles=("Trigger", role, ...),
  infons={"brat_kind": "event"})`; an argument may be another event.
- `*` equivalences become `Relation("Equiv", ("T1", "T2", ...), infons={"brat_kind": "equiv"})`.
- `A` / `M` attributes go to the infons of the entity, relation or event they name (`infons[name]`,
  "true" when the attribute has no value); an `origin` attribute on an entity is its
  `Mention.origin` (so detected mentions stay detected). `#` AnnotatorNotes go to `infons["note"]`
  (a list when one annotation has several notes).
A `.txt` without `.ann` is a document without annotations. With a `FormatReport`, a bad line is
recorded and skipped (and so is what refers only to it); without one the first problem raises.

Hand-written rather than `bioc.brat`: that decoder validates with `assert` (gone under -O),
strips the text column, does not read `N` normalisations and reports no line numbers.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.documents import Document, Mention, Passage, Relation
from core.errors import InputError
from core.formats.annotations import build_mention, parse_fragments
from core.formats.brat_write import BRAT_KIND, EQUIV, EVENT, TRIGGER, write
from core.formats.files import folder_files, iter_lines_lenient, read_text, skipped_note
from core.formats.report import FormatReport, skip_or_raise
from core.limits import MAX_CONCEPT_ID_LENGTH, check_id, check_optional_id

logger = logging.getLogger(__name__)

__all__ = ["read", "write"]

_MESH_ID = re.compile(r"^[CD]\d{6}(\d{3})?$")  # bare MeSH descriptor / supplementary id
_LINE = re.compile(r"[^\n]+")


@dataclass
class _Entity:
    line: int
    type: str
    fragments: list[tuple[int, int]]
    text: str
    concepts: list[str] = field(default_factory=list)
    infons: dict[str, Any] = field(default_factory=dict)
    origin: str = "gold"


@dataclass
class _Annotations:
    """What one `.ann` file holds, by id."""

    entities: dict[str, _Entity] = field(default_factory=dict)
    relations: list[tuple[int, Relation]] = field(default_factory=list)  # (line, relation) in file order
    skipped: set[str] = field(default_factory=set)  # ids of lines skipped as bad


def read(path: Path | str, report: FormatReport | None = None) -> Iterator[Document]:
    """One document per `.txt` (sorted by name); a bad `.ann` raises before its document."""
    path = Path(path)
    for text_path in _text_files(path):
        try:
            document = _read_pair(text_path, report)
        except InputError as error:
            skip_or_raise(report, error)
            continue
        yield document


def _text_files(path: Path) -> list[Path]:
    if path.is_dir():
        skipped: list[str] = []
        texts = folder_files(path, "*.txt", skipped)  # links, FIFOs and devices skipped with a note
        orphans = sorted(a for a in path.glob("*.ann") if not a.with_suffix(".txt").is_file())
        if orphans:
            raise InputError(orphans[0], "brat annotation file without its .txt text file")
        if not texts:
            raise InputError(
                path, "no .txt files in the folder: not a brat collection" + skipped_note(skipped)
            )
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


def _inside_collection(path: Path) -> None:
    """A .txt or .ann that is a symbolic link out of its folder (to /etc/passwd, say) is not read."""
    folder = os.path.realpath(path.parent)
    target = os.path.realpath(path)
    if os.path.commonpath([folder, target]) != folder:
        raise InputError(path, f"a symbolic link to {target}, outside the brat folder; not read")


def _read_pair(text_path: Path, report: FormatReport | None) -> Document:
    _inside_collection(text_path)
    doc_id = check_id(text_path.stem, "document id (the file name)", source=text_path)
    raw_text = read_text(text_path)
    skeleton = Document(doc_id=doc_id, passages=_passages(raw_text))
    ann_path = text_path.with_suffix(".ann")
    if ann_path.exists():
        _inside_collection(ann_path)
    if not ann_path.is_file():
        logger.info("%s: no .ann file; reading the text without annotations", text_path)
        return skeleton
    parsed = _parse_ann(ann_path, report)
    text = skeleton.text
    mentions: list[Mention] = []
    for entity_id, entity in parsed.entities.items():
        try:
            mention = build_mention(
                text,
                entity.fragments,
                entity.text,
                source=ann_path,
                line=entity.line,
                item=entity_id,
                type=entity.type,
                concept_id="|".join(entity.concepts),
                mention_id=entity_id,
                origin=entity.origin,
                infons=entity.infons,
            )
        except InputError as error:
            skip_or_raise(report, error)
            parsed.skipped.add(entity_id)
            continue
        mentions.append(mention)
    relations = []
    for line_no, relation in parsed.relations:
        dangling = [ref for ref in relation.arguments if ref in parsed.skipped]
        if dangling:
            skip_or_raise(
                report,
                InputError(ann_path, f"refers to {', '.join(dangling)}, skipped as bad", line=line_no),
            )
            continue
        relations.append(relation)
    return Document(
        doc_id=skeleton.doc_id,
        passages=skeleton.passages,
        mentions=tuple(mentions),
        relations=tuple(relations),
    )


def _parse_ann(path: Path, report: FormatReport | None) -> _Annotations:
    parsed = _Annotations()
    references: list[tuple[int, str, str, str, Any]] = []  # line, kind, target, key, value
    for line_no, line in iter_lines_lenient(path, allow_empty=True, whole_lines=True):
        if isinstance(line, InputError):
            skip_or_raise(report, line)
            continue
        if not line.strip():
            continue
        try:
            _parse_line(path, line_no, line, parsed, references)
        except InputError as error:
            skip_or_raise(report, error)
            parsed.skipped.add(line.partition("\t")[0])
    by_id = {relation.relation_id: relation for _, relation in parsed.relations if relation.relation_id}
    for line_no, kind, target, key, value in references:
        entity = parsed.entities.get(target)
        if entity is None and kind != "N" and target in by_id:
            _add_infon(by_id[target].infons, key, value)
            continue
        if entity is None:
            if target not in parsed.skipped:
                problem = (
                    f"normalisation refers to unknown text-bound annotation {target!r}"
                    if kind == "N"
                    else f"{'attribute' if kind == 'A' else 'note'} refers to unknown annotation {target!r}"
                )
                skip_or_raise(report, InputError(path, problem, line=line_no))
            continue
        if kind == "N":
            entity.concepts.append(value)
        elif kind == "A" and key == "origin":
            entity.origin = str(value)
        else:
            _add_infon(entity.infons, key, value)
    return parsed


def _add_infon(infons: dict[str, Any], key: str, value: Any) -> None:
    if key == "note" and key in infons:
        previous = infons[key]
        infons[key] = [*previous, value] if isinstance(previous, list) else [previous, value]
    else:
        infons[key] = value


def _parse_line(path: Path, line_no: int, line: str, parsed: _Annotations, references: list) -> None:
    annotation_id, _, rest = line.partition("\t")
    head, _, tail = rest.partition("\t")
    kind = annotation_id[:1]
    parts = head.split()
    if kind == "T":
        if annotation_id in parsed.entities:
            raise InputError(path, f"duplicate annotation id {annotation_id}", line=line_no)
        parsed.entities[annotation_id] = _entity(path, line_no, head, tail)
    elif kind == "N":
        if len(parts) != 3:
            raise InputError(
                path, "a normalisation line is 'N1<TAB>Reference T1 DB:ID<TAB>name'", line=line_no
            )
        concept = check_optional_id(
            _read_concept(parts[2]), "concept id", source=path, line=line_no, max_length=MAX_CONCEPT_ID_LENGTH
        )
        references.append((line_no, "N", parts[1], "", concept))
    elif kind == "R":
        if len(parts) < 2 or not all(":" in argument for argument in parts[1:]):
            raise InputError(path, "a relation line is 'R1<TAB>Type Arg1:T1 Arg2:T2'", line=line_no)
        pairs = [argument.split(":", 1) for argument in parts[1:]]
        relation = Relation(parts[0], tuple(a for _, a in pairs), annotation_id, tuple(r for r, _ in pairs))
        parsed.relations.append((line_no, relation))
    elif kind == "E":
        pairs = [argument.split(":", 1) for argument in parts]
        if not pairs or not all(len(pair) == 2 and all(pair) for pair in pairs):
            raise InputError(path, "an event line is 'E1<TAB>Type:T1 Role:T2 ...'", line=line_no)
        (event_type, trigger), arguments = pairs[0], pairs[1:]
        relation = Relation(
            event_type,
            (trigger, *(a for _, a in arguments)),
            annotation_id,
            (TRIGGER, *(r for r, _ in arguments)),
            {BRAT_KIND: EVENT},
        )
        parsed.relations.append((line_no, relation))
    elif annotation_id == "*":
        if len(parts) < 3:
            raise InputError(path, "an equivalence line is '*<TAB>Equiv T1 T2 ...'", line=line_no)
        parsed.relations.append((line_no, Relation(parts[0], tuple(parts[1:]), "", (), {BRAT_KIND: EQUIV})))
    elif kind in ("A", "M"):
        if len(parts) not in (2, 3):
            raise InputError(path, "an attribute line is 'A1<TAB>Name T1 [value]'", line=line_no)
        references.append((line_no, "A", parts[1], parts[0], parts[2] if len(parts) == 3 else "true"))
    elif kind == "#":
        if len(parts) != 2:
            raise InputError(path, "a note line is '#1<TAB>AnnotatorNotes T1<TAB>text'", line=line_no)
        references.append((line_no, "#", parts[1], "note", tail))
    else:
        raise InputError(path, f"unknown brat annotation id {annotation_id!r}", line=line_no)


def _entity(path: Path, line_no: int, head: str, text: str) -> _Entity:
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
