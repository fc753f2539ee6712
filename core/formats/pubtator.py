"""PubTator: `PMID|t|title`, `PMID|a|abstract`, tab-separated annotation and relation lines.

Offsets index `title + " " + abstract` (core.documents.document_from_title_abstract). What is
kept, so that a corpus round-trips:
- composite ids (`A|B`, `A+B`) and `-1` verbatim in `Mention.concept_id`; the optional 7th
  column in `Mention.infons["individual_mentions"]`; 5-column lines (no id) as unlinked mentions;
- relation lines (`PMID<TAB>CID<TAB>a<TAB>b`, also BioRED's 5-column form) as `Relation(type,
  arguments)`;
- a text column that differs from the text at its offsets only in whitespace (NCBI-disease train,
  PMID 10923035, 711-761, two trailing spaces): `Mention.text` is the text at the offsets, the
  column is kept in `infons["source_text"]` and written back verbatim (see core.formats.annotations);
- duplicate PMIDs (8528200 twice in NCBI-disease train): every block is yielded; deduplication is
  the store's job.
Blank lines end a block and are skipped (the NCBI train and dev files begin with one). The
writer separates blocks with one blank line and ends the file after the last block, the layout of
the NCBI files, so a re-written NCBI split equals the original byte for byte except for that
leading blank line.

Hand-written rather than `bioc.pubtator`: that parser strips each line (losing the column
above), prints instead of raising, and reports no line numbers.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from core.documents import Document, Mention, Relation, document_from_title_abstract
from core.errors import InputError
from core.formats.annotations import FRAGMENTS, INDIVIDUAL_MENTIONS, SOURCE_TEXT, build_mention
from core.formats.files import atomic_text_writer, iter_lines
from core.formats.sniff import looks_like_hint

logger = logging.getLogger(__name__)

_TITLE_OR_ABSTRACT = re.compile(r"^([^\t|]+)\|([ta])\|(.*)$", re.DOTALL)
_INTEGER = re.compile(r"^-?\d+$")
_LINE_BREAKS = str.maketrans({"\n": " ", "\r": " "})
_FIELD_BREAKS = str.maketrans({"\n": " ", "\r": " ", "\t": " "})


@dataclass
class _Block:
    pmid: str
    title: str
    line: int
    abstract: str | None = None
    annotations: list[tuple[int, list[str]]] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)


def read(path: Path | str) -> Iterator[Document]:
    """Documents one block at a time; a bad block raises before it is yielded."""
    path = Path(path)
    block: _Block | None = None
    documents = 0
    for line_no, line in iter_lines(path):
        if not line.strip():
            if block is not None:
                yield _finish(block, path)
                documents += 1
                block = None
            continue
        header = _TITLE_OR_ABSTRACT.match(line)
        if header:
            pmid, kind, body = header.groups()
            if kind == "t":
                if block is not None:
                    yield _finish(block, path)
                    documents += 1
                block = _Block(pmid=pmid, title=body, line=line_no)
                continue
            if block is None:
                raise InputError(
                    path, f"abstract line for {pmid} without a title line before it", line=line_no
                )
            if pmid != block.pmid:
                raise InputError(
                    path, f"abstract line for {pmid} inside the block of {block.pmid}", line=line_no
                )
            if block.abstract is not None or block.annotations or block.relations:
                raise InputError(path, f"a second or late abstract line for {pmid}", line=line_no)
            block.abstract = body
            continue
        fields = line.split("\t")
        if len(fields) == 1:
            raise InputError(
                path,
                "not a PubTator line: expected 'PMID|t|title', 'PMID|a|abstract' or tab-separated "
                "annotation fields" + looks_like_hint(path, "pubtator"),
                line=line_no,
            )
        if block is None:
            raise InputError(path, "annotation line before any title line", line=line_no)
        if fields[0] != block.pmid:
            raise InputError(
                path, f"annotation for {fields[0]!r} inside the block of {block.pmid}", line=line_no
            )
        _classify(fields, block, path, line_no)
    if block is not None:
        yield _finish(block, path)
        documents += 1
    if documents == 0:
        raise InputError(path, "no PubTator documents found (only blank lines)")


def _classify(fields: list[str], block: _Block, path: Path, line_no: int) -> None:
    """Annotation or relation, by field count and whether fields 2-3 are integers."""
    count = len(fields)
    ints = [bool(_INTEGER.match(value)) for value in fields[1:3]]
    if count < 4 or count > 7 or (count == 4 and all(ints)):
        raise InputError(
            path,
            f"wrong field count: {count} tab-separated fields; an annotation has 6 "
            "(PMID start end text type id) or 7, a relation 4 (PMID type id id)",
            line=line_no,
        )
    if count == 4 or (count == 5 and not any(ints)):
        block.relations.append(Relation(type=fields[1], arguments=tuple(fields[2:])))
        return
    if not all(ints):
        raise InputError(
            path, f"non-integer offsets {fields[1]!r}, {fields[2]!r} in an annotation line", line=line_no
        )
    block.annotations.append((line_no, fields))


def _finish(block: _Block, path: Path) -> Document:
    document = document_from_title_abstract(block.pmid, block.title, block.abstract or "")
    text = document.text
    mentions: list[Mention] = []
    for line_no, fields in block.annotations:
        infons = {INDIVIDUAL_MENTIONS: fields[6]} if len(fields) == 7 else {}
        mention = build_mention(
            text,
            [(int(fields[1]), int(fields[2]))],
            fields[3],
            source=path,
            line=line_no,
            type=fields[4],
            concept_id=fields[5] if len(fields) > 5 else "",
            infons=infons,
        )
        if SOURCE_TEXT in mention.infons:
            logger.info(
                "%s line %d: mention column %r differs from the text at its offsets only in whitespace; "
                "kept the text at the offsets",
                path,
                line_no,
                fields[3],
            )
        mentions.append(mention)
    return replace(document, mentions=tuple(mentions), relations=tuple(block.relations))


def write(docs: Iterable[Document], path: Path | str) -> int:
    """One block per document, blocks separated by a blank line; returns documents written."""
    path = Path(path)
    count = 0
    with atomic_text_writer(path) as out:
        for document in docs:
            if count:
                out.write("\n")
            out.write(format_document(document, path))
            count += 1
    if count == 0:
        logger.warning("%s: no documents to write; the file is empty", path)
    return count


def format_document(document: Document, path: Path | str = "<pubtator>") -> str:
    """The PubTator block of one document, ending with a newline."""
    pmid = document.doc_id
    if not pmid or any(ch in pmid for ch in "|\t\n\r") or pmid != pmid.strip():
        raise InputError(
            path,
            "a PubTator PMID must be non-empty, without '|', tabs, newlines or spaces",
            item=f"document {pmid!r}",
        )
    title, abstract = title_and_abstract(document)
    lines = [f"{pmid}|t|{title.translate(_LINE_BREAKS)}", f"{pmid}|a|{abstract.translate(_LINE_BREAKS)}"]
    for mention in document.mentions:
        for name, value in (("type", mention.type), ("concept id", mention.concept_id)):
            if any(ch in value for ch in "\t\n\r"):
                raise InputError(
                    path, f"mention {name} {value!r} contains a tab or line break", item=f"document {pmid}"
                )
        column = (
            mention.text if FRAGMENTS in mention.infons else mention.infons.get(SOURCE_TEXT, mention.text)
        )
        fields = [
            pmid,
            str(mention.start),
            str(mention.end),
            column.translate(_FIELD_BREAKS),
            mention.type,
            mention.concept_id,
        ]
        if INDIVIDUAL_MENTIONS in mention.infons:
            fields.append(mention.infons[INDIVIDUAL_MENTIONS].translate(_FIELD_BREAKS))
        lines.append("\t".join(fields))
    for relation in document.relations:
        lines.append("\t".join([pmid, relation.type, *relation.arguments]).translate(_LINE_BREAKS))
    return "\n".join(lines) + "\n"


def title_and_abstract(document: Document) -> tuple[str, str]:
    """Split the document text at the PubTator title boundary.

    The first passage is the title when it starts at 0 and a gap follows it (the abstract then
    starts one character later, as PubTator requires); otherwise the whole text is the title.
    Line breaks become spaces, which keeps every offset.
    """
    text = document.text
    passages = sorted(document.passages, key=lambda p: p.offset)
    if len(passages) > 1 and passages[0].offset == 0 and passages[1].offset > passages[0].end:
        cut = passages[0].end
        return text[:cut], text[cut + 1 :]
    return text, ""
