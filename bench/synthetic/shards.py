"""Input shards for link-batch's tests and `curalink bench batch`: real documents (NCBI-disease, the
demo abstracts) replicated under new ids and written in the real formats (PubTator, BioC XML, JSONL,
BioC JSON; some gzipped), and PubMed citation XML written from documents, `<DeleteCitation>` included.

Replicas get numeric ids (`id + copy * 10^9`), so every format, PubMed's PMIDs included, holds them.
"""

from __future__ import annotations

import gzip
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from xml.sax.saxutils import escape

from bench.synthetic.pubmed import HEADER
from core.documents import Document
from core.formats import write_corpus

ROTATION = ("pubtator", "bioc-xml", "jsonl", "bioc-json")
SUFFIX = {"pubtator": ".pubtator", "bioc-xml": ".bioc.xml", "bioc-json": ".bioc.json", "jsonl": ".jsonl"}
COPY_OFFSET = 1_000_000_000


def replicate(documents: Sequence[Document], total: int) -> Iterator[Document]:
    """`total` documents: the originals, then copies under new ids, in order."""
    for index in range(total):
        copy, original = divmod(index, len(documents))
        document = documents[original]
        if copy:
            new_id = (
                str(int(document.doc_id) + copy * COPY_OFFSET)
                if document.doc_id.isdigit()
                else f"{document.doc_id}-{copy}"
            )
            document = replace(document, doc_id=new_id)
        yield document


def write_shards(
    documents: Sequence[Document],
    folder: Path,
    *,
    total: int,
    per_shard: int,
    formats: Sequence[str] = ROTATION,
    gzip_every: int = 0,
) -> list[Path]:
    """Shards of `per_shard` documents (the last may be short), formats in rotation; with `gzip_every`
    N, every Nth shard is gzipped. Returns the shard paths in order."""
    folder.mkdir(parents=True, exist_ok=True)
    stream = replicate(documents, total)
    paths = []
    number = 0
    while True:
        batch = [d for _, d in zip(range(per_shard), stream)]
        if not batch:
            return paths
        fmt = formats[number % len(formats)]
        path = folder / f"shard{number:04d}{SUFFIX[fmt]}"
        write_corpus(batch, path, fmt)
        if gzip_every and number % gzip_every == gzip_every - 1:
            zipped = path.with_name(path.name + ".gz")
            with path.open("rb") as plain, gzip.open(zipped, "wb", compresslevel=4) as packed:
                shutil.copyfileobj(plain, packed)
            path.unlink()
            path = zipped
        paths.append(path)
        number += 1


def write_pubmed_xml(documents: Sequence[Document], path: Path, *, deleted: Sequence[str] = ()) -> Path:
    """A PubmedArticleSet with one citation per document (numeric ids: PMIDs; title and abstract text),
    then a `<DeleteCitation>` of `deleted` PMIDs when given."""
    parts = [HEADER]
    for document in documents:
        abstract = " ".join(p.text for p in document.passages if p.kind not in ("title", "t"))
        parts.append(
            "<PubmedArticle>\n"
            '\t<MedlineCitation Status="MEDLINE" Owner="NLM">\n'
            f'\t\t<PMID Version="1">{document.doc_id}</PMID>\n'
            '\t\t<Article PubModel="Print">\n'
            "\t\t\t<Journal><Title>Curalink Test Journal</Title><JournalIssue><PubDate><Year>2024</Year>"
            "</PubDate></JournalIssue></Journal>\n"
            f"\t\t\t<ArticleTitle>{escape(document.title)}</ArticleTitle>\n"
            f"\t\t\t<Abstract><AbstractText>{escape(abstract)}</AbstractText></Abstract>\n"
            "\t\t</Article>\n"
            "\t</MedlineCitation>\n"
            '\t<PubmedData><ArticleIdList><ArticleId IdType="pubmed">'
            f"{document.doc_id}</ArticleId></ArticleIdList></PubmedData>\n"
            "</PubmedArticle>\n"
        )
    if deleted:
        listed = "".join(f'\t\t<PMID Version="1">{pmid}</PMID>\n' for pmid in deleted)
        parts.append(f"\t<DeleteCitation>\n{listed}\t</DeleteCitation>\n")
    parts.append("</PubmedArticleSet>\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(parts), encoding="utf-8")
    return path
