"""Curalink JSON lines: one document per line, the lossless format (everything our data
classes hold survives a write and a read, infons and metadata included).

Schema of one line (UTF-8, one JSON object, keys in this order when written):

    {"doc_id": "8528200",
     "passages": [{"offset": 0, "text": "...", "kind": "title", "infons": {"key": "value"}}, ...],
     "mentions": [{"start": 0, "end": 7, "text": "...", "type": "SpecificDisease",
                   "concept_id": "D003924", "mention_id": "", "origin": "gold",
                   "infons": {"key": "value"}}, ...],
     "relations": [{"type": "CID", "arguments": ["D008750", "D007022"], "relation_id": "",
                    "roles": ["Arg1", "Arg2"], "infons": {"key": "value"}}, ...],
     "metadata": {"key": "value"},
     "collection": {"source": "PubMed", "date": "", "key": "", "infons": {}}}

`doc_id` and `passages` are required; the other keys, and every mention key except `start` and
`end`, default to empty (`origin` to "gold"; a missing mention `text` is taken from the offsets).
Passage and relation `infons`, relation `roles` and the document's BioC `collection` are written
only when not empty. Infon and
metadata values are any JSON value (BioC JSON's `true`, numbers and lists keep their type).
`roles`, when given, names the role of each argument (the arguments are then annotation ids).
Offsets are document-level, 0-based, end-exclusive into the passages laid out at their offsets
(`Document.text`). Unknown keys are ignored, so later versions can add fields. Blank lines are
skipped. Mention text is checked against the offsets like every other format
(core.formats.annotations). With a `FormatReport`, a bad line, mention or relation is recorded and
skipped (the line when the document itself cannot be read) and reading goes on.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from core.documents import Document, Mention, Passage, Relation
from core.errors import InputError
from core.formats.annotations import build_mention
from core.formats.files import atomic_text_writer, iter_lines_lenient
from core.formats.report import FormatReport, skip_or_raise
from core.formats.sniff import looks_like_hint
from core.limits import MAX_CONCEPT_ID_LENGTH, LayoutBudget, check_id, check_optional_id, parse_json

logger = logging.getLogger(__name__)


def read(path: Path | str, report: FormatReport | None = None) -> Iterator[Document]:
    """One document per non-blank line."""
    path = Path(path)
    lines = 0
    layout = LayoutBudget()
    for line_no, line in iter_lines_lenient(path):
        if isinstance(line, InputError):
            skip_or_raise(report, line)
            continue
        if not line.strip():
            continue
        lines += 1
        try:
            obj = parse_json(line, source=path, line=line_no)
        except InputError as error:
            skip_or_raise(report, error)
            continue
        except json.JSONDecodeError as error:
            skip_or_raise(
                report,
                InputError(
                    path,
                    f"invalid JSON: {error.msg} (column {error.colno})" + looks_like_hint(path, "jsonl"),
                    line=line_no,
                ),
            )
            continue
        try:
            document = from_json(obj, source=path, line=line_no, report=report, layout=layout)
        except InputError as error:
            skip_or_raise(report, error)
            continue
        yield document
    if lines == 0:
        raise InputError(path, "no documents found (only blank lines)")


class _Fields:
    """Typed access to one JSON object, naming the field in every error."""

    def __init__(self, obj: Any, where: str, source: Path | str, line: int | None):
        if not isinstance(obj, dict):
            raise InputError(
                source, f"expected a JSON object, got {type(obj).__name__}", line=line, item=where
            )
        self.obj, self.where, self.source, self.line = obj, where, source, line

    def fail(self, key: str, problem: str) -> InputError:
        return InputError(self.source, problem, line=self.line, item=f"{self.where}{key}")

    def string(self, key: str, default: str | None = "") -> str:
        value = self.obj.get(key, default)
        if value is None and default is None:
            raise self.fail(key, "required field is missing")
        if not isinstance(value, str):
            raise self.fail(key, f"must be a string, got {type(value).__name__}")
        return value

    def integer(self, key: str) -> int:
        if key not in self.obj:
            raise self.fail(key, "required field is missing")
        value = self.obj[key]
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.fail(key, f"must be an integer, got {value!r}")
        return value

    def items(self, key: str, required: bool = False) -> list[Any]:
        if key not in self.obj:
            if required:
                raise self.fail(key, "required field is missing")
            return []
        value = self.obj[key]
        if not isinstance(value, list):
            raise self.fail(key, f"must be a list, got {type(value).__name__}")
        return value

    def mapping(self, key: str) -> dict[str, Any]:
        value = self.obj.get(key, {})
        if not isinstance(value, dict):
            raise self.fail(key, f"must be an object, got {type(value).__name__}")
        return dict(value)

    def strings(self, key: str) -> list[str]:
        values = self.items(key)
        if not all(isinstance(v, str) for v in values):
            raise self.fail(key, "must be a list of strings")
        return values


def from_json(
    obj: Any,
    *,
    source: Path | str = "<jsonl>",
    line: int | None = None,
    report: FormatReport | None = None,
    layout: LayoutBudget | None = None,
) -> Document:
    """A document from one parsed line; raises InputError naming the line and the field (with
    `report`, a bad mention or relation is recorded and skipped instead). `layout` is the file's
    budget of padding between passages (core.limits); a fresh one when not given."""
    top = _Fields(obj, "", source, line)
    if "doc_id" not in top.obj:
        hint = (
            " (this looks like a BioC JSON document: use --format bioc-json)" if "bioctype" in top.obj else ""
        )
        raise top.fail("doc_id", "required field is missing" + hint)
    doc_id = check_id(top.string("doc_id"), "doc_id", source=source, line=line, item="doc_id")
    passages = []
    for index, raw in enumerate(top.items("passages", required=True)):
        fields = _Fields(raw, f"passages[{index}].", source, line)
        offset = fields.integer("offset")
        if offset < 0:
            raise fields.fail("offset", f"negative offset {offset}")
        passages.append(
            Passage(offset, fields.string("text", None), fields.string("kind"), fields.mapping("infons"))
        )
    (layout or LayoutBudget()).check(
        [(p.offset, len(p.text)) for p in passages], source=source, line=line, item=f"document {doc_id}"
    )
    skeleton = Document(doc_id=doc_id, passages=tuple(passages))
    text = skeleton.text
    mentions: list[Mention] = []
    for index, raw in enumerate(top.items("mentions")):
        try:
            mentions.append(_mention(raw, index, text, doc_id, source, line))
        except InputError as error:
            skip_or_raise(report, error)
    relations = []
    for index, raw in enumerate(top.items("relations")):
        try:
            fields = _Fields(raw, f"document {doc_id}, relations[{index}].", source, line)
            arguments, roles = fields.strings("arguments"), fields.strings("roles")
            if roles and len(roles) != len(arguments):
                raise fields.fail("roles", f"{len(roles)} roles for {len(arguments)} arguments")
            relations.append(
                Relation(
                    fields.string("type"),
                    tuple(arguments),
                    fields.string("relation_id"),
                    tuple(roles),
                    fields.mapping("infons"),
                )
            )
        except InputError as error:
            skip_or_raise(report, error)
    return Document(
        doc_id=doc_id,
        passages=skeleton.passages,
        mentions=tuple(mentions),
        relations=tuple(relations),
        metadata=top.mapping("metadata"),
        collection=top.mapping("collection"),
    )


def _mention(raw: Any, index: int, text: str, doc_id: str, source: Path | str, line: int | None) -> Mention:
    fields = _Fields(raw, f"mentions[{index}].", source, line)
    column = fields.obj.get("text")
    if column is not None and not isinstance(column, str):
        raise fields.fail("text", f"must be a string, got {type(column).__name__}")
    where = f"document {doc_id}, mentions[{index}]"
    concept_id = check_optional_id(
        fields.string("concept_id"),
        "concept_id",
        source=source,
        line=line,
        item=where,
        max_length=MAX_CONCEPT_ID_LENGTH,
    )
    mention_id = check_optional_id(
        fields.string("mention_id"), "mention_id", source=source, line=line, item=where
    )
    return build_mention(
        text,
        [(fields.integer("start"), fields.integer("end"))],
        column,
        source=source,
        line=line,
        item=where,
        type=fields.string("type"),
        concept_id=concept_id,
        mention_id=mention_id,
        origin=fields.string("origin", "gold"),
        infons=fields.mapping("infons"),
    )


def to_json(document: Document) -> dict[str, Any]:
    """The JSON object of one document (the schema above)."""
    return {
        "doc_id": document.doc_id,
        "passages": [
            {
                "offset": p.offset,
                "text": p.text,
                "kind": p.kind,
                **({"infons": dict(p.infons)} if p.infons else {}),
            }
            for p in document.passages
        ],
        "mentions": [
            {
                "start": m.start,
                "end": m.end,
                "text": m.text,
                "type": m.type,
                "concept_id": m.concept_id,
                "mention_id": m.mention_id,
                "origin": m.origin,
                "infons": dict(m.infons),
            }
            for m in document.mentions
        ],
        "relations": [
            {
                "type": r.type,
                "arguments": list(r.arguments),
                "relation_id": r.relation_id,
                **({"roles": list(r.roles)} if r.roles else {}),
                **({"infons": dict(r.infons)} if r.infons else {}),
            }
            for r in document.relations
        ],
        "metadata": dict(document.metadata),
        **({"collection": dict(document.collection)} if document.collection else {}),
    }


def write(docs: Iterable[Document], path: Path | str, report: FormatReport | None = None) -> int:
    """One JSON object per line; returns documents written (JSONL holds everything: `report` stays empty)."""
    path = Path(path)
    count = 0
    with atomic_text_writer(path) as out:
        for document in docs:
            out.write(json.dumps(to_json(document), ensure_ascii=False) + "\n")
            count += 1
    if count == 0:
        logger.warning("%s: no documents to write; the file is empty", path)
    return count
