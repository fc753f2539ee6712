"""JATS / PMC full-text XML (`.nxml` from the PMC Open Access set, or efetch's `<pmc-articleset>`),
read-only, no annotations: the article's text as passages for detection and linking.

A file holds one `<article>` (or a `<pmc-articleset>` of them, streamed one article at a time); a
folder is every `*.nxml` (`.nxml.gz`) in it, sorted by name. The document id is the PMCID
(`PMC2599765`, so a full text never collides with its PubMed abstract, whose id is the PMID), else
the PMID, else the publisher's id, else the file name.

Passages, one space apart from offset 0 (core.formats.xml_text.lay_out), in reading order: the
article title (`title`); each abstract's paragraphs (`abstract`, infons `abstract_type` for an author
summary and `section` inside a structured abstract) after their section titles (`abstract_title`);
the body's section titles (`section_title`) and paragraphs (`paragraph`, infons `section`: the
titles path, and `section_type`: the top section's `sec-type`), list items and boxed text as
paragraphs; figure and table captions (`fig_caption`, `table_caption`, infons `label`), where they
stand or in `<floats-group>`. Left out: table cells, formulas in TeX, supplementary material,
references and the rest of the back matter. Metadata: pmcid, pmid, doi, year, journal, keywords.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from pathlib import Path

from lxml import etree

from core.documents import Document, Infons
from core.errors import InputError
from core.formats.files import folder_files, open_bytes, require_nonempty, stem
from core.formats.report import FormatReport, skip_or_raise
from core.formats.xml_guard import bounded_items
from core.formats.xml_text import check_root, flat_text, lay_out, syntax_error
from core.limits import check_id

logger = logging.getLogger(__name__)

FORMAT = "jats"
_ROOTS = ("article", "pmc-articleset")
_ITEM = frozenset({"article"})
_CAPTIONED = {"fig": "fig_caption", "table-wrap": "table_caption"}
# Never read as running text: cells, TeX, media and the places citations and notes live.
_SKIP = frozenset(
    {
        "table",
        "tex-math",
        "{http://www.w3.org/1998/Math/MathML}annotation",
        "supplementary-material",
        "media",
        "graphic",
        "ref-list",
        "fn-group",
        "object-id",
    }
)
# Left out of a paragraph's own text: read where they stand as their own passages (captions) or not at all.
_NOT_INLINE = _SKIP | frozenset(_CAPTIONED) | {"disp-formula", "list", "boxed-text"}
_ID_ORDER = (("pmc", "PMC"), ("pmcid", ""), ("pmid", ""), ("publisher-id", ""))


def read(path: Path | str, report: FormatReport | None = None) -> Iterator[Document]:
    """Articles of a file, or of every `.nxml` file of a folder."""
    path = Path(path)
    if not path.is_dir():
        yield from _read_file(path, report)
        return
    files = [p for p in folder_files(path) if p.name.lower().endswith((".nxml", ".nxml.gz"))]
    if not files:
        raise InputError(path, "no .nxml files in the folder")
    for file in files:
        try:
            yield from _read_file(file, report)
        except InputError as error:
            skip_or_raise(report, error)


def _read_file(path: Path, report: FormatReport | None) -> Iterator[Document]:
    require_nonempty(path)
    root_tag = check_root(path, _ROOTS, FORMAT)
    count = 0
    with open_bytes(path) as stream:
        try:
            for element in bounded_items(stream, path, _ITEM, "article"):
                try:
                    document = article(element, path, single=root_tag == "article")
                except InputError as error:
                    skip_or_raise(report, error)
                    document = None
                if document is not None:
                    count += 1
                    yield document
        except etree.XMLSyntaxError as error:
            skip_or_raise(report, syntax_error(path, error, FORMAT, report is not None))
            return
    if count == 0 and (report is None or not report.problem_count):
        raise InputError(path, "the file holds no <article>")


def article(element: etree._Element, path: Path, single: bool = True) -> Document:
    """One `<article>` as a document; InputError naming its line when it has no id or no text."""
    line = element.sourceline
    meta = element.find("front/article-meta")
    ids = {}
    if meta is not None:
        ids = {node.get("pub-id-type"): (node.text or "").strip() for node in meta.iterfind("article-id")}
    doc_id = next((prefix + ids[key] for key, prefix in _ID_ORDER if ids.get(key)), "")
    if doc_id.startswith("PMCPMC"):
        doc_id = doc_id[3:]
    if not doc_id and single:
        doc_id = stem(path)
    item = f"article {doc_id}" if doc_id else "article"
    if not doc_id:
        raise InputError(
            path, "<article> without an article-id (pmc, pmid or publisher-id)", line=line, item=item
        )
    check_id(doc_id, "document id", source=path, line=line, item=item)
    pieces: list[tuple[str, str, Infons]] = []
    title = flat_text(meta.find("title-group/article-title"), _NOT_INLINE) if meta is not None else ""
    pieces.append((title, "title", {}))
    for abstract in meta.iterfind("abstract") if meta is not None else ():
        kind = abstract.get("abstract-type")
        infons = {"abstract_type": kind} if kind else {}
        pieces.append((flat_text(abstract.find("title"), _NOT_INLINE), "abstract_title", dict(infons)))
        _walk(abstract, pieces, (), infons, "abstract")
    body = element.find("body")
    if body is not None:
        _walk(body, pieces, (), {}, "paragraph")
    for floats in element.iterfind("floats-group"):
        _walk(floats, pieces, (), {}, "paragraph")
    passages = lay_out(pieces)
    if not passages:
        raise InputError(path, "article with no title, abstract or body text", line=line, item=item)
    return Document(doc_id=doc_id, passages=passages, metadata=_metadata(meta, ids))


def _walk(
    node: etree._Element,
    pieces: list[tuple[str, str, Infons]],
    titles: tuple[str, ...],
    base: Infons,
    kind: str,
) -> None:
    """Append the passages of `node`'s children in reading order (`kind` for paragraphs)."""
    for child in node:
        tag = child.tag
        if not isinstance(tag, str) or tag in _SKIP or tag in ("title", "label"):
            continue
        if tag == "sec":
            heading = flat_text(child.find("title"), _NOT_INLINE)
            path = (*titles, heading) if heading else titles
            infons = dict(base)
            if not titles and child.get("sec-type"):
                infons["section_type"] = child.get("sec-type")
            title_kind = "abstract_title" if kind == "abstract" else "section_title"
            pieces.append((heading, title_kind, _with_section(infons, titles)))
            _walk(child, pieces, path, infons, kind)
        elif tag == "p":
            pieces.append((flat_text(child, _NOT_INLINE), kind, _with_section(base, titles)))
            _walk_inside(child, pieces, titles, base, kind)
        elif tag in _CAPTIONED:
            _caption(child, pieces, titles, base)
        else:  # list, list-item, boxed-text, disp-quote, def-list, ...: containers of paragraphs
            _walk(child, pieces, titles, base, kind)


