"""PubTator: `PMID|t|title`, `PMID|a|abstract`, tab-separated annotation and relation lines.

Offsets index `title + " " + abstract` (core.documents.document_from_title_abstract). What is
kept, so that a corpus round-trips:
- ids verbatim in `Mention.concept_id` (`A|B`, `A+B`, `A,B`, `A;B`, `-1`, `-`, tmVar's structured
  `p|SUB|V||M;Gene:...`; `Mention.concept_ids` splits them by the field's conventions); the optional
  7th column in `Mention.infons["individual_mentions"]` (tmVar writes its RSID there); 5-column lines
  (no id) as unlinked mentions;
- relation lines (`PMID<TAB>CID<TAB>a<TAB>b`, BioRED's 5-column form, tmVar's 3-column
  `Translation` lines, untyped ones) as positional `Relation(type, arguments)`: a line is an
  annotation when its 2nd and 3rd fields are integers (5 to 7 fields) or it has 6 or 7 fields;
- a text column that differs from the text at its offsets only in whitespace (NCBI-disease train,
  PMID 10923035, 711-761, two trailing spaces): `Mention.text` is the text at the offsets, the
  column is kept in `infons["source_text"]` and written back verbatim (see core.formats.annotations);
- paragraph-split files (NLM-Chem repeats the PMID once per paragraph, offsets counted from each
  block): the blocks of one document become its passages, one after the other with one space
  between blocks, offsets shifted; each passage keeps its block number in
  `infons["pubtator_block"]` (and each relation the block it was in), so the writer gives the file
  back one block per paragraph. Blocks of one PMID further apart in the file join the same document
  (core.formats.pubtator_runs plans this in a cheap first pass; memory stays flat);
- a document repeated whole later in the file (NCBI-disease train repeats PMID 8528200) is yielded
  again as it is, and the store skips it as an in-file duplicate; a stretch of blocks that repeats an
  earlier stretch of a document joined from several places is skipped here and reported (repeated
  paragraphs inside one stretch, such as NLM-Chem's repeated section headings, are kept);
- an abstract line with no title line before it (GNormPlus input) is a document without a title:
  its abstract starts at offset 1, as after an empty title.
Blank lines end a block and are skipped (the NCBI train and dev files begin with one). With a
`FormatReport`, a bad line or annotation is recorded and skipped and reading goes on; without one
the first problem raises. Hand-written rather than `bioc.pubtator`: that parser strips each line
(losing the column above), prints instead of raising, and reports no line numbers.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from core.documents import Document, Mention, Passage, Relation, document_from_title_abstract
from core.errors import InputError
from core.formats.annotations import INDIVIDUAL_MENTIONS, SOURCE_TEXT, build_mention
from core.formats.files import decode_line, raw_lines, require_lines
from core.formats.pubtator_runs import HEADER, Action, RunInfo, plan_runs
from core.formats.pubtator_write import BLOCK, TITLE_ONLY, write
from core.formats.report import FormatReport, skip_or_raise
from core.formats.sniff import looks_like_hint
from core.limits import CUT_LAST_LINE, MAX_CONCEPT_ID_LENGTH, check_id, check_optional_id, limit, over_limit

logger = logging.getLogger(__name__)

__all__ = ["BLOCK", "classify", "read", "write"]

_INTEGER = re.compile(r"^-?\d+$")
PARAGRAPH = "paragraph"


@dataclass
class _Block:
    pmid: str
    line: int
    title: str | None
    abstract: str | None = None
    annotations: list[tuple[int, list[str]]] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    broken: bool = False
    error: InputError | None = None  # a header that could not be read, raised once earlier runs are out


def classify(fields: list[str]) -> str:
    """'annotation', 'relation', or the problem of a tab-separated line (the writer checks its lines
    with this too, so it never writes a line this reader would refuse or read differently)."""
    count = len(fields)
    offsets = count >= 3 and bool(_INTEGER.match(fields[1]) and _INTEGER.match(fields[2]))
    if count > 7 or count < 3 or (count in (3, 4) and offsets):
        return (
            f"wrong field count: {count} tab-separated fields; an annotation has 6 (PMID start end text "
            "type id), 5 (no id) or 7, a relation 3 to 5 (PMID type arguments)"
        )
    if count >= 6 or (count == 5 and offsets):
        if not offsets:
            return f"non-integer offsets {fields[1]!r}, {fields[2]!r} in an annotation line"
        return "annotation"
    return "relation"


def read(path: Path | str, report: FormatReport | None = None) -> Iterator[Document]:
    """Documents one run of blocks at a time; a bad line raises (or, with `report`, is skipped)."""
    path = Path(path)
    require_lines(path)
    plan = plan_runs(path, strict=report is None)
    held: list[_Block] = []
    run: list[_Block] = []
    index = -1
    blocks_seen = 0
    for block in _blocks(path, report):
        blocks_seen += 1
        if run and block.pmid == run[0].pmid:
            run.append(block)
        else:
            if run:
                yield from _finish_run(run, plan.get(index), held, path, report)
            run, index = [block], index + 1
        if block.error is not None:
            raise block.error
    if run:
        yield from _finish_run(run, plan.get(index), held, path, report)
    if blocks_seen == 0:
        raise InputError(path, "no PubTator documents found (only blank lines)")


def _finish_run(
    run: list[_Block], info: RunInfo | None, held: list[_Block], path: Path, report: FormatReport | None
) -> Iterator[Document]:
    action = info.action if info else Action.YIELD
    if action is Action.KEEP:
        held.extend(run)
        return
    if action is Action.SKIP_REPEAT:
        logger.warning(
            "%s, line %d: document %s repeats an earlier block exactly; skipped",
            path,
            run[0].line,
            run[0].pmid,
        )
        if report is not None:
            report.duplicate(run[0].pmid, path, run[0].line)
        return
    if action is Action.MERGE:
        mine = [b for b in held if b.pmid == run[0].pmid]
        held[:] = [b for b in held if b.pmid != run[0].pmid]
        run = mine + run
    elif len(run) > 1 and all(_same_block(block, run[0]) for block in run[1:]):
        # one block written out several times in a row: a repeated document, not paragraphs
        for block in run:
            document = _document([block] if not block.broken else [], path, report)
            if document is not None:
                yield document
        return
    document = _document([b for b in run if not b.broken], path, report)
    if document is not None:
        yield document


def _same_block(a: _Block, b: _Block) -> bool:
    return (a.title, a.abstract, [f for _, f in a.annotations], a.relations) == (
        b.title,
        b.abstract,
        [f for _, f in b.annotations],
        b.relations,
    )


def _lines(path: Path) -> Iterator[tuple[int, bytes | InputError, bool]]:
    """(line number, bytes without the line break, whether the line is cut: the last, without a break);
    a line too long to hold comes as its InputError."""
    for line_no, raw in raw_lines(path):
        if isinstance(raw, InputError):
            yield line_no, raw, False
            continue
        if line_no == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        yield line_no, raw.rstrip(b"\n").removesuffix(b"\r"), not raw.endswith(b"\n")


def _blocks(path: Path, report: FormatReport | None) -> Iterator[_Block]:
    """Blocks in file order, each yielded at its first line and filled as reading goes on, so the
    reader knows a run has ended before the next block's lines are checked."""
    block: _Block | None = None
    for line_no, raw, cut in _lines(path):
        if isinstance(raw, InputError):  # too long to read: the block it is in is not whole
            if block is not None:
                block.broken = True
            skip_or_raise(report, raw)
            continue
        if not raw.strip():
            block = None
            continue
        header = HEADER.match(raw)
        if header and (header.group(2) == b"t" or block is None):
            block = _Block(pmid=header.group(1).decode("utf-8", "replace"), line=line_no, title=None)
            if not _header(block, raw, header.group(2) == b"t", path, line_no, report, cut):
                block.broken = True
            yield block
            continue
        if block is not None and block.broken:
            continue  # the rest of a block whose title or abstract could not be read
        if cut:
            if header and block is not None:
                block.broken = True  # an abstract cut short: the document is not whole
            skip_or_raise(report, InputError(path, CUT_LAST_LINE, line=line_no))
            continue
        try:
            line = decode_line(raw, path, line_no)
        except InputError as error:
            skip_or_raise(report, error)
            continue
        if header:
            _late_abstract(block, line, header.group(1).decode("utf-8", "replace"), path, line_no, report)
            continue
        _content(block, line, path, line_no, report)


