"""Curalink JSON lines: one document per line, the lossless format (everything our data
classes hold survives a write and a read, infons and metadata included).

Schema of one line (UTF-8, one JSON object, keys in this order when written):

    {"doc_id": "8528200",
     "passages": [{"offset": 0, "text": "...", "kind": "title"}, ...],
     "mentions": [{"start": 0, "end": 7, "text": "...", "type": "SpecificDisease",
                   "concept_id": "D003924", "mention_id": "", "origin": "gold",
                   "infons": {"key": "value"}}, ...],
     "relations": [{"type": "CID", "arguments": ["D008750", "D007022"], "relation_id": ""}, ...],
     "metadata": {"key": "value"}}

`doc_id` and `passages` are required; the other keys, and every mention key except `start` and
`end`, default to empty (`origin` to "gold"; a missing mention `text` is taken from the offsets).
Offsets are document-level, 0-based, end-exclusive into the passages laid out at their offsets
(`Document.text`). Unknown keys are ignored, so later versions can add fields. Blank lines are
skipped. Mention text is checked against the offsets like every other format
(core.formats.annotations).
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
from core.formats.files import atomic_text_writer, iter_lines
from core.formats.sniff import looks_like_hint

logger = logging.getLogger(__name__)


def read(path: Path | str) -> Iterator[Document]:
    """One document per non-blank line."""
    path = Path(path)
    documents = 0
    for line_no, line in iter_lines(path):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(
                path,
                f"invalid JSON: {error.msg} (column {error.colno})" + looks_like_hint(path, "jsonl"),
                line=line_no,
            ) from None
        yield from_json(obj, source=path, line=line_no)
        documents += 1
    if documents == 0:
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

    def mapping(self, key: str) -> dict[str, str]:
        value = self.obj.get(key, {})
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise self.fail(key, "must be an object of string values")
        return dict(value)


def from_json(obj: Any, *, source: Path | str = "<jsonl>", line: int | None = None) -> Document:
    """A document from one parsed line; raises InputError naming the line and the field."""
    top = _Fields(obj, "", source, line)
    if "doc_id" not in top.obj:
        hint = (
            " (this looks like a BioC JSON document: use --format bioc-json)" if "bioctype" in top.obj else ""
        )
        raise top.fail("doc_id", "required field is missing" + hint)
    doc_id = top.string("doc_id")
    passages = []
    for index, raw in enumerate(top.items("passages", required=True)):
        fields = _Fields(raw, f"passages[{index}].", source, line)
        offset = fields.integer("offset")
        if offset < 0:
            raise fields.fail("offset", f"negative offset {offset}")
        passages.append(Passage(offset, fields.string("text", None), fields.string("kind")))
    skeleton = Document(doc_id=doc_id, passages=tuple(passages))
    text = skeleton.text
    mentions: list[Mention] = []
    for index, raw in enumerate(top.items("mentions")):
        fields = _Fields(raw, f"mentions[{index}].", source, line)
        column = fields.obj.get("text")
        if column is not None and not isinstance(column, str):
            raise fields.fail("text", f"must be a string, got {type(column).__name__}")
        mentions.append(
            build_mention(
                text,
                [(fields.integer("start"), fields.integer("end"))],
                column,
                source=source,
                line=line,
                item=f"document {doc_id}, mentions[{index}]",
                type=fields.string("type"),
                concept_id=fields.string("concept_id"),
                mention_id=fields.string("mention_id"),
                origin=fields.string("origin", "gold"),
                infons=fields.mapping("infons"),
            )
        )
    relations = []
    for index, raw in enumerate(top.items("relations")):
        fields = _Fields(raw, f"relations[{index}].", source, line)
        arguments = fields.items("arguments")
        if not all(isinstance(a, str) for a in arguments):
            raise fields.fail("arguments", "must be a list of strings")
        relations.append(Relation(fields.string("type"), tuple(arguments), fields.string("relation_id")))
    return Document(
        doc_id=doc_id,
        passages=skeleton.passages,
        mentions=tuple(mentions),
        relations=tuple(relations),
        metadata=top.mapping("metadata"),
    )


def to_json(document: Document) -> dict[str, Any]:
    """The JSON object of one document (the schema above)."""
    return {
        "doc_id": document.doc_id,
        "passages": [{"offset": p.offset, "text": p.text, "kind": p.kind} for p in document.passages],
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
            {"type": r.type, "arguments": list(r.arguments), "relation_id": r.relation_id}
            for r in document.relations
        ],
        "metadata": dict(document.metadata),
    }


def write(docs: Iterable[Document], path: Path | str) -> int:
    """One JSON object per line; returns documents written."""
    path = Path(path)
    count = 0
    with atomic_text_writer(path) as out:
        for document in docs:
            out.write(json.dumps(to_json(document), ensure_ascii=False) + "\n")
            count += 1
    if count == 0:
        logger.warning("%s: no documents to write; the file is empty", path)
    return count