def _walk_inside(
    paragraph: etree._Element,
    pieces: list[tuple[str, str, Infons]],
    titles: tuple[str, ...],
    base: Infons,
    kind: str,
) -> None:
    """Figures, tables and lists a paragraph holds, read after the paragraph's own text."""
    for child in paragraph:
        if child.tag in _CAPTIONED:
            _caption(child, pieces, titles, base)
        elif child.tag in ("list", "boxed-text"):
            _walk(child, pieces, titles, base, kind)


def _caption(
    element: etree._Element, pieces: list[tuple[str, str, Infons]], titles: tuple[str, ...], base: Infons
) -> None:
    infons = _with_section(base, titles)
    label = flat_text(element.find("label"))
    if label:
        infons["label"] = label
    caption = element.find("caption")
    blocks = (
        []
        if caption is None
        else [flat_text(part, _NOT_INLINE) for part in caption if part.tag in ("title", "p")]
    )
    pieces.append((" ".join(b for b in blocks if b), _CAPTIONED[element.tag], infons))


def _with_section(base: Infons, titles: tuple[str, ...]) -> Infons:
    infons = dict(base)
    if titles:
        infons["section"] = " / ".join(titles)
    return infons


def _metadata(meta: etree._Element | None, ids: dict[str | None, str]) -> Infons:
    metadata: Infons = {}
    for key, name in (("pmc", "pmcid"), ("pmid", "pmid"), ("doi", "doi")):
        if ids.get(key):
            metadata[name] = ("PMC" if key == "pmc" and not ids[key].startswith("PMC") else "") + ids[key]
    if meta is None:
        return metadata
    years = [node.findtext("year") for node in meta.iterfind("pub-date")]
    year = next((y.strip() for y in years if y and y.strip().isdigit()), None)
    if year:
        metadata["year"] = int(year)
    journal = meta.getparent().find("journal-meta/journal-title-group/journal-title")
    if journal is not None:
        metadata["journal"] = flat_text(journal)
    keywords = [flat_text(k) for k in meta.iterfind("kwd-group/kwd")]
    if keywords:
        metadata["keywords"] = keywords
    return metadata


def write(docs: Iterable[Document], path: Path | str, report: FormatReport | None = None) -> int:
    """JATS is read-only in Curalink: a publisher's article format, not a curated corpus."""
    raise InputError(path, f"{FORMAT} is read-only: export to bioc-xml, bioc-json, pubtator or jsonl instead")
