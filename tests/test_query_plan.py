"""The one query plan on real NCBI-disease abstracts, and the proof that every path asks the same queries.

Expected strings are written out by hand from the corpus text, not taken from the plan's own output.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from core.documents import Candidate, Document
from core.formats.pubtator import read
from core.kb.knowledge_base import KnowledgeBase
from core.kb.medic import read_medic
from core.retrieve.exact import ExactMatchRetriever
from core.retrieve.query_plan import QueryPlan, merge_ranked, plan_document, query_strings

APC_DOC = "9950360"  # test set: "... adenomatous polyposis coli (APC) gene mutations ...", then "APC"
COMPOSITE_DOC = "10051005"  # train set: "colorectal, endometrial, and ovarian cancers"
HBOC_DOC = "9342365"  # test set: "breast and ovarian cancer", gold D061325 (the syndrome)


@pytest.fixture(scope="module")
def corpus(ncbi_dir: Path) -> dict[str, Document]:
    wanted = {APC_DOC, COMPOSITE_DOC, HBOC_DOC}
    found = {}
    for name in ("NCBItestset_corpus.txt", "NCBItrainset_corpus.txt"):
        found.update({d.doc_id: d for d in read(ncbi_dir / name) if d.doc_id in wanted})
    assert set(found) == wanted
    return found


@pytest.fixture(scope="module")
def medic(vocab_dir: Path) -> KnowledgeBase:
    return KnowledgeBase(read_medic(vocab_dir / "medic_06Jul2012.txt"))


def _at(document: Document, start: int) -> tuple[int, QueryPlan]:
    index = next(i for i, m in enumerate(document.mentions) if m.start == start)
    return index, plan_document(document)[index]


def composite_only(document: Document) -> Document:
    """The abstract with its composite mention alone (the real sentence, the real annotation)."""
    return document.with_mentions(
        [m for m in document.mentions if m.text == "colorectal, endometrial, and ovarian cancers"]
    )


def test_an_abbreviation_defined_in_the_abstract_is_searched_as_its_long_form(corpus) -> None:
    document = corpus[APC_DOC]
    # the "APC" inside the definition "(APC)" at 408, a later "APC" at 476, and the title's "APC"
    # at 26, before the definition: definitions hold for the whole document
    for start in (408, 476, 26):
        _, plan = _at(document, start)
        assert plan.text == "APC"
        assert plan.query == "adenomatous polyposis coli" and plan.expanded
        assert plan.queries == ("adenomatous polyposis coli",) and plan.parts == ()
        assert plan.key == "adenomatous polyposis coli" and plan.type == "Modifier"
    _, fap = _at(document, 330)
    assert (fap.text, fap.query, fap.type) == ("FAP", "familial adenomatous polyposis", "SpecificDisease")
    _, long_form = _at(document, 380)
    assert long_form.query == "adenomatous polyposis coli" and not long_form.expanded


def test_a_plain_mention_is_one_query(corpus) -> None:
    _, plan = _at(corpus[APC_DOC], 225)
    assert plan == QueryPlan(
        text="colorectal cancer",
        query="colorectal cancer",
        expanded=False,
        parts=(),
        key="colorectal cancer",
        type="SpecificDisease",
    )


def test_a_composite_is_searched_whole_then_part_by_part(corpus) -> None:
    _, plan = _at(corpus[COMPOSITE_DOC], 1563)
    assert plan.text == "colorectal, endometrial, and ovarian cancers" and plan.type == "CompositeMention"
    assert plan.queries == (
        "colorectal, endometrial, and ovarian cancers",
        "colorectal cancers",
        "endometrial cancers",
        "ovarian cancers",
    )
    assert not plan.expanded and plan.is_split


def test_the_gold_link_does_not_steer_the_plan(corpus) -> None:
    """At the desk the link is unknown: an unlinked copy of each mention gets the same plan."""
    for document in corpus.values():
        unlinked = document.with_mentions([m.with_link("") for m in document.mentions])
        assert plan_document(unlinked) == plan_document(document)


def _candidate(concept_id: str, score: float) -> Candidate:
    return Candidate(concept_id, concept_id, concept_id, score)


def test_merge_keeps_the_whole_mentions_best_first_then_each_parts_best() -> None:
    whole = [_candidate("SYNDROME", 0.82), _candidate("OVARY", 0.79), _candidate("W3", 0.7)]
    breast = [_candidate("BREAST", 1.0), _candidate("B2", 0.95), _candidate("B3", 0.9)]
    ovary = [_candidate("OVARY", 1.0), _candidate("O2", 0.6), _candidate("O3", 0.5)]
    assert [c.concept_id for c in merge_ranked([whole, breast, ovary], 16)] == [
        "SYNDROME",
        "BREAST",
        "OVARY",
        "B2",
        "O2",
        "W3",
        "B3",
        "O3",
    ]
    assert [c.concept_id for c in merge_ranked([whole, breast, ovary], 4)] == [
        "SYNDROME",
        "BREAST",
        "OVARY",
        "B2",
    ]
    assert merge_ranked([whole], 2) == whole[:2]


class RecordingRetriever:
    """A real retriever (exact match on MEDIC) that also records every query it is asked."""

    def __init__(self, kb: KnowledgeBase):
        self.inner = ExactMatchRetriever()
        self.inner.index(kb)
        self.asked: list[str] = []

    def index(self, kb, **_options) -> None:
        self.inner.index(kb)

    def retrieve(self, mentions: Sequence[str], k: int = 64) -> list[list[Candidate]]:
        self.asked.extend(mentions)
        return self.inner.retrieve(mentions, k)


# written from the corpus by hand: every mention of 9950360 is APC, FAP, colorectal cancer or a long form
APC_QUERIES = {"adenomatous polyposis coli", "familial adenomatous polyposis", "colorectal cancer"}
COMPOSITE_QUERIES = {
    "colorectal, endometrial, and ovarian cancers",
    "colorectal cancers",
    "endometrial cancers",
    "ovarian cancers",
}


def test_linker_evaluate_bench_and_training_ask_the_same_queries(corpus, medic) -> None:
    from bench.learning import _order_by_margin
    from bench.rerank import _candidates
    from core.evaluate.retrieval import evaluate_retriever, mention_pairs
    from core.pipeline import Linker

    documents = [corpus[APC_DOC], composite_only(corpus[COMPOSITE_DOC])]
    expected = APC_QUERIES | COMPOSITE_QUERIES
    retriever = RecordingRetriever(medic)

    linked = Linker(retriever, candidates=16).retrieve(documents)
    assert set(retriever.asked) == expected
    retriever.asked.clear()
    details: list = []
    evaluate_retriever(retriever, documents, medic, details=details)
    assert set(retriever.asked) == expected
    retriever.asked.clear()
    benched = _candidates(retriever, documents, 16)
    assert set(retriever.asked) == expected
    retriever.asked.clear()
    _order_by_margin(retriever, documents)
    assert set(retriever.asked) == expected
    assert set(query_strings(documents)) == expected  # `bench retriever`'s stream

    # the same merged candidates, mention by mention, whichever path asked
    assert benched == linked
    evaluated = [top for _, _, top in details]
    assert evaluated == [row[:5] for per_document in linked for row in per_document]
    # the composite's parts each found their concept (exact match on MEDIC names)
    composite = [c.concept_id for c in linked[1][0]]
    assert {"D010051", "D016889", "D015179"} <= {i for c in composite for i in medic.ids_of(c)}

    # training pairs are the planned queries: the long form, never the bare "APC"
    pairs = mention_pairs([corpus[APC_DOC]])
    assert ("adenomatous polyposis coli", "D011125") in pairs
    assert not any(text in ("APC", "FAP") for text, _ in pairs)
    assert {text for text, _ in pairs} == APC_QUERIES


def test_project_training_pairs_use_the_plan(corpus, medic, tmp_path) -> None:
    """Retraining reads its pairs from a real project: gold and curated pairs carry the expanded text."""
    from core.learn.synonyms import curated_synonyms
    from core.learn.training_data import curated_pairs, gold_pairs, training_set
    from core.store import Project

    document = corpus[APC_DOC]
    needed = {i for m in document.mentions for i in m.concept_ids}
    kb = KnowledgeBase(c for c in medic if set(medic.ids_of(c.concept_id)) & needed)
    project = Project.create(tmp_path / "project")
    try:
        project.kb.import_concepts(kb, source="medic subset", fmt="medic")
        project.documents.import_documents([document], source=f"{APC_DOC}.txt", fmt="pubtator", split="train")
        kb = project.kb.knowledge_base()
        gold = gold_pairs(project)
        assert {text for text, _ in gold} == APC_QUERIES
        assert gold.count(("adenomatous polyposis coli", "D011125")) == 1 + 6  # the long form + six "APC"
        data = training_set(project, kb, held_out_fraction=0.0)
        assert {text for text, _ in data.pairs} == APC_QUERIES
        _, ids = next(iter(project.documents.documents_with_mention_ids()))
        project.curation.record_decision(ids[0], "accept", concept_id="D011125", curator="ann")  # title "APC"
        assert curated_pairs(project) == [("adenomatous polyposis coli", "D011125")]
        # a curator synonym is the long form, not a short form that means something else elsewhere
        assert curated_synonyms(project, kb) == {"D011125": ["adenomatous polyposis coli"]}
    finally:
        project.close()


def test_a_name_containing_and_keeps_its_whole_match_first(corpus, medic) -> None:
    """ "breast and ovarian cancer" in a BRCA1 abstract names the syndrome (gold D061325): the parts'
    exact matches (score 1.0) follow the whole mention's best instead of displacing it."""
    from core.pipeline import Linker
    from core.retrieve.tfidf import TfidfRetriever

    document = corpus[HBOC_DOC]
    mention = next(m for m in document.mentions if m.text == "breast and ovarian cancer")
    assert mention.concept_id == "D061325"
    retriever = TfidfRetriever()
    retriever.index(medic)
    [[ranked]] = Linker(retriever).retrieve([document.with_mentions([mention])])
    top = [c.concept_id for c in ranked[:3]]
    # whole: "Hereditary Breast and Ovarian Cancer Syndrome"; then the parts' exact matches, MEDIC's
    # "Breast Cancer" (OMIM:114480) and "Ovarian Cancer" (OMIM:167000), both scored 1.0
    assert top[0] == "D061325"
    assert set(top[1:]) == {"OMIM:114480", "OMIM:167000"}
