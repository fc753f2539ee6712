"""Plain text: abstracts or notes without annotations, for detection and linking.

A file is one document (doc_id = file stem); a folder is every `*.txt` in it, sorted by name.
Blank-line-separated paragraphs become passages (kind "paragraph") at their character offsets
in the file, so `Document.text` is the file with line breaks and blank lines as spaces and
offsets a detector finds point into the original. Single line breaks stay inside a passage, except
that a first paragraph whose first line is a short heading over longer lines ("title⏎abstract", the way
abstracts are pasted) is read as a title passage and an abstract passage, not as one long title.
Line endings are read as written (a Windows `\\r` becomes part of a gap, never of a passage end).
A single file may be gzipped (`abstract.txt.gz`; doc_id `abstract`). With a `FormatReport`, a file
that cannot be read (not UTF-8, empty) is recorded and skipped, and the writer counts what plain
text cannot hold (annotations, relations, metadata, passage kinds and offsets).
The writer puts each passage on its own paragraph, separated by one blank line; passage
offsets are not kept (the format has nothing to anchor them to) and nor are annotations.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from core.documents import Document, Passage
from core.errors import InputError
from core.formats.files import atomic_text_writer, document_file, folder_files, read_text, skipped_note, stem
from core.formats.report import FormatReport, lost, skip_or_raise
from core.limits import check_id

logger = logging.getLogger(__name__)

PARAGRAPH = "paragraph"
TITLE, ABSTRACT = "title", "abstract"
TITLE_MAX_CHARS = 400  # a first line longer than this is text, not a heading
TITLE_SHARE = 0.75  # a heading is shorter than this share of the longest line below it
_BLANK_LINES = re.compile(r"\r?\n[ \t\r\f\v]*\r?\n")


def read(path: Path | str, report: FormatReport | None = None) -> Iterator[Document]:
    """One document per file."""
    path = Path(path)
    if path.is_dir():
        skipped: list[str] = []
        files = folder_files(path, "*.txt", skipped)
        if not files:
            raise InputError(path, "no .txt files in the folder" + skipped_note(skipped))
    else:
        files = [path]
    for file in files:
        try:
            document = read_document(file)
        except InputError as error:
            skip_or_raise(report, error)
            continue
        yield document


def read_document(path: Path) -> Document:
    doc_id = check_id(stem(path), "document id (the file name)", source=path)
    text = read_text(path)
    passages = tuple(titled(paragraphs(text)))
    if not passages:
        raise InputError(path, "the file holds only whitespace: no text to read")
    return Document(doc_id=doc_id, passages=passages)


def paragraphs(text: str) -> Iterator[Passage]:
    """Passages for the blank-line-separated paragraphs, trimmed, at their offsets."""
    start = 0
    for match in [*_BLANK_LINES.finditer(text), None]:
        end = match.start() if match else len(text)
        chunk = text[start:end]
        stripped = chunk.strip()
        if stripped:
            offset = start + (len(chunk) - len(chunk.lstrip()))
            yield Passage(offset, stripped, PARAGRAPH)
        if match:
            start = match.end()


def titled(passages: Iterable[Passage]) -> Iterator[Passage]:
    """The first passage split into a title and an abstract when its first line is a heading: shorter
    than `TITLE_SHARE` of the longest line after it. A hard-wrapped paragraph (lines of about one width,
    the first as long as any) stays whole."""
    for index, passage in enumerate(passages):
        if index == 0 and (split := _heading(passage.text)) is not None:
            head, rest_offset = split
            rest = passage.text[rest_offset:]
            yield Passage(passage.offset, head, TITLE)
            yield Passage(
                passage.offset + rest_offset + (len(rest) - len(rest.lstrip())), rest.strip(), ABSTRACT
            )
            continue
        yield passage


def _heading(text: str) -> tuple[str, int] | None:
    """(the heading, where the text after it starts) when `text` opens with a heading line, else None."""
    first, newline, rest = text.partition("\n")
    head = first.rstrip()
    if not newline or not head or not rest.strip() or len(head) > TITLE_MAX_CHARS:
        return None
    longest = max(len(line.strip()) for line in rest.splitlines())
    if len(head) >= TITLE_SHARE * longest:
        return None
    return head, len(first) + 1


def write(docs: Iterable[Document], path: Path | str, report: FormatReport | None = None) -> int:
    """A `.txt` path takes exactly one document; any other path is a folder of `<doc_id>.txt`."""
    path = Path(path)
    docs = _counting(docs, report)
    count = 0
    if path.suffix == ".txt":
        for document in docs:
            if count:
                raise InputError(
                    path,
                    "a .txt path holds one document; give a folder to write several",
                    item=f"document {document.doc_id}",
                )
            with atomic_text_writer(path) as out:
                out.write(format_document(document))
            count += 1
        return count
    path.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    for document in docs:
        doc_id = document.doc_id
        target = document_file(path, doc_id, ".txt")
        if doc_id in seen:
            logger.warning("%s: document %s appears again; the later one replaces the file", path, doc_id)
        seen.add(doc_id)
        with atomic_text_writer(target) as out:
            out.write(format_document(document))
        count += 1
    return count


def _counting(docs: Iterable[Document], report: FormatReport | None) -> Iterator[Document]:
    for document in docs:
        lost(report, "mentions not written (plain text holds no annotations)", len(document.mentions))
        lost(report, "relations not written (plain text holds no annotations)", len(document.relations))
        lost(
            report,
            "documents whose metadata was not written (plain text has no place for it)",
            int(bool(document.metadata)),
        )
        yield document


def format_document(document: Document) -> str:
    return "\n\n".join(p.text for p in sorted(document.passages, key=lambda p: p.offset)) + "\n"
