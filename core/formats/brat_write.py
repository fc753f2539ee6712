"""Writing brat standoff: `<doc_id>.txt` + `<doc_id>.ann` per document (the mapping is described in
core.formats.brat).

- The text gets line breaks in the gaps between passages, so a PubTator title and abstract come
  back as two lines, and two passages, at the same offsets.
- Mention types need no spaces: spaces become "_" and an empty type is written as "Entity" (it
  reads back as "Entity"). brat ids cannot hold spaces, so concept ids are written stripped; each
  KB concept of a mention (`A|B|C`, also `A,B` and `A;B`) gets its own `N` line; `A+B` and a
  structured tmVar id are one `N` line each.
- Relations by reference are written as `R` lines (empty roles as `Arg1`, `Arg2`, ...), events as
  `E` lines, equivalences as `*` lines, when every annotation they name is written; positional
  relations (PubTator's concept-level `CID chem dis`) have no brat form.
- Infons of mentions, relations and events become `A` attributes when name and value are single
  words ("true" and JSON `true` as a flag), notes become `#` AnnotatorNotes, a non-gold origin an
  `origin` attribute. What cannot be written is counted in the `FormatReport`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from core.documents import Document, Relation, is_structured_id
from core.errors import InputError
from core.formats.annotations import (
    FRAGMENTS,
    INDIVIDUAL_MENTIONS,
    SOURCE_TEXT,
    assign_ids,
    format_fragments,
    fragments_of,
    id_mapping,
    source_text,
)
from core.formats.files import atomic_text_writer, document_file
from core.formats.report import FormatReport, lost

logger = logging.getLogger(__name__)

BRAT_KIND = "brat_kind"
EVENT = "event"
EQUIV = "equiv"
TRIGGER = "Trigger"

_MESH_ID = re.compile(r"^[CD]\d{6}(\d{3})?$")
_TOKEN = re.compile(r"^[^\s]+$")
_FIELD_BREAKS = str.maketrans({"\n": " ", "\r": " ", "\t": " "})
_NOT_ATTRIBUTES = {FRAGMENTS, SOURCE_TEXT, INDIVIDUAL_MENTIONS, "note", BRAT_KIND}


def write(docs: Iterable[Document], path: Path | str, report: FormatReport | None = None) -> int:
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
            out.write(format_annotations(document, report))
        if report is not None:
            report.lost(
                "documents whose metadata was not written (brat has no place for it)",
                int(bool(document.metadata)),
            )
            report.lost(
                "passage kinds and infons not written (brat passages are lines)",
                sum(1 for p in document.passages if p.kind or p.infons),
            )
    return len(written)


def brat_text(document: Document) -> str:
    """The document text with line breaks in the gaps between passages (every gap character, so a
    blank line between paragraphs stays one and each passage reads back as the same line)."""
    chars = list(document.text)
    passages = sorted(document.passages, key=lambda p: p.offset)
    for before, after in zip(passages, passages[1:]):
        for position in range(max(before.end, 0), after.offset):
            chars[position] = "\n"
    return "".join(chars) + "\n"


def _write_concept(concept: str) -> str:
    return "+".join(
        f"MESH:{part}" if _MESH_ID.match(part) else part for part in (p.strip() for p in concept.split("+"))
    )


def _concepts(concept_id: str) -> list[str]:
    """One entry per N line: KB concepts apart, `A+B` and structured ids whole."""
    if not concept_id.strip() or is_structured_id(concept_id):
        return [concept_id] if concept_id.strip() else []
    return [p for p in re.split(r"[|,;]", concept_id) if p.strip()]


class _Lines:
    """The `.ann` lines of one document, by kind, numbered when joined."""

    def __init__(self, report: FormatReport | None):
        self.report = report
        self.text_bound: list[str] = []
        self.normalisations: list[str] = []
        self.others: list[str] = []
        self.attributes: list[str] = []
        self.notes: list[str] = []

    def infons(self, target: str, infons: dict[str, Any]) -> None:
        for key, value in infons.items():
            if key == "note":
                for note in value if isinstance(value, list) else [value]:
                    if isinstance(note, str):
                        self.notes.append(f"AnnotatorNotes {target}\t{note.translate(_FIELD_BREAKS)}")
                continue
            if key in _NOT_ATTRIBUTES:
                continue
            if value is True or value == "true":
                written = ""
            elif isinstance(value, str | int | float) and not isinstance(value, bool):
                written = f" {value}"
            else:
                written = None
            if written is None or not _TOKEN.match(key) or not _TOKEN.match(written.strip() or "x"):
                lost(
                    self.report,
                    "infons not written as brat attributes (a space in name or value, or not a single value)",
                )
                continue
            self.attributes.append(f"{key} {target}{written}")

    def text(self) -> str:
        lines = [*self.text_bound]
        lines += [f"N{n}\t{body}" for n, body in enumerate(self.normalisations, start=1)]
        lines += self.others
        lines += [f"A{n}\t{body}" for n, body in enumerate(self.attributes, start=1)]
        lines += [f"#{n}\t{body}" for n, body in enumerate(self.notes, start=1)]
        return "".join(line + "\n" for line in lines)


def format_annotations(document: Document, report: FormatReport | None = None) -> str:
    """The `.ann` content of one document."""
    lines = _Lines(report)
    old_ids = [m.mention_id for m in document.mentions]
    new_ids = assign_ids(old_ids, "T", lambda value: bool(re.match(r"^T\d+$", value)))
    for mention, entity_id in zip(document.mentions, new_ids):
        entity_type = "_".join(mention.type.split()) or "Entity"
        if entity_type != mention.type:
            lost(report, "mention types changed for brat (spaces written as _, an empty type as Entity)")
        spans = format_fragments(fragments_of(mention))
        column = source_text(mention).translate(_FIELD_BREAKS)
        lines.text_bound.append(f"{entity_id}\t{entity_type} {spans}\t{column}")
        for part in _concepts(mention.concept_id):
            reference = _write_concept(part)
            lines.normalisations.append(
                f"Reference {entity_id} {reference}\t{mention.text.translate(_FIELD_BREAKS)}"
            )
        infons = dict(mention.infons)
        if mention.origin != "gold":
            infons["origin"] = mention.origin
        lines.infons(entity_id, infons)
    mentions = id_mapping(old_ids, new_ids)
    _relations(document, mentions, lines, report)
    return lines.text()


def _relations(
    document: Document, mentions: dict[str, str], lines: _Lines, report: FormatReport | None
) -> None:
    events = [r for r in document.relations if r.infons.get(BRAT_KIND) == EVENT]
    event_ids = assign_ids(
        [r.relation_id for r in events], "E", lambda value: bool(re.match(r"^E\d+$", value))
    )
    event_map = id_mapping([r.relation_id for r in events], event_ids)
    others = [r for r in document.relations if r.infons.get(BRAT_KIND) not in (EVENT, EQUIV)]
    relation_ids = assign_ids(
        [r.relation_id for r in others], "R", lambda value: bool(re.match(r"^R\d+$", value))
    )
    new_id = {id(r): n for r, n in zip(events, event_ids)} | {id(r): n for r, n in zip(others, relation_ids)}
    for relation in document.relations:
        kind = relation.infons.get(BRAT_KIND)
        refs = [mentions.get(a) or event_map.get(a) for a in relation.arguments]
        relation_type = "_".join(relation.type.split()) or "Relation"
        if kind == EQUIV:
            if all(ref and ref.startswith("T") for ref in refs) and len(refs) >= 2:
                lines.others.append(f"*\t{relation_type} {' '.join(refs)}")  # type: ignore[arg-type]
            else:
                lost(report, "equivalences not written (an annotation they name was not written)")
            continue
        legacy = _legacy_roles(relation, mentions) if not relation.roles else None
        roles = relation.roles or (legacy[0] if legacy else ())
        if legacy:
            refs = legacy[1]
        if not roles or not all(refs):
            lost(
                report,
                "relations not between written annotations not written (brat relations link annotations)",
            )
            continue
        if kind == EVENT and roles[0] == TRIGGER and refs[0] and refs[0].startswith("T"):
            pairs = " ".join(f"{role}:{ref}" for role, ref in zip(roles[1:], refs[1:]))
            lines.others.append(
                f"{new_id[id(relation)]}\t{relation_type}:{refs[0]}" + (f" {pairs}" if pairs else "")
            )
        else:
            if not all(_TOKEN.match(role) and ":" not in role for role in roles):
                lost(
                    report,
                    "relation roles that are empty or hold spaces or colons written as Arg1, Arg2, ...",
                )
                roles = tuple(f"Arg{n}" for n in range(1, len(refs) + 1))
            pairs = " ".join(f"{role}:{ref}" for role, ref in zip(roles, refs))
            lines.others.append(f"{new_id[id(relation)]}\t{relation_type} {pairs}")
        lines.infons(new_id[id(relation)], relation.infons)


def _legacy_roles(relation: Relation, mentions: dict[str, str]) -> tuple[tuple[str, ...], list[str]] | None:
    """`("Arg1:T1", "Arg2:T2")` arguments from JSONL written before relations had roles."""
    pairs = [argument.partition(":") for argument in relation.arguments]
    if pairs and all(sep and ref in mentions for _, sep, ref in pairs):
        return tuple(role for role, _, _ in pairs), [mentions[ref] for _, _, ref in pairs]
    return None
