"""Inter-annotator agreement against hand-computed cases, and adjudication, on a real (model-free) project
built from the bundled demo KB and abstracts."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from core.evaluate.agreement import agreement, cohen_kappa, curators, span_scores
from core.jobs.curation.adjudication import adjudicate
from core.store import Project


def test_kappa_textbook_two_by_two():
    # 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> p_o 0.7, p_e 0.5, kappa 0.4
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_kappa_three_categories():
    # confusion [[4,1,0],[1,3,1],[0,1,4]]: p_o 11/15, p_e 1/3 -> kappa (11/15 - 1/3) / (2/3) = 0.6
    cells = {
        ("x", "x"): 4,
        ("x", "y"): 1,
        ("y", "x"): 1,
        ("y", "y"): 3,
        ("y", "z"): 1,
        ("z", "y"): 1,
        ("z", "z"): 4,
    }
    a = [x for (x, _), n in cells.items() for _ in range(n)]
    b = [y for (_, y), n in cells.items() for _ in range(n)]
    assert cohen_kappa(a, b) == pytest.approx(0.6)
    assert cohen_kappa([], []) is None
    assert cohen_kappa(["D1", "D1"], ["D1", "D1"]) == 1.0  # one shared label: perfect, not 0/0


def test_span_scores():
    assert span_scores({(0, 5), (6, 9)}, {(0, 5)}) == (1.0, 0.5, pytest.approx(2 / 3))
    assert span_scores(set(), set()) == (1.0, 1.0, 1.0)


@pytest.fixture
def project(tmp_path):
    from app.resources import demo_dir
    from core.formats import read_corpus
    from core.kb import load_kb

    source = demo_dir()
    project = Project.create(tmp_path / "p")
    project.kb.import_concepts(load_kb(source / "kb.tsv", "tsv"))
    project.documents.import_documents(read_corpus(source / "abstracts.pubtator", "pubtator"))
    yield project
    project.close()


def test_two_curators_kappa_span_f1_and_adjudication(project):
    document, ids = next(project.documents.documents_with_mention_ids(ids=["90000001"]))
    gold = document.mentions[0].concept_id
    other = next(c.concept_id for c in project.kb.knowledge_base() if c.concept_id != gold)
    # A: X X X -1 ; B: X Y X -1  -> p_o 3/4, p_e 3/4*2/4 + 1/4*1/4 = 7/16, kappa 5/9
    for mention_id, label in zip(ids[:4], (gold, gold, gold, "-1"), strict=True):
        project.curation.record_decision(
            mention_id,
            "nil" if label == "-1" else "accept",
            concept_id="" if label == "-1" else label,
            curator="A",
        )
    for mention_id, label in zip(ids[:4], (gold, other, gold, "-1"), strict=True):
        action = "nil" if label == "-1" else "accept" if label == gold else "correct"
        project.curation.record_decision(mention_id, action, concept_id="" if label == "-1" else label, curator="B")
    project.curation.record_decision(
        ids[4], "accept", concept_id=gold, curator="A"
    )  # B never decided it: not compared
    project.documents.add_mention("90000001", 0, 5, curator="A")
    project.documents.add_mention("90000001", 0, 5, curator="B")
    project.documents.add_mention("90000001", 6, 11, curator="B")
    imported = len(document.mentions)

    result = agreement(project, "A", "B")
    assert curators(project) == ["A", "B"]
    assert result.mentions_compared == 4 and result.mentions_agreed == 3
    assert result.kappa == pytest.approx(float(Fraction(5, 9)))
    # spans: A = imported + (0,5); B = imported + (0,5) + (6,11); B against A
    assert result.span_precision == pytest.approx((imported + 1) / (imported + 2))
    assert result.span_recall == 1.0
    assert result.per_document["90000001"]["kappa"] == pytest.approx(5 / 9)
    assert [(d.mention_id, d.label_a, d.label_b) for d in result.disagreements] == [(ids[1], gold, other)]

    adjudicate(project, ids[1], other, "judge", between=("A", "B"))
    final = project.curation.current_decisions()[ids[1]]
    assert (final.curator, final.action, final.concept_id) == ("judge", "correct", other)
    assert json.loads(final.detail_json) == {"adjudicated": True, "between": ["A", "B"]}
    assert project.curation.current_decisions(curator="A")[ids[1]].concept_id == gold  # history kept


def test_links_to_several_concepts_agree_in_any_order_and_train_nothing(project):
    from core.learn.training_data import held_out_ids, training_set

    held_out = held_out_ids(project.documents.document_ids())
    trained_on = next(d for d in project.documents.document_ids() if d not in held_out)
    document, ids = next(project.documents.documents_with_mention_ids(ids=[trained_on]))
    first, second = [c.concept_id for c in project.kb.knowledge_base()][:2]
    project.curation.record_decision(ids[0], "accept", concept_id=f"{first}|{second}", curator="A")
    project.curation.record_decision(ids[0], "accept", concept_id=f"{second}|{first}", curator="B")
    result = agreement(project, "A", "B")
    assert (result.mentions_compared, result.mentions_agreed) == (1, 1)

    training = training_set(project, project.kb.knowledge_base())
    assert training.counts()["linked_to_several_concepts"] == 1
    assert training.counts()["accepted"] == 0  # an "A|B" link is no single name-to-concept pair
    assert (document.mentions[0].text, f"{first}|{second}") not in training.pairs
