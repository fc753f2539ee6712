"""A synthetic PubMed baseline / update shard in the real `PubmedArticleSet` layout (DOCTYPE, the
MedlineCitation / Article / Abstract / MeshHeadingList / PubmedData structure, inline `<sub>` and
`<i>` markup, character references, pretty-printing indentation, a `<DeleteCitation>` at the end),
plain or gzipped, of a requested size, for the reader's tests and `curalink bench pubmed`.

It returns what it wrote (`Shard`: each citation's PMID, title, abstract sections as a reader should
give them, year, MeSH UIs, and the deleted PMIDs), so a test can compare a reader's output with the
intended content, computed here and not by the reader.
"""

from __future__ import annotations

import gzip
import random
from dataclasses import dataclass, field
from pathlib import Path

HEADER = (
    '<?xml version="1.0" encoding="utf-8"?>\n'
    '<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN" '
    '"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">\n<PubmedArticleSet>\n'
)
FIRST_PMID = 30_000_001
_WORDS = (
    "patients asthma budesonide formoterol inhaled glucocorticoid randomized trial placebo exposure "
    "thyroid hormone transcription expression cells mice tumour carcinoma gene protein receptor kinase "
    "inhibition signalling pathway mutation variant cohort incidence mortality risk factor clinical "
    "outcome treatment therapy dose response significant increase decrease compared control group "
    "analysis measured observed associated lipase enzyme activity serum plasma concentration infection "
    "virus antibody vaccine sheep goats fever seroprevalence transmission mosquito diabetes insulin"
).split()
_LABELS = (
    ("BACKGROUND", "BACKGROUND"),
    ("METHODS", "METHODS"),
    ("RESULTS", "RESULTS"),
    ("CONCLUSIONS", "CONCLUSIONS"),
)
_MESH = [(f"D{n:06d}", f"Heading {n}") for n in range(1000, 1400)]
_QUALIFIERS = (
    ("Q000188", "drug therapy"),
    ("Q000008", "administration & dosage"),
    ("Q000009", "adverse effects"),
)


@dataclass
class Citation:
    pmid: str
    title: str
    sections: list[tuple[str, str]]  # (label or "", text as a reader gives it)
    year: int
    mesh: list[str]


@dataclass
class Shard:
    path: Path
    citations: list[Citation] = field(default_factory=list)  # kept only when asked (tests)
    count: int = 0
    deleted: list[str] = field(default_factory=list)
    uncompressed_bytes: int = 0


