"""Score fusion: the blend, its per-mention scaling, and the dev-chosen weight."""

from __future__ import annotations

import pytest

from core.documents import Candidate, Mention, document_from_title_abstract
from core.rerank.fusion import choose_weight, fuse, refuse, scaled_retriever_scores
from core.rerank.training import ranked_accuracy


def _cands(scores: list[tuple[str, float]]) -> list[Candidate]:
    return [Candidate(cid, cid.lower(), retriever_score=s) for cid, s in scores]


def test_scaling_is_per_mention_and_handles_ties():
    assert scaled_retriever_scores(_cands([("A", 0.9), ("B", 0.5), ("C", 0.7)])) == pytest.approx(
        [1.0, 0.0, 0.5]
    )
    assert scaled_retriever_scores(_cands([("A", 3.0), ("B", 3.0)])) == [1.0, 1.0]
    assert scaled_retriever_scores([]) == []


def test_weight_zero_is_the_pure_reranker_and_weight_one_the_retriever():
    cands = _cands([("A", 0.9), ("B", 0.5), ("C", 0.1)])
    probabilities = [0.2, 0.9, 0.4]
    pure = fuse(cands, probabilities, 0.0)
    assert [c.concept_id for c in pure] == ["B", "C", "A"]
    assert [c.reranker_score for c in pure] == pytest.approx([0.9, 0.4, 0.2])
    assert [c.concept_id for c in fuse(cands, probabilities, 1.0)] == ["A", "B", "C"]
    half = fuse(cands, probabilities, 0.5)  # A: .1 + .5 = .6, B: .45 + .25 = .7, C: .2 + 0 = .2
    assert [c.concept_id for c in half] == ["B", "A", "C"]
    assert [c.reranker_score for c in half] == pytest.approx([0.7, 0.6, 0.2])
    assert all(
        c.retriever_score == o.retriever_score for c in half for o in cands if o.concept_id == c.concept_id
    )
    with pytest.raises(ValueError, match="outside"):
        fuse(cands, probabilities, 1.5)


def test_weight_is_chosen_on_dev_and_never_hides_the_reranker():
    doc = document_from_title_abstract("1", "Fever and cough.", "")
    doc = doc.with_mentions(
        [Mention(0, 5, "Fever", concept_id="A"), Mention(10, 15, "cough", concept_id="B")]
    )
    # mention 1: the retriever is right (A first) but the reranker prefers Z a little;
    # mention 2: the retriever is wrong (Y first) and the reranker is sure of B.
    first = fuse(_cands([("A", 0.9), ("Z", 0.6)]), [0.45, 0.55], 0.0)
    second = fuse(_cands([("Y", 0.9), ("B", 0.8)]), [0.05, 0.95], 0.0)
    ranked = [[first, second]]
    assert ranked_accuracy([doc], ranked, None) == 0.5
    weight, table = choose_weight(ranked, lambda r: ranked_accuracy([doc], r, None))
    assert table[0.0] == 0.5 and table[weight] == 1.0
    assert 0.0 < weight < 1.0 and max(table) < 1.0
    assert weight == min(w for w, acc in table.items() if acc == 1.0)  # smallest weight on ties
    fused = refuse(ranked, weight)
    assert [row[0].concept_id for row in fused[0]] == ["A", "B"]