NUL_IN_TEXT = (
    "a NUL byte (U+0000) in the text: not text a document can hold (no XML export could write it); "
    "remove it from the file"
)


def _header(
    block: _Block, raw: bytes, title: bool, path: Path, line_no: int, report: FormatReport | None, cut: bool
) -> bool:
    try:
        body = decode_line(raw, path, line_no).split("|", 2)[2]
        check_id(block.pmid, "PMID", source=path, line=line_no)
        if "\x00" in body:
            raise InputError(path, NUL_IN_TEXT, line=line_no)
        if cut:
            raise InputError(path, CUT_LAST_LINE, line=line_no)
    except InputError as error:
        if report is None:
            block.error = error
        else:
            report.invalid(
                InputError(path, f"{error.problem}; the block of {block.pmid} is skipped", line_no)
            )
        return False
    if title:
        block.title = body
    else:
        block.abstract = body
    return True


def _late_abstract(
    block: _Block | None, line: str, pmid: str, path: Path, line_no: int, report: FormatReport | None
) -> None:
    assert block is not None  # an abstract line with no open block starts one
    if pmid != block.pmid:
        problem = f"abstract line for {pmid} inside the block of {block.pmid}"
    elif block.abstract is not None or block.annotations or block.relations:
        problem = f"a second or late abstract line for {pmid}"
    elif "\x00" in line:
        problem = NUL_IN_TEXT
        block.broken = True  # the document is not whole without its abstract
    else:
        block.abstract = line.split("|", 2)[2]
        return
    skip_or_raise(report, InputError(path, problem, line=line_no))


