"""PubMed / MEDLINE citation XML (`<PubmedArticleSet>`: efetch output, the annual baseline and the
daily update files, `.xml` or `.xml.gz`), read as a stream: read-only, no annotations.

Each `<PubmedArticle>` (and `<PubmedBookArticle>`) becomes a document with id the PMID: the title
passage at offset 0, then one abstract passage per `<AbstractText>`, one space apart (PubTator's
layout, so detected mentions get ordinary document offsets). A structured abstract keeps each
labelled section as its own passage, its `Label` and `NlmCategory` in the passage infons. Inline
markup (`<sub>`, `<i>`) is flattened and whitespace runs become one space. Document metadata: pmid,
year (journal issue date, else MedlineDate, else the electronic ArticleDate), journal, doi, pmcid,
publication types and the MeSH headings (descriptor, UI, major topic, qualifiers).

`<DeleteCitation>` (the DTD puts it after the citations, at the end of an update file) lists PMIDs
withdrawn from PubMed. A deleted citation is never imported: the file is pre-scanned for the element
(bytes only, a few seconds a GB), and a citation it deletes is held back even though it comes first.
Deletions are recorded on the `FormatReport` (and logged); documents already in a project are not
deleted by an import: they may carry curator decisions, so a curator decides (house rule: nothing
stored is lost). The main parse cross-checks the pre-scan, so a mismatch is a reported problem, never
a silent import.

Memory stays flat: core.formats.xml_guard streams one citation at a time, bounded in elements and
text, and clears each once read. With a
`FormatReport` a citation that cannot be read (no PMID, no text) is recorded and skipped; malformed
XML ends the reading there, the citations before it kept.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from lxml import etree

from core.documents import Document, Infons
from core.errors import InputError
from core.formats.files import open_bytes, require_nonempty
from core.formats.report import Deletion, FormatReport, skip_or_raise
from core.formats.xml_guard import bounded_items
from core.formats.xml_text import check_root, flat_text, lay_out, syntax_error

logger = logging.getLogger(__name__)

FORMAT = "pubmed-xml"
_ITEMS = frozenset({"PubmedArticle", "PubmedBookArticle", "DeleteCitation"})
_YEAR = re.compile(r"\b(1[6-9]\d\d|2\d\d\d)\b")
_CHUNK = 1 << 20
_MAX_PARTIAL = 1 << 16  # an unfinished <PMID> carried to the next chunk; beyond this it is not a PMID
_OPEN = b"<DeleteCitation"
_CLOSE = b"</DeleteCitation>"
_PMID = re.compile(rb"<PMID\b[^>]*>\s*([^<\s]*)\s*</PMID>")


def read(path: Path | str, report: FormatReport | None = None) -> Iterator[Document]:
    """Citations in file order, deleted ones held back."""
    path = Path(path)
    require_nonempty(path)
    check_root(path, ("PubmedArticleSet",), FORMAT)
    announced = prescan_deletions(path)
    deleted: dict[str, int | None] = {}  # PMID -> line of its <DeleteCitation>, from the parse itself
    held_back: set[str] = set()
    count = 0
    with open_bytes(path) as stream:
        try:
            for element in bounded_items(stream, path, _ITEMS, "citation"):
                if element.tag == "DeleteCitation":
                    for pmid, line in _deleted_in(element):
                        deleted.setdefault(pmid, line)
                else:
                    try:
                        document = citation(element, path)
                    except InputError as error:
                        skip_or_raise(report, error)
                        document = None
                    if document is not None and document.doc_id in announced:
                        held_back.add(document.doc_id)
                    elif document is not None:
                        count += 1
                        yield document
        except etree.XMLSyntaxError as error:
            skip_or_raise(report, syntax_error(path, error, FORMAT, report is not None))
            return
    _settle_deletions(path, announced, deleted, held_back, report)
    if count == 0 and not deleted and (report is None or not report.problem_count):
        raise InputError(path, "the PubmedArticleSet holds no <PubmedArticle>")


def _deleted_in(element: etree._Element) -> Iterator[tuple[str, int | None]]:
    for pmid in element.iter("PMID"):
        yield (pmid.text or "").strip(), pmid.sourceline


def _settle_deletions(
    path: Path,
    announced: set[str],
    deleted: dict[str, int | None],
    held_back: set[str],
    report: FormatReport | None,
) -> None:
    """Record every deletion; a disagreement between the pre-scan and the parse is a problem (a
    citation held back that nothing deletes, or a deletion the pre-scan missed, built from entities,
    whose citation may already have been yielded)."""
    for pmid, line in deleted.items():
        if pmid not in announced:
            skip_or_raise(
                report,
                InputError(
                    path,
                    "a <DeleteCitation> the byte pre-scan did not see (made by an entity?): the citation "
                    "may have been read before it; check the file",
                    line=line,
                    item=f"PMID {pmid}",
                ),
            )
        elif report is not None:
            report.deletion(Deletion(pmid, str(path), line, in_file=pmid in held_back))
    for pmid in sorted(announced - set(deleted)):
        skip_or_raise(
            report,
            InputError(
                path,
                "held back as deleted, but no <DeleteCitation> element of the XML lists it "
                "(the text '<DeleteCitation' is inside a comment or CDATA?)",
                item=f"PMID {pmid}",
            ),
        )
    if deleted:
        logger.warning(
            "%s: the file deletes %d citation(s) (DeleteCitation), %d of them held in the file and not "
            "imported; documents already in a project are kept",
            path,
            len(deleted),
            len(held_back & set(deleted)),
        )


def prescan_deletions(path: Path) -> set[str]:
    """PMIDs inside `<DeleteCitation>` elements, found by scanning the (decompressed) bytes: memory
    stays at one chunk plus the deletion lists themselves."""
    found: set[str] = set()
    inside = False
    carry = b""
    with open_bytes(path) as stream:
        while chunk := stream.read(_CHUNK):
            data = carry + chunk
            position = 0
            while True:
                if not inside:
                    start = data.find(_OPEN, position)
                    if start < 0:
                        carry = data[-len(_OPEN) :]
                        break
                    inside, position = True, start + len(_OPEN)
                end = data.find(_CLOSE, position)
                region = data[position : end if end >= 0 else len(data)]
                cut = len(region)
                if end < 0:  # what may be cut at the chunk end (a <PMID>, the closing tag) goes on
                    last = region.rfind(b"<PMID")
                    cut = last if last >= 0 else max(0, len(region) - len(_CLOSE))
                found.update(m.group(1).decode("ascii", "replace") for m in _PMID.finditer(region, 0, cut))
                if end < 0:
                    carry = region[cut:] if len(region) - cut < _MAX_PARTIAL else b""
                    break
                inside, position = False, end + len(_CLOSE)
    return found


def citation(element: etree._Element, path: Path) -> Document:
    """One `<PubmedArticle>` or `<PubmedBookArticle>` as a document; InputError naming its line."""
    line = element.sourceline
    book = element.tag == "PubmedBookArticle"
    record = element.find("BookDocument" if book else "MedlineCitation")
    pmid = (record.findtext("PMID") or "").strip() if record is not None else ""
    if not pmid.isdigit():
        raise InputError(
            path,
            f"<{element.tag}> without a numeric <PMID>" + (f" (found {pmid[:40]!r})" if pmid else ""),
            line=line,
            item=element.tag,
        )
    article = record if book else record.find("Article")
    if article is None:
        raise InputError(path, "<MedlineCitation> without an <Article>", line=line, item=f"PMID {pmid}")
    title = flat_text(article.find("ArticleTitle")) or flat_text(article.find("VernacularTitle"))
    if book and not title:
        title = flat_text(article.find("Book/BookTitle"))
    pieces: list[tuple[str, str, Infons]] = [(title, "title", {})]
    for section in article.iterfind("Abstract/AbstractText"):
        infons = {key.lower(): section.get(key) for key in ("Label", "NlmCategory") if section.get(key)}
        pieces.append((flat_text(section), "abstract", infons))
    passages = lay_out(pieces)
    if not passages:
        raise InputError(
            path, "citation with neither a title nor an abstract", line=line, item=f"PMID {pmid}"
        )
    return Document(doc_id=pmid, passages=passages, metadata=_metadata(element, record, article, pmid, book))


def _metadata(
    element: etree._Element, record: etree._Element, article: etree._Element, pmid: str, book: bool
) -> Infons:
    journal = article.find("Journal")
    date = journal.find("JournalIssue/PubDate") if journal is not None else article.find("Book/PubDate")
    metadata: Infons = {"pmid": pmid}
    year = _year(date) or _year(article.find("ArticleDate"))
    if year:
        metadata["year"] = year
    if journal is not None and journal.findtext("Title"):
        metadata["journal"] = flat_text(journal.find("Title"))
    listed = "PubmedBookData/ArticleIdList/ArticleId" if book else "PubmedData/ArticleIdList/ArticleId"
    ids = {node.get("IdType"): (node.text or "").strip() for node in element.iterfind(listed)}
    for key, name in (("doi", "doi"), ("pmc", "pmcid")):
        if ids.get(key):
            metadata[name] = ids[key]
    types = [flat_text(t) for t in article.iterfind("PublicationTypeList/PublicationType")]
    if types:
        metadata["publication_types"] = types
    headings = _mesh(record.iterfind("MeshHeadingList/MeshHeading"))
    if headings:
        metadata["mesh_headings"] = headings
    if book:
        metadata["book"] = True
    return metadata


def _year(date: etree._Element | None) -> int | None:
    if date is None:
        return None
    text = date.findtext("Year") or date.findtext("MedlineDate") or ""
    match = _YEAR.search(text)
    return int(match.group(1)) if match else None


def _mesh(headings: Iterable[etree._Element]) -> list[Infons]:
    """MeSH headings as metadata: not mentions (they name what the article is about, not a place in
    its text)."""
    result = []
    for heading in headings:
        descriptor = heading.find("DescriptorName")
        if descriptor is None:
            continue
        entry: Infons = {
            "descriptor": flat_text(descriptor),
            "ui": descriptor.get("UI", ""),
            "major": descriptor.get("MajorTopicYN") == "Y",
        }
        qualifiers = [
            {"name": flat_text(q), "ui": q.get("UI", ""), "major": q.get("MajorTopicYN") == "Y"}
            for q in heading.iterfind("QualifierName")
        ]
        if qualifiers:
            entry["qualifiers"] = qualifiers
        result.append(entry)
    return result


def write(docs: Iterable[Document], path: Path | str, report: FormatReport | None = None) -> int:
    """PubMed XML is read-only in Curalink: NLM's format is for NLM's records, not curated corpora."""
    raise InputError(path, f"{FORMAT} is read-only: export to bioc-xml, bioc-json, pubtator or jsonl instead")
