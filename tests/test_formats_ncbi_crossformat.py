"""NCBI-disease through every annotated format and back: documents, spans and ids unchanged."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.documents import Document
from core.formats import pubtator, read_corpus, write_corpus
from core.kb.identifiers import canonical_id

SPLITS = {
    "train": "NCBItrainset_corpus.txt",
    "dev": "NCBIdevelopset_corpus.txt",
    "test": "NCBItestset_corpus.txt",
}


def canonical(concept_id: str) -> str:
    """The id as the KB compares it: parts stripped, `MESH:` dropped, separators kept."""
    return "".join(part if part in "|+" else canonical_id(part) for part in re.split(r"([|+])", concept_id))


def spans(doc: Document, canonical_ids: bool = False) -> tuple:
    """What must survive every annotated format: id, text layout, mention spans, types and ids."""
    return (
        doc.doc_id,
        doc.text,
        tuple((p.offset, p.text) for p in doc.passages),
        tuple(
            (m.start, m.end, m.text, m.type, canonical(m.concept_id) if canonical_ids else m.concept_id)
            for m in doc.mentions
        ),
        tuple((r.type, r.arguments) for r in doc.relations),
    )


@pytest.fixture(scope="module", params=list(SPLITS))
def split(request: pytest.FixtureRequest, ncbi_dir: Path) -> tuple[str, Path, list[Document]]:
    source = ncbi_dir / SPLITS[request.param]
    return request.param, source, list(pubtator.read(source))


@pytest.mark.parametrize(
    ("fmt", "name"), [("bioc-xml", "c.xml"), ("bioc-json", "c.json"), ("jsonl", "c.jsonl")]
)
def test_pubtator_via_format_and_back(
    split: tuple[str, Path, list[Document]], tmp_path: Path, fmt: str, name: str
) -> None:
    _, source, docs = split
    assert write_corpus(docs, tmp_path / name, fmt) == len(docs)
    middle = list(read_corpus(tmp_path / name, fmt))
    assert [spans(d) for d in middle] == [spans(d) for d in docs]
    assert [[p.kind for p in d.passages] for d in middle] == [["title", "abstract"]] * len(docs)
    write_corpus(middle, tmp_path / "back.txt", "pubtator")
    back = list(read_corpus(tmp_path / "back.txt", "pubtator"))
    assert back == docs
    # the trailing-space column survives too: the file comes back byte for byte (bar the leading blank line)
    assert (tmp_path / "back.txt").read_bytes() == source.read_bytes().lstrip(b"\n")


def test_pubtator_via_brat_and_back(split: tuple[str, Path, list[Document]], tmp_path: Path) -> None:
    name, _, docs = split
    unique = list({d.doc_id: d for d in docs}.values())  # brat is one file per document
    assert write_corpus(docs, tmp_path / "brat", "brat") == len(unique)
    middle = list(read_corpus(tmp_path / "brat", "brat"))
    by_id = {d.doc_id: d for d in middle}
    assert sorted(by_id) == sorted(d.doc_id for d in unique)
    # brat ids cannot hold spaces, and brat spells MeSH ids `MESH:D...` (read back bare, as the KB
    # does): the NCBI ids written with a stray space, or with `MESH:`, come back canonical
    assert [spans(by_id[d.doc_id], canonical_ids=True) for d in unique] == [
        spans(d, canonical_ids=True) for d in unique
    ]
    changed = [
        m.concept_id
        for d in unique
        for m, n in zip(d.mentions, by_id[d.doc_id].mentions)
        if m.concept_id != n.concept_id
    ]
    assert all(c != c.strip() or c.startswith("MESH:") for c in changed)
    assert len(changed) == {"train": 2, "dev": 1, "test": 4}[name]
    write_corpus([by_id[d.doc_id] for d in unique], tmp_path / "back.txt", "pubtator")
    back = list(read_corpus(tmp_path / "back.txt", "pubtator"))
    assert [spans(d, canonical_ids=True) for d in back] == [spans(d, canonical_ids=True) for d in unique]
    assert [[p.kind for p in d.passages] for d in back] == [["title", "abstract"]] * len(unique)