def _content(block: _Block | None, line: str, path: Path, line_no: int, report: FormatReport | None) -> None:
    fields = line.split("\t")
    if len(fields) == 1:
        problem = (
            "not a PubTator line: expected 'PMID|t|title', 'PMID|a|abstract' or tab-separated "
            "annotation fields" + looks_like_hint(path, "pubtator")
        )
    elif block is None:
        problem = "annotation line before any title line"
    elif fields[0] != block.pmid:
        problem = f"annotation for {fields[0]!r} inside the block of {block.pmid}"
    else:
        kind = classify(fields)
        if kind == "relation":
            block.relations.append(Relation(type=fields[1], arguments=tuple(fields[2:])))
            return
        if kind == "annotation":
            if len(block.annotations) >= limit("mentions-per-document"):
                block.broken, block.annotations = True, []  # the rest of the block is read past, not held
                what = f"document {block.pmid} (from line {block.line}): its mention lines"
                skip_or_raise(report, InputError(path, over_limit("mentions-per-document", what), line=line_no))
                return
            block.annotations.append((line_no, fields))
            return
        problem = kind
    skip_or_raise(report, InputError(path, problem, line=line_no))


def _layout(blocks: list[_Block]) -> tuple[list[Passage], list[int]]:
    """Passages of the blocks laid end to end (one space between blocks), and each block's start."""
    if len(blocks) == 1:
        block = blocks[0]
        if block.title is None:
            return [Passage(1, block.abstract or "", "abstract")], [0]
        if block.abstract is None:  # no `|a|` line: written back without one
            return [Passage(0, block.title, "title", {TITLE_ONLY: "true"})], [0]
        document = document_from_title_abstract(block.pmid, block.title, block.abstract)
        return list(document.passages), [0]
    passages: list[Passage] = []
    starts: list[int] = []
    base = 0
    for number, block in enumerate(blocks):
        starts.append(base)
        infons = {BLOCK: number}
        length = 0
        if block.title is not None:
            kind = "title" if number == 0 else PARAGRAPH
            passages.append(Passage(base, block.title, kind, dict(infons)))
            length = len(block.title)
        if block.abstract:
            passages.append(Passage(base + length + 1, block.abstract, "abstract", dict(infons)))
            length += 1 + len(block.abstract)
        elif block.title is None:
            passages.append(Passage(base + 1, "", "abstract", dict(infons)))
            length = 1
        base += length + 1
    return passages, starts


def _document(blocks: list[_Block], path: Path, report: FormatReport | None) -> Document | None:
    if not blocks:
        return None
    passages, starts = _layout(blocks)
    several = len(blocks) > 1
    mentions: list[Mention] = []
    relations: list[Relation] = []
    for number, (block, base) in enumerate(zip(blocks, starts)):
        block_text = _block_text(block)
        for line_no, fields in block.annotations:
            try:
                check_optional_id(
                    fields[5] if len(fields) > 5 else "",
                    "concept id",
                    source=path,
                    line=line_no,
                    item=f"document {block.pmid}",
                    max_length=MAX_CONCEPT_ID_LENGTH,
                )
                mention = build_mention(
                    block_text,
                    [(int(fields[1]), int(fields[2]))],
                    fields[3],
                    source=path,
                    line=line_no,
                    item=f"document {block.pmid}",
                    type=fields[4],
                    concept_id=fields[5] if len(fields) > 5 else "",
                    infons={INDIVIDUAL_MENTIONS: fields[6]} if len(fields) == 7 else {},
                )
            except InputError as error:
                skip_or_raise(report, error)
                continue
            if SOURCE_TEXT in mention.infons:
                logger.info(
                    "%s line %d: mention column %r differs from the text at its offsets only in whitespace; "
                    "kept the text at the offsets",
                    path,
                    line_no,
                    fields[3],
                )
            if base:
                mention = Mention(
                    mention.start + base,
                    mention.end + base,
                    mention.text,
                    mention.type,
                    mention.concept_id,
                    infons=mention.infons,
                )
            mentions.append(mention)
        for relation in block.relations:
            relations.append(
                Relation(relation.type, relation.arguments, infons={BLOCK: number}) if several else relation
            )
    return Document(blocks[0].pmid, tuple(passages), tuple(mentions), tuple(relations))


def _block_text(block: _Block) -> str:
    """What a block's offsets count in: title, one space, abstract (an absent title counts as empty)."""
    if block.title is None:
        return " " + (block.abstract or "")
    return block.title + (" " + block.abstract if block.abstract else "")
