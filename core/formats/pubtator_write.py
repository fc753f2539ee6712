"""Writing PubTator: one block per document, or one block per paragraph for a document read from a
paragraph-split file (its passages carry `infons["pubtator_block"]`), so such a file comes back as it
came. Blocks are separated by one blank line and the file ends after the last block, the layout of
the NCBI files, so a re-written NCBI split equals the original byte for byte except for the leading
blank line of train and dev.

Every line written is checked with the reader's own classifier (`pubtator.classify`): a relation the
format cannot hold (no arguments, more than three, or one that would read back as an annotation) is
not written, and counted in the `FormatReport` with everything else PubTator has no place for
(mention ids, origins and infons, passage boundaries beyond title and abstract, relation roles, ids and
infons, document metadata), so an export can say what it left out.

A relation between annotations (BioC nodes, brat `Arg1:T1`) is written the PubTator way, between the
concept ids of the mentions it names; PubTator3's `role1`/`role2` infons give the ids when the nodes
do not. Several KB concepts on one mention (`A|B|C`) are written as they are, the NCBI-disease way.
A mention without a concept id is written as a 5-column line (no id column), as GNormPlus and
NLM-Gene write unlinked mentions; the reader reads both forms.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from core.documents import Document, Mention, Passage, Relation
from core.errors import InputError
from core.formats.annotations import FRAGMENTS, INDIVIDUAL_MENTIONS, SOURCE_TEXT
from core.formats.files import atomic_text_writer
from core.formats.report import FormatReport, lost

logger = logging.getLogger(__name__)

BLOCK = "pubtator_block"
# On the title passage of a document read from a block with no `|a|` line at all, so it is written
# back without one (a block with an empty `PMID|a|` line is written with it, as most files have it).
TITLE_ONLY = "pubtator_title_only"
_LINE_BREAKS = str.maketrans({"\n": " ", "\r": " "})
_FIELD_BREAKS = str.maketrans({"\n": " ", "\r": " ", "\t": " "})
_BREAK = re.compile(r"[\t\n\r]")
_WRITTEN_INFONS = {INDIVIDUAL_MENTIONS, SOURCE_TEXT, FRAGMENTS}


def write(docs: Iterable[Document], path: Path | str, report: FormatReport | None = None) -> int:
    """One block per document (or per paragraph), separated by a blank line; returns documents written."""
    path = Path(path)
    count = 0
    previous: Document | None = None
    with atomic_text_writer(path) as out:
        for document in docs:
            if count:
                out.write("\n")
            if previous is not None and previous.doc_id == document.doc_id and previous != document:
                lost(
                    report,
                    "documents written right after another of the same PMID (they read back as one document)",
                )
            out.write(format_document(document, path, report))
            previous = document
            count += 1
    if count == 0:
        logger.warning("%s: no documents to write; the file is empty", path)
    return count


def format_document(
    document: Document, path: Path | str = "<pubtator>", report: FormatReport | None = None
) -> str:
    """The PubTator block(s) of one document, ending with a newline."""
    pmid = document.doc_id
    if not pmid or any(ch in pmid for ch in "|\t\n\r") or pmid != pmid.strip():
        raise InputError(
            path,
            "a PubTator PMID must be non-empty, without '|', tabs, newlines or spaces",
            item=f"document {pmid!r}",
        )
    _count_losses(document, report)
    blocks = paragraph_blocks(document)
    if blocks is None:
        return _single_block(document, path, report)
    mentions: list[list[Mention]] = [[] for _ in blocks]
    for mention in document.mentions:
        number = next(
            (
                n
                for n, (base, length, _) in enumerate(blocks)
                if base <= mention.start <= mention.end <= base + length
            ),
            None,
        )
        if number is None:
            lost(report, "paragraph-split documents written as one block (a mention spans two paragraphs)")
            return _single_block(document, path, report)
        mentions[number].append(mention)
    relations: list[list[Relation]] = [[] for _ in blocks]
    for relation in document.relations:
        number = _block_number(relation.infons.get(BLOCK))
        relations[number if number is not None and number < len(blocks) else -1].append(relation)
    parts = []
    for (base, _, (title, abstract)), block_mentions, block_relations in zip(blocks, mentions, relations):
        lines = []
        if title is not None:
            lines.append(f"{pmid}|t|{title.text.translate(_LINE_BREAKS)}")
        lines.append(f"{pmid}|a|{abstract.text.translate(_LINE_BREAKS) if abstract else ''}")
        lines += _mention_lines(pmid, block_mentions, base, path, report)
        lines += _relation_lines(pmid, block_relations, document, report)
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)


def _single_block(document: Document, path: Path | str, report: FormatReport | None) -> str:
    pmid = document.doc_id
    passages = sorted(document.passages, key=lambda p: p.offset)
    if len(passages) == 1 and passages[0].kind == "abstract" and passages[0].offset == 1:
        lines = [f"{pmid}|a|{passages[0].text.translate(_LINE_BREAKS)}"]  # no title line, as it was read
    elif len(passages) == 1 and passages[0].offset == 0 and passages[0].infons.get(TITLE_ONLY):
        lines = [f"{pmid}|t|{passages[0].text.translate(_LINE_BREAKS)}"]  # no abstract line, as it was read
    else:
        if not _fits_one_block(passages):
            lost(
                report,
                "documents with passages beyond a title and an abstract: the later passages are written "
                "as the abstract (offsets kept; passage boundaries and kinds not)",
            )
        title, abstract = title_and_abstract(document)
        lines = [f"{pmid}|t|{title.translate(_LINE_BREAKS)}", f"{pmid}|a|{abstract.translate(_LINE_BREAKS)}"]
    lines += _mention_lines(pmid, document.mentions, 0, path, report)
    lines += _relation_lines(pmid, document.relations, document, report)
    return "\n".join(lines) + "\n"


def _fits_one_block(passages: list[Passage]) -> bool:
    """True when a title passage at 0 (and an abstract one character after it) is all there is."""
    if not passages or passages[0].offset != 0 or passages[0].kind != "title" or len(passages) > 2:
        return not passages
    return len(passages) == 1 or (
        passages[1].kind == "abstract" and passages[1].offset == passages[0].end + 1
    )


def _mention_lines(
    pmid: str, mentions: Iterable[Mention], base: int, path: Path | str, report: FormatReport | None
) -> list[str]:
    lines = []
    for mention in mentions:
        problem = next(
            (
                f"mention {name} {value!r} contains a tab or line break"
                for name, value in (("type", mention.type), ("concept id", mention.concept_id))
                if _BREAK.search(value)
            ),
            None,
        )
        if problem:
            if report is None:
                raise InputError(path, problem, item=f"document {pmid}")
            report.lost("mentions not written: their type or concept id holds a tab or line break")
            continue
        column = (
            mention.text if FRAGMENTS in mention.infons else mention.infons.get(SOURCE_TEXT, mention.text)
        )
        fields = [
            pmid,
            str(mention.start - base),
            str(mention.end - base),
            str(column).translate(_FIELD_BREAKS),
            mention.type,
            mention.concept_id,
        ]
        if INDIVIDUAL_MENTIONS in mention.infons:
            fields.append(str(mention.infons[INDIVIDUAL_MENTIONS]).translate(_FIELD_BREAKS))
        elif not mention.concept_id:
            fields.pop()  # no id: the 5-column line GNormPlus and NLM-Gene write for unlinked mentions
        lines.append("\t".join(fields))
    return lines


def _relation_lines(
    pmid: str, relations: Iterable[Relation], document: Document, report: FormatReport | None
) -> list[str]:
    from core.formats.pubtator import classify  # the reader's rule for what a line is

    lines = []
    for relation in relations:
        if relation.infons.get("brat_kind") == "equiv":
            lost(report, "brat equivalences not written (PubTator has no place for them)")
            continue
        arguments = _arguments(relation, document)
        if arguments is None:
            lost(
                report,
                "relations between mentions without concept ids not written (PubTator relations name concepts)",
            )
            continue
        fields = [pmid, relation.type, *arguments]
        if any(_BREAK.search(value) for value in fields) or classify(fields) != "relation":
            lost(
                report,
                "relations PubTator cannot hold not written (no argument, more than three, a tab in a field, "
                "or a line that would read back as an annotation)",
            )
            continue
        lines.append("\t".join(fields))
    return lines


def _arguments(relation: Relation, document: Document) -> tuple[str, ...] | None:
    """Positional arguments as they are; a relation by reference as the concept ids it names."""
    if not relation.roles:
        return relation.arguments
    by_id = {m.mention_id: m.concept_id for m in document.mentions if m.mention_id}
    ids = tuple(by_id.get(ref, "") for ref in relation.arguments)
    if ids and all(ids):
        return ids
    named = [relation.infons.get(key) for key in ("role1", "role2")]
    if all(isinstance(role, dict) and role.get("identifier") for role in named):
        return tuple(str(role["identifier"]) for role in named)  # type: ignore[index]
    return None


def _count_losses(document: Document, report: FormatReport | None) -> None:
    if report is None:
        return
    mentions = document.mentions
    report.lost(
        "mention infons not written (PubTator has no place for them)",
        sum(1 for m in mentions if set(m.infons) - _WRITTEN_INFONS),
    )
    report.lost(
        "discontinuous mentions written as their covering span",
        sum(1 for m in mentions if FRAGMENTS in m.infons),
    )
    report.lost("mention ids not written (PubTator has none)", sum(1 for m in mentions if m.mention_id))
    report.lost(
        "mentions not of gold origin written as plain annotations (PubTator has no origin column)",
        sum(1 for m in mentions if m.origin != "gold"),
    )
    report.lost(
        "relation roles, ids and infons not written (PubTator relations are positional)",
        sum(1 for r in document.relations if r.roles or r.relation_id or set(r.infons) - {BLOCK}),
    )
    report.lost(
        "documents whose metadata was not written (PubTator has no place for it)",
        int(bool(document.metadata)),
    )
    report.lost(
        "passage infons not written (PubTator has no place for them)",
        sum(1 for p in document.passages if _passage_infons(p)),
    )
    report.lost(
        "line breaks in the text written as spaces (offsets kept)",
        sum(1 for p in document.passages if "\n" in p.text or "\r" in p.text),
    )


def _passage_infons(passage: Passage) -> dict[str, Any]:
    return {
        k: v
        for k, v in passage.infons.items()
        if k not in (BLOCK, TITLE_ONLY) and not (k in ("type", "section_type") and v == passage.kind)
    }


def _block_number(value: object) -> int | None:
    try:
        return int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return None


def paragraph_blocks(
    document: Document,
) -> list[tuple[int, int, tuple[Passage | None, Passage | None]]] | None:
    """(start, length, (title passage, abstract passage)) per block of a document read from a
    paragraph-split file; None when the passages do not lay out as such blocks."""
    groups: dict[int, list[Passage]] = {}
    for passage in document.passages:
        number = _block_number(passage.infons.get(BLOCK))
        if number is None:
            return None
        groups.setdefault(number, []).append(passage)
    if len(groups) < 2 or sorted(groups) != list(range(len(groups))):
        return None
    blocks = []
    expected = 0
    for number in range(len(groups)):
        passages = sorted(groups[number], key=lambda p: p.offset)
        abstracts = [p for p in passages if p.kind == "abstract"]
        titles = [p for p in passages if p.kind != "abstract"]
        if len(titles) > 1 or len(abstracts) > 1:
            return None
        title = titles[0] if titles else None
        abstract = abstracts[0] if abstracts else None
        start = title.offset if title else (abstract.offset - 1 if abstract else -1)
        length = len(title.text) if title else 0
        if abstract is not None:
            if abstract.offset != start + length + 1:
                return None
            length += 1 + len(abstract.text)
        if start != expected:
            return None
        blocks.append((start, length, (title, abstract)))
        expected = start + length + 1
    return blocks


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
