"""Sentences and abbreviations on the real NCBI-disease corpus (skipped when the shared data is absent).

The corpus is read with a few lines of PubTator parsing here, independent of core.formats.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.documents import Document, Mention, document_from_title_abstract
from core.text.abbreviations import AbbreviationMap, find_abbreviations_in_document
from core.text.normalize import normalize_name
from core.text.sentences import sentence_spans_for_mentions, sentences_of

SPLIT_FILES = {
    "train": "NCBItrainset_corpus.txt",
    "dev": "NCBIdevelopset_corpus.txt",
    "test": "NCBItestset_corpus.txt",
}
# The packed cross-encoder paper reports 901 sentences for the NCBI-disease test split.
PAPER_TEST_SENTENCES = 901


def read_pubtator(path: Path) -> list[Document]:
    blocks: list[tuple[str, str, str, list[Mention]]] = []
    title = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        pmid, _, rest = line.partition("|")
        if rest.startswith("t|"):
            title = rest[2:]
        elif rest.startswith("a|"):
            blocks.append((pmid, title, rest[2:], []))
        else:
            _, start, end, text, kind, concept = line.split("\t")[:6]
            blocks[-1][3].append(Mention(int(start), int(end), text, kind, concept))
    return [document_from_title_abstract(p, t, a).with_mentions(ms) for p, t, a, ms in blocks]


@pytest.fixture(scope="module")
def ncbi(ncbi_dir: Path) -> dict[str, list[Document]]:
    return {split: read_pubtator(ncbi_dir / name) for split, name in SPLIT_FILES.items()}


def test_reader_sees_the_documented_corpus(ncbi: dict[str, list[Document]]) -> None:
    assert [len(ncbi[s]) for s in ("train", "dev", "test")] == [593, 100, 100]
    assert sum(len(d.mentions) for d in ncbi["test"]) == 960
    assert all(not d.mention_text_mismatches() for d in ncbi["test"])


def test_sentence_offsets_reproduce_the_text(ncbi: dict[str, list[Document]]) -> None:
    for doc in ncbi["test"] + ncbi["dev"]:
        text = doc.text
        spans = sentences_of(doc)
        # every non-space character is in exactly one sentence, in order
        assert "".join(text[s.start : s.end] for s in spans).replace(" ", "") == "".join(text.split())
        assert all(a.end <= b.start for a, b in zip(spans, spans[1:]))
        # each passage starts a sentence
        starts = {s.start for s in spans}
        assert all(p.offset in starts for p in doc.passages if p.text[:1].strip())


def test_no_sentence_starts_inside_or_right_after_eg_ie_et_al(ncbi: dict[str, list[Document]]) -> None:
    checked = 0
    for doc in ncbi["train"] + ncbi["dev"] + ncbi["test"]:
        text = doc.text
        starts = {s.start for s in sentences_of(doc)}
        for match in re.finditer(r"\b(?:e\. ?g\.|i\. ?e\.|et al\.)", text):
            after = match.end()
            while after < len(text) and text[after].isspace():
                after += 1
            assert not any(match.start() < s < match.end() for s in starts), (doc.doc_id, match.group())
            assert after not in starts, (doc.doc_id, text[match.start() - 30 : after + 20])
            checked += 1
    assert checked >= 35  # the three files hold 37 of them


def test_sentence_count_on_the_test_split_is_close_to_the_paper(ncbi: dict[str, list[Document]]) -> None:
    counts = {split: sum(len(sentences_of(d)) for d in docs) for split, docs in ncbi.items()}
    print(
        f"NCBI sentences: {counts}; test vs paper {PAPER_TEST_SENTENCES}: {counts['test'] - PAPER_TEST_SENTENCES:+d}"
    )
    assert abs(counts["test"] - PAPER_TEST_SENTENCES) <= 15
    # every document has its title plus at least one abstract sentence
    assert all(len(sentences_of(d)) >= 2 for d in ncbi["test"])


def test_no_gold_mention_crosses_a_sentence_boundary(ncbi: dict[str, list[Document]]) -> None:
    for docs in ncbi.values():
        for doc in docs:
            sentences = sentences_of(doc)
            merged = sentence_spans_for_mentions(doc)
            assert merged == sentences, doc.doc_id  # nothing to merge: no split falls inside a mention
            for mention in doc.mentions:
                assert sum(s.start <= mention.start and mention.end <= s.end for s in merged) == 1


# Definitions read off the abstracts by hand: PMID -> (short, long) pairs the detector must find.
EXPECTED_TEST_DEFINITIONS = {
    "9949209": [("WD", "Wilson disease"), ("CT", "copper toxicosis")],
    "9950360": [("FAP", "familial adenomatous polyposis"), ("APC", "adenomatous polyposis coli")],
    "9634518": [
        ("PKU", "Phenylketonuria"),
        ("MHP", "mild hyperphenylalaninemia"),
        ("PAH", "phenylalanine hydroxylase"),
    ],
    "9674903": [("UPD", "uniparental disomy"), ("PWS", "Prader-Willi syndrome")],
    "9831355": [("HNPCC", "hereditary non-polyposis colorectal cancer")],
    "9744473": [("ARSA", "arylsulfatase A"), ("MLD", "metachromatic leukodystrophy")],
    "9529364": [("DDS", "Denys-Drash syndrome"), ("DMS", "diffuse mesangial sclerosis")],
    "9590178": [("WT1", "Wilms tumor 1"), ("SF-1", "steroidogenic factor 1")],
}


def test_hand_checked_definitions_in_the_test_split(ncbi: dict[str, list[Document]]) -> None:
    documents = {d.doc_id: d for d in ncbi["test"]}
    for pmid, expected in EXPECTED_TEST_DEFINITIONS.items():
        doc = documents[pmid]
        found = {(a.short, a.long) for a in find_abbreviations_in_document(doc)}
        assert set(expected) <= found, pmid
        mapping = AbbreviationMap.from_document(doc)
        for short, long in expected:
            assert mapping.expand(short) == long
    # the offsets of every definition point at the text they name
    for doc in ncbi["test"]:
        for a in find_abbreviations_in_document(doc):
            assert doc.text[a.short_span.start : a.short_span.end] == a.short
            assert doc.text[a.long_span.start : a.long_span.end] == a.long


def test_mentions_expand_inside_longer_mentions(ncbi: dict[str, list[Document]]) -> None:
    documents = {d.doc_id: d for d in ncbi["test"]}
    mapping = AbbreviationMap.from_document(documents["9949209"])
    assert mapping.expand("WD gene") == "Wilson disease gene"
    assert mapping.expand("non-WD") == "non-Wilson disease"
    # "DM" stands for the Latin "dystrophia myotonica": Schwartz & Hearst rightly find no definition
    assert "DM" not in AbbreviationMap.from_document(documents["9863607"])


def test_plural_definitions_in_the_training_split(ncbi: dict[str, list[Document]]) -> None:
    documents = {d.doc_id: d for d in ncbi["train"]}
    # "congenital hypertrophy of the retinal pigment epithelium (CHRPEs)": matched without its "s"
    chrpe = AbbreviationMap.from_document(documents["1313112"])
    assert chrpe.expand("CHRPEs") == "congenital hypertrophy of the retinal pigment epithelium"
    assert chrpe.expand("CHRPE") == "congenital hypertrophy of the retinal pigment epithelium"
    # "restriction fragment length polymorphisms (RFLPs)": the singular gets a singular long form
    rflp = AbbreviationMap.from_document(documents["6086495"])
    assert rflp.expand("RFLPs") == "restriction fragment length polymorphisms"
    assert rflp.expand("RFLP") == "restriction fragment length polymorphism"
    assert rflp.expand("BMD") == "Becker muscular dystrophy"


def _short_defined_mentions(doc: Document) -> list[Mention]:
    """Gold mentions written all-caps in at most 6 characters that the text puts in parentheses."""
    chosen = []
    for mention in doc.mentions:
        text = mention.text
        if len(text) > 6 or text.upper() != text or not any(ch.isalpha() for ch in text):
            continue
        if re.search(rf"\(\s*{re.escape(text)}\s*[),;]", doc.text):
            chosen.append(mention)
    return chosen


def test_short_defined_mentions_get_expanded(ncbi: dict[str, list[Document]]) -> None:
    for split in ("test", "dev"):
        total = expanded = agreeing = 0
        for doc in ncbi[split]:
            mapping = AbbreviationMap.from_document(doc)
            for mention in _short_defined_mentions(doc):
                total += 1
                expansion = mapping.expand(mention.text)
                if expansion == mention.text:
                    continue
                expanded += 1
                # the expansion names the same concept as a written-out gold mention of the document
                folded = normalize_name(expansion)
                agreeing += any(
                    other.concept_id == mention.concept_id
                    and other.text != mention.text
                    and (normalize_name(other.text) in folded or folded in normalize_name(other.text))
                    for other in doc.mentions
                )
        print(
            f"NCBI {split}: {total} short defined mentions, {expanded} expanded ({expanded / total:.3f}), "
            f"{agreeing} agree with a gold long mention ({agreeing / total:.3f})"
        )
        assert total >= 150
        assert expanded / total >= 0.80
        assert agreeing / total >= 0.78
