"""Property tests: any document PubTator (or JSONL) can hold comes back from a write and a read."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.documents import Document, Mention, Passage, Relation, document_from_title_abstract
from core.formats import jsonl, pubtator

# One PubTator line each: no line breaks in titles and abstracts (the writer would turn them into
# spaces), and no NUL (the reader refuses it: no XML export could write it, issue 33). Tabs, pipes,
# Unicode line separators and non-BMP characters are all fair game.
LINE_TEXT = st.text(st.characters(blacklist_characters="\n\r\x00", blacklist_categories=("Cs",)), max_size=60)
FIELD = st.text(st.characters(blacklist_characters="\t\n\r", blacklist_categories=("Cs",)), max_size=12)
PMID = st.from_regex(r"[0-9A-Za-z_.-]{1,12}", fullmatch=True)
CONCEPT_ID = st.sampled_from(
    ["", "-1", "D003924", "OMIM:601450", "D001943|D010051", "D004829+D003294", "UMLS:C0011849"]
)
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def pubtator_documents(draw: st.DrawFn) -> Document:
    doc = document_from_title_abstract(draw(PMID), draw(LINE_TEXT), draw(LINE_TEXT))
    length = len(doc.text)
    mentions = []
    for _ in range(draw(st.integers(0, 6))):
        start = draw(st.integers(0, length))
        end = draw(st.integers(start, length))
        infons = {}
        if draw(st.booleans()):
            infons["individual_mentions"] = draw(FIELD)
        mentions.append(
            Mention(start, end, doc.text[start:end], draw(FIELD), draw(CONCEPT_ID), infons=infons)
        )
    relations = [
        Relation(draw(st.sampled_from(["CID", "Association"])), (draw(CONCEPT_ID.filter(bool)), draw(FIELD)))
        for _ in range(draw(st.integers(0, 2)))
    ]
    return Document(doc.doc_id, doc.passages, tuple(mentions), tuple(relations))


@SETTINGS
# blocks of one PMID next to each other are paragraphs of one document (NLM-Chem), so documents that
# share a PMID are not generated (test_formats_pubtator_blocks.py covers repeats and paragraphs)
@given(st.lists(pubtator_documents(), min_size=1, max_size=4, unique_by=lambda d: d.doc_id))
def test_pubtator_round_trip(docs: list[Document]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "docs.pubtator"
        assert pubtator.write(docs, path) == len(docs)
        again = list(pubtator.read(path))
        assert again == docs
        for before, after in zip(docs, again):
            assert [m.infons.get("individual_mentions") for m in after.mentions] == [
                m.infons.get("individual_mentions") for m in before.mentions
            ]
            assert not after.mention_text_mismatches()
        # a second write of what was read gives the same bytes
        second = Path(folder) / "again.pubtator"
        pubtator.write(again, second)
        assert second.read_bytes() == path.read_bytes()


ANY_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
# ids as the readers accept them (core.limits): no control characters; a doc_id non-empty and unpadded
ID_TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), max_size=40)
DOC_ID = ID_TEXT.map(str.strip).filter(bool)
STRING_MAP = st.dictionaries(st.text(max_size=8), ANY_TEXT, max_size=3)


@st.composite
def any_documents(draw: st.DrawFn) -> Document:
    passages = []
    offset = 0
    for _ in range(draw(st.integers(0, 4))):
        offset += draw(st.integers(0, 5))
        passage = Passage(
            offset, draw(ANY_TEXT), draw(st.sampled_from(["", "title", "abstract", "paragraph"]))
        )
        passages.append(passage)
        offset = passage.end - draw(st.integers(0, 3))  # passages may overlap a little
        offset = max(offset, passage.offset)
    doc = Document(draw(DOC_ID), tuple(passages))
    length = len(doc.text)
    mentions = []
    for _ in range(draw(st.integers(0, 5))):
        start = draw(st.integers(0, length))
        end = draw(st.integers(start, length))
        mentions.append(
            Mention(
                start,
                end,
                doc.text[start:end],
                draw(ANY_TEXT),
                draw(ID_TEXT),
                draw(ID_TEXT),
                draw(st.sampled_from(["gold", "detected", "curated"])),
                draw(STRING_MAP),
            )
        )
    relations = [
        Relation(draw(ANY_TEXT), tuple(draw(st.lists(ANY_TEXT, max_size=3))), draw(ANY_TEXT))
        for _ in range(draw(st.integers(0, 2)))
    ]
    return Document(doc.doc_id, doc.passages, tuple(mentions), tuple(relations), draw(STRING_MAP))


@SETTINGS
@given(st.lists(any_documents(), min_size=1, max_size=4))
def test_jsonl_round_trip_is_lossless(docs: list[Document]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "docs.jsonl"
        assert jsonl.write(docs, path) == len(docs)
        again = list(jsonl.read(path))
        assert again == docs
        assert [d.metadata for d in again] == [d.metadata for d in docs]
        assert [[m.infons for m in d.mentions] for d in again] == [
            [m.infons for m in d.mentions] for d in docs
        ]