def _sentence(rng: random.Random) -> tuple[str, str]:
    """(XML, text a reader gives) for one sentence with a subscript, an italic word and a µ."""
    words = rng.choices(_WORDS, k=rng.randint(12, 28))
    first, rest = words[0].capitalize(), words[1:]
    xml_words = [first, *rest]
    text_words = [first, *rest]
    where = rng.randrange(1, len(words))
    xml_words[where] = f"<i>{rest[where - 1]}</i>"
    xml_words.append(f"(200 &#956;g, &#946;<sub>{where}</sub>-agonist)")
    text_words.append(f"(200 \u03bcg, \u03b2{where}-agonist)")
    return " ".join(xml_words) + ".", " ".join(text_words) + "."


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _citation(rng: random.Random, pmid: int) -> tuple[str, Citation]:
    title_words = rng.choices(_WORDS, k=rng.randint(6, 14))
    title = " ".join(title_words).capitalize() + "."
    year = rng.randint(1975, 2025)
    structured = rng.random() < 0.4
    labels = _LABELS if structured else (("", ""),)
    xml_sections, sections = [], []
    for label, category in labels:
        pairs = [_sentence(rng) for _ in range(rng.randint(2, 6) if structured else rng.randint(5, 12))]
        body = "\n\t\t\t\t\t\t".join(x for x, _ in pairs)
        attributes = f' Label="{label}" NlmCategory="{category}"' if label else ""
        xml_sections.append(f"\t\t\t\t\t<AbstractText{attributes}>{body}</AbstractText>\n")
        sections.append((label, " ".join(t for _, t in pairs)))
    mesh = rng.sample(_MESH, rng.randint(3, 15))
    headings = []
    for ui, name in mesh:
        qualifier = ""
        if rng.random() < 0.3:
            q_ui, q_name = rng.choice(_QUALIFIERS)
            qualifier = (
                f'\n\t\t\t\t\t<QualifierName MajorTopicYN="Y" UI="{q_ui}">{_escape(q_name)}</QualifierName>'
            )
        headings.append(
            f'\t\t\t\t<MeshHeading>\n\t\t\t\t\t<DescriptorName MajorTopicYN="N" UI="{ui}">{name}'
            f"</DescriptorName>{qualifier}\n\t\t\t\t</MeshHeading>\n"
        )
    authors = "".join(
        f'\t\t\t\t\t<Author ValidYN="Y">\n\t\t\t\t\t\t<LastName>{rng.choice(_WORDS).capitalize()}</LastName>\n'
        f"\t\t\t\t\t\t<ForeName>{rng.choice(_WORDS).capitalize()}</ForeName>\n"
        "\t\t\t\t\t\t<AffiliationInfo>\n\t\t\t\t\t\t\t<Affiliation>Department of Medicine, "
        "University Hospital &amp; Institute of Health.</Affiliation>\n"
        "\t\t\t\t\t\t</AffiliationInfo>\n\t\t\t\t\t</Author>\n"
        for _ in range(rng.randint(1, 8))
    )
    xml = f"""\t<PubmedArticle>
\t\t<MedlineCitation Status="MEDLINE" Owner="NLM">
\t\t\t<PMID Version="1">{pmid}</PMID>
\t\t\t<DateCompleted>\n\t\t\t\t<Year>{year}</Year>\n\t\t\t\t<Month>05</Month>\n\t\t\t\t<Day>24</Day>\n\t\t\t</DateCompleted>
\t\t\t<Article PubModel="Print">
\t\t\t\t<Journal>
\t\t\t\t\t<ISSN IssnType="Electronic">1533-4406</ISSN>
\t\t\t\t\t<JournalIssue CitedMedium="Internet">
\t\t\t\t\t\t<Volume>{rng.randint(1, 400)}</Volume>
\t\t\t\t\t\t<PubDate>\n\t\t\t\t\t\t\t<Year>{year}</Year>\n\t\t\t\t\t\t\t<Month>May</Month>\n\t\t\t\t\t\t</PubDate>
\t\t\t\t\t</JournalIssue>
\t\t\t\t\t<Title>The journal of synthetic medicine</Title>
\t\t\t\t</Journal>
\t\t\t\t<ArticleTitle>{title}</ArticleTitle>
\t\t\t\t<Abstract>
{"".join(xml_sections)}\t\t\t\t</Abstract>
\t\t\t\t<AuthorList CompleteYN="Y">
{authors}\t\t\t\t</AuthorList>
\t\t\t\t<Language>eng</Language>
\t\t\t\t<PublicationTypeList>
\t\t\t\t\t<PublicationType UI="D016428">Journal Article</PublicationType>
\t\t\t\t</PublicationTypeList>
\t\t\t</Article>
\t\t\t<CommentsCorrectionsList>
\t\t\t\t<CommentsCorrections RefType="CommentIn">
\t\t\t\t\t<RefSource>Synth Med. 2018</RefSource>
\t\t\t\t\t<PMID Version="1">{pmid + 7_000_000}</PMID>
\t\t\t\t</CommentsCorrections>
\t\t\t</CommentsCorrectionsList>
\t\t\t<MeshHeadingList>
{"".join(headings)}\t\t\t</MeshHeadingList>
\t\t</MedlineCitation>
\t\t<PubmedData>
\t\t\t<PublicationStatus>ppublish</PublicationStatus>
\t\t\t<ArticleIdList>
\t\t\t\t<ArticleId IdType="pubmed">{pmid}</ArticleId>
\t\t\t\t<ArticleId IdType="doi">10.5555/synth.{pmid}</ArticleId>
\t\t\t</ArticleIdList>
\t\t</PubmedData>
\t</PubmedArticle>
"""
    return xml, Citation(str(pmid), title, sections, year, [ui for ui, _ in mesh])


def write_synthetic_pubmed(
    path: Path,
    *,
    megabytes: float | None = None,
    citations: int | None = None,
    delete_in_file: int = 1,
    delete_elsewhere: int = 2,
    keep: bool = False,
    seed: int = 0,
) -> Shard:
    """Write citations until `citations` are written or the XML reaches `megabytes` (uncompressed),
    then a `<DeleteCitation>` of `delete_in_file` PMIDs of this file and `delete_elsewhere` others.
    Gzipped when `path` ends in `.gz`. `keep` returns every citation (for tests, not for a GB)."""
    if megabytes is None and citations is None:
        raise ValueError("give megabytes or citations")
    rng = random.Random(seed)
    limit = int(megabytes * 1_000_000) if megabytes is not None else None
    shard = Shard(path)
    opener = gzip.open(path, "wt", encoding="utf-8", compresslevel=4) if path.suffix == ".gz" else None
    with opener or path.open("w", encoding="utf-8") as out:
        out.write(HEADER)
        written = len(HEADER)
        while (citations is None or shard.count < citations) and (limit is None or written < limit):
            xml, citation = _citation(rng, FIRST_PMID + shard.count)
            out.write(xml)
            written += len(xml.encode("utf-8"))
            shard.count += 1
            if keep:
                shard.citations.append(citation)
        in_file = rng.sample(range(shard.count), min(delete_in_file, shard.count))
        shard.deleted = [str(FIRST_PMID + i) for i in sorted(in_file)]
        shard.deleted += [str(FIRST_PMID - 1 - i) for i in range(delete_elsewhere)]
        if shard.deleted:
            tail = "".join(f'\t\t<PMID Version="1">{pmid}</PMID>\n' for pmid in shard.deleted)
            tail = f"\t<DeleteCitation>\n{tail}\t</DeleteCitation>\n"
            out.write(tail)
            written += len(tail)
        out.write("</PubmedArticleSet>\n")
        shard.uncompressed_bytes = written + len("</PubmedArticleSet>\n")
    return shard
