"""Baselines, composite splitting, metrics and the evaluation protocol on real slices."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.documents import Mention, document_from_title_abstract
from core.evaluate.metrics import composite_rank, first_hit_rank, hit_rate, ranking_metrics
from core.evaluate.retrieval import evaluate_retriever, evaluation_items
from core.formats.pubtator import read
from core.kb.knowledge_base import KnowledgeBase
from core.kb.medic import read_medic
from core.retrieve.base import Retriever
from core.retrieve.biencoder import BiEncoderRetriever
from core.retrieve.exact import ExactMatchRetriever
from core.retrieve.mentions import split_composite
from core.retrieve.tfidf import TfidfRetriever


@pytest.fixture(scope="module")
def medic(vocab_dir: Path) -> KnowledgeBase:
    return KnowledgeBase(read_medic(vocab_dir / "medic_06Jul2012.txt"))


@pytest.fixture(scope="module")
def test_docs(ncbi_dir: Path):
    return list(read(ncbi_dir / "NCBItestset_corpus.txt"))


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        ("breast and ovarian cancer", ["breast cancer", "ovarian cancer"]),
        ("breast and/or ovarian cancer", ["breast cancer", "ovarian cancer"]),
        (
            "colorectal, endometrial, and ovarian cancers",
            ["colorectal cancers", "endometrial cancers", "ovarian cancers"],
        ),
        (
            "Duchenne and the milder Becker muscular dystrophies",
            ["Duchenne muscular dystrophies", "Becker muscular dystrophies"],
        ),
        ("cleft lip/palate", ["cleft lip", "cleft palate"]),
        ("deficiency of C6 and C7", ["deficiency of C6", "deficiency of C7"]),
        (
            "ovarian, gastric, and biliary carcinomas",
            ["ovarian carcinomas", "gastric carcinomas", "biliary carcinomas"],
        ),
        ("cat eye syndrome", ["cat eye syndrome"]),
    ],
)
def test_split_composite(text: str, pieces: list[str]) -> None:
    assert split_composite(text) == pieces


def test_metrics_on_hand_made_cases() -> None:
    gold = {"D001943", "D010051"}
    assert first_hit_rank([{"X"}, {"Y", "D010051"}, {"D001943"}], gold) == 2
    assert first_hit_rank([{"X"}], gold) is None
    assert composite_rank([1, 3]) == 3 and composite_rank([1, None]) is None
    ranks = [1, 2, 7, 30, None]
    assert hit_rate(ranks, 1) == 0.2 and hit_rate(ranks, 10) == 0.6 and hit_rate([], 5) == 0.0
    assert ranking_metrics(ranks) == {
        "acc@1": 20.0,
        "acc@5": 40.0,
        "acc@10": 60.0,
        "recall@20": 60.0,
        "recall@64": 80.0,
    }


def test_protocol_items_follow_the_query_plan() -> None:
    """Evaluation plans mentions as the desk does: the gold link neither decides the split nor counts."""
    title = "Breast and ovarian cancer in ataxia telangiectasia (AT)."
    doc = document_from_title_abstract("1", title, "AT patients were studied.")
    at = title.index("(AT)") + 1
    mentions = [
        Mention(0, 25, "Breast and ovarian cancer", "CompositeMention", "D001943|D010051"),
        Mention(at, at + 2, "AT", "SpecificDisease", "D001260"),
        Mention(0, 6, "Breast", "Modifier", "-1"),
    ]
    items = evaluation_items([doc.with_mentions(mentions)])
    assert [i.queries for i in items] == [
        ("Breast and ovarian cancer", "Breast cancer", "ovarian cancer"),
        ("ataxia telangiectasia",),
    ]
    assert items[0].gold == {"D001943", "D010051"}
    assert items[1].plan.expanded and not items[0].plan.expanded


def test_exact_match_on_ncbi_test_slice(medic: KnowledgeBase, test_docs) -> None:
    retriever = ExactMatchRetriever()
    assert isinstance(retriever, Retriever)
    metrics = evaluate_retriever(retriever, test_docs[:20], medic)
    assert metrics["mentions"] == sum(1 for d in test_docs[:20] for m in d.mentions if m.concept_ids)
    # exact matches are precise but miss variants: measured acc@1 54.9, recall@64 59.3 here
    # (a name shared by several concepts returns them all)
    assert 45 <= metrics["acc@1"] <= 65
    assert metrics["acc@1"] <= metrics["recall@64"] <= 70


def test_tfidf_on_real_names(medic: KnowledgeBase, test_docs) -> None:
    retriever = TfidfRetriever()
    metrics = evaluate_retriever(retriever, test_docs[:20], medic)
    assert metrics["acc@1"] >= 65 and metrics["recall@64"] >= 80  # measured 74.5 / 84.8
    (candidates,) = retriever.retrieve(["hereditary breast cancers"], k=64)
    assert len(candidates) == 64 and len({c.concept_id for c in candidates}) == 64
    assert candidates[0].concept_id == "D001943" or "breast" in candidates[0].matched_name.lower()


def test_biencoder_on_small_slice(medic: KnowledgeBase) -> None:
    small = KnowledgeBase(list(medic)[:60])
    retriever = BiEncoderRetriever()
    retriever.index(small)
    concept = next(c for c in small if len(c.names) >= 3)
    (candidates,) = retriever.retrieve([concept.names[-1]], k=5)
    assert candidates[0].concept_id == concept.concept_id
    assert retriever.retrieve(["", "x" * 500], k=3)[1][0].concept_id in small.concepts
