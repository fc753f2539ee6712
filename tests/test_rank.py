"""The learned ranker: its annotation prior (leave-one-document-out), calibration, training from
curator decisions in a real project, the fallback without any, and refusal of another feature set."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from core.documents import Candidate, Document, Mention, Passage  # noqa: E402
from core.errors import ModelError  # noqa: E402
from core.kb.concept import Concept  # noqa: E402
from core.kb.knowledge_base import KnowledgeBase  # noqa: E402
from core.rank.calibration import (  # noqa: E402
    apply_calibration,
    expected_calibration_error,
    fit_calibration,
    precision_coverage,
)
from core.rank.features import FEATURE_NAMES  # noqa: E402
from core.rank.prior import AnnotationPrior  # noqa: E402
from core.rank.query import MentionQuery  # noqa: E402
from core.rank.stage import RankingStage, annotation_prior  # noqa: E402

# Sentences of NCBI-disease abstracts (PMIDs 10192393 and 8696340), one linked mention each.
ATAXIA = "Constitutional RB1-gene mutations in patients with ataxia-telangiectasia were not found."
CANCER = "Germline mutations in BRCA1 predispose to breast cancer and ovarian cancer."


def _document(doc_id: str, text: str, mention: str, concept_id: str) -> Document:
    start = text.index(mention)
    return Document(
        doc_id=doc_id,
        passages=(Passage(0, text, "title"),),
        mentions=(Mention(start, start + len(mention), mention, "Disease", concept_id),),
    )


@pytest.fixture(scope="module")
def small_kb() -> KnowledgeBase:
    return KnowledgeBase(
        [
            Concept("D001260", "MESH", "Ataxia Telangiectasia", ("Louis-Bar syndrome",)),
            Concept("D001943", "MESH", "Breast Neoplasms", ("breast cancer",)),
            Concept("D010051", "MESH", "Ovarian Neoplasms", ("ovarian cancer",)),
        ]
    )


def test_prior_counts_are_smoothed_and_leave_the_scored_document_out(small_kb):
    links = [
        ("10192393", "ataxia-telangiectasia", "D001260"),  # this string is seen in one document only
        ("8696340", "breast cancer", "D001943"),
        ("8696340", "breast cancer", "D001943"),
        ("9000001", "Breast cancer", "D001943"),
        ("9000001", "breast cancer", "D010051"),  # a wrong-looking link elsewhere still counts
    ]
    prior = AnnotationPrior.from_links(links, smoothing=1.0)
    # scored as part of its own document: no evidence at all for the one-document string
    alone = prior.evidence("Ataxia-Telangiectasia", ["D001260"], exclude_document="10192393")[0]
    assert (alone.probability, alone.string_count, alone.is_top) == (0.0, 0, False)
    assert alone.concept_count == 0
    # scored from any other document: 1 link / (1 + smoothing 1)
    elsewhere = prior.evidence("ataxia telangiectasia", ["D001260"], exclude_document="8696340")[0]
    assert elsewhere.probability == pytest.approx(0.5) and elsewhere.is_top
    # "breast cancer" from document 8696340: only 9000001's links remain (1 x D001943, 1 x D010051)
    left = prior.evidence("breast cancer", ["D001943", "D010051"], exclude_document="8696340")
    assert [e.probability for e in left] == pytest.approx([1 / 3, 1 / 3])
    assert [e.string_count for e in left] == [2, 2]
    everything = prior.evidence("breast cancer", ["D001943", "D010051"])
    assert [e.probability for e in everything] == pytest.approx([3 / 5, 1 / 5])
    assert [e.is_top for e in everything] == [True, False]


def test_stage_gives_a_one_document_string_no_prior_and_no_extra_candidate(small_kb):
    own = _document("10192393", ATAXIA, "ataxia-telangiectasia", "D001260")
    other = _document("8696340", CANCER, "breast cancer", "D001943")
    stage = RankingStage(None, small_kb, annotation_prior([own, other]))
    retrieved = [Candidate("D001943", "Breast Neoplasms", "breast cancer", 0.41)]
    queries = [
        MentionQuery("10192393", "ataxia-telangiectasia", ("ataxia-telangiectasia",)),  # its own document
        MentionQuery("7000000", "ataxia-telangiectasia", ("ataxia-telangiectasia",)),  # a new document
    ]
    (own_found, own_rows), (new_found, new_rows) = stage.features(
        queries, [retrieved, retrieved], use_cross_encoder=False, union=0
    )
    column = {name: i for i, name in enumerate(FEATURE_NAMES)}
    assert [c.concept_id for c in own_found] == ["D001943"]  # the prior adds nothing from its own doc
    assert own_rows[0, column["prior_string_unseen"]] == 1.0
    assert own_rows[0, column["prior_probability"]] == 0.0
    # from another document the prior's concept joins the candidates with its evidence: 1 / (1 + 1)
    assert [c.concept_id for c in new_found] == ["D001943", "D001260"]
    assert new_rows[1, column["prior_probability"]] == pytest.approx(0.5)
    assert new_rows[1, column["rescnn_missing"]] == 1.0
    assert new_rows[1, column["normalized_name_match"]] == 1.0  # "Ataxia Telangiectasia" normalised


def test_stage_adds_no_concept_outside_the_mentions_type_route(small_kb):
    # the prior links "ataxia-telangiectasia" to D001260 in another document; a mention whose route
    # admits only D001943 (a gene mention in a project with a disease list, say) must not receive it
    other = _document("10192393", ATAXIA, "ataxia-telangiectasia", "D001260")
    stage = RankingStage(None, small_kb, annotation_prior([other]))
    retrieved = [Candidate("D001943", "Breast Neoplasms", "breast cancer", 0.41)]
    open_query = MentionQuery("7000000", "ataxia-telangiectasia", ("ataxia-telangiectasia",))
    routed = MentionQuery(
        "7000000", "ataxia-telangiectasia", ("ataxia-telangiectasia",), frozenset({"D001943"})
    )
    (open_found, _), (routed_found, routed_rows) = stage.features(
        [open_query, routed], [retrieved, retrieved], use_cross_encoder=False, union=0
    )
    assert [c.concept_id for c in open_found] == ["D001943", "D001260"]
    assert [c.concept_id for c in routed_found] == ["D001943"]
    assert routed_rows.shape[0] == 1


def test_isotonic_calibration_on_a_fixed_synthetic_set():
    # 5 score levels, 100 candidates each, with exactly 5, 20, 50, 80, 97 right: already monotone, so the
    # isotonic fit must give back those frequencies, and between levels interpolate linearly.
    levels = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    right = [5, 20, 50, 80, 97]
    scores = np.repeat(levels, 100)
    labels = np.concatenate([np.r_[np.ones(k), np.zeros(100 - k)] for k in right])
    table = fit_calibration(scores, labels)
    assert table["method"] == "isotonic"
    assert apply_calibration(table, levels) == pytest.approx([0.05, 0.20, 0.50, 0.80, 0.97])
    assert apply_calibration(table, np.array([-0.5, 5.0, -9.0])) == pytest.approx([0.35, 0.97, 0.05])
    calibrated = apply_calibration(table, scores)
    assert expected_calibration_error(calibrated, labels.astype(bool)) == pytest.approx(0.0, abs=1e-12)
    # one inversion is pooled (pool adjacent violators): 30 then 10 right of 100 become 20 and 20
    inverted = np.concatenate([np.r_[np.ones(k), np.zeros(100 - k)] for k in (30, 10, 60)])
    pooled = fit_calibration(np.repeat([0.0, 1.0, 2.0], 100), inverted)
    assert apply_calibration(pooled, np.array([0.0, 1.0, 2.0])) == pytest.approx([0.2, 0.2, 0.6])


def test_calibration_error_and_bulk_accept_by_hand():
    p = [0.97, 0.96, 0.95, 0.40, 0.10]
    correct = [True, True, False, True, False]
    # bins (10 wide): [0.9, 1.0]: conf 0.96, acc 2/3; [0.4, 0.5): conf 0.4, acc 1; [0.1, 0.2): conf 0.1, acc 0
    expected = 3 / 5 * abs(2 / 3 - 0.96) + 1 / 5 * abs(1 - 0.4) + 1 / 5 * abs(0 - 0.1)
    assert expected_calibration_error(p, correct) == pytest.approx(expected)
    assert precision_coverage(p, correct, 0.95) == {
        "threshold": 0.95,
        "coverage": 60.0,
        "precision": pytest.approx(66.67),
    }
    few = fit_calibration([0.0, 1.0, 2.0, 3.0], [0, 0, 1, 1])  # two positives: Platt, monotone
    assert few["method"] == "platt"
    probabilities = apply_calibration(few, np.array([0.0, 1.5, 3.0]))
    assert probabilities[0] < 0.5 < probabilities[2] and np.all(np.diff(probabilities) > 0)


# --- a real small project: the bundled demo (KB, six abstracts, a retriever trained on the KB) ---


def _decide_all(project) -> int:
    """Accept the gold link where the top suggestion is right, correct it where it is not."""
    done = 0
    for document, mention_ids in project.documents.documents_with_mention_ids():
        for mention, mention_id in zip(document.mentions, mention_ids, strict=True):
            if len(mention.concept_ids) != 1:
                continue
            top = project.curation.suggestions(mention_id)
            action = "accept" if top and top[0].concept_id == mention.concept_id else "correct"
            project.curation.record_decision(mention_id, action, concept_id=mention.concept_id, curator="ann")
            done += 1
    return done


def test_no_gold_and_no_decisions_keeps_the_retriever_order(demo, caplog, capsys):
    from app.cli import EXIT_ERROR, main
    from core.jobs.linking.suggestions import ProjectLinker
    from core.jobs.models.ranker import train_ranker_for_project

    outcome = train_ranker_for_project(demo, device="cpu")
    assert not outcome.trained and "no ranker trained" in outcome.message
    assert "retriever's order" in outcome.message and "no ranker trained" in caplog.text
    assert demo.models.model_versions("ranker") == []
    assert main(["-p", str(demo.path), "train", "ranker", "--device", "cpu"]) == 0
    assert "no ranker trained" in " ".join(capsys.readouterr().out.split())
    assert main(["-p", str(demo.path), "evaluate", "ranker"]) == EXIT_ERROR
    assert "no ranker in force" in " ".join(capsys.readouterr().err.split())
    linker = ProjectLinker.for_project(demo, device="cpu")
    assert linker.linker.ranker is None
    documents = [d for d, _ in demo.documents.documents_with_mention_ids()]
    assert linker.linker.suggest(documents) == linker.linker.retrieve(documents)


def test_ranker_trains_from_decisions_applies_and_retrains(demo):
    from core.jobs.linking.suggestions import ProjectLinker
    from core.jobs.models.ranker import train_ranker_for_project
    from core.jobs.models.retrain import retrain

    decided = _decide_all(demo)
    outcome = train_ranker_for_project(demo, device="cpu")
    assert outcome.trained and outcome.version == "v1"
    assert outcome.metrics["mentions"] == decided and outcome.metrics["prior_links"] == decided
    stored = json.loads((Path(outcome.path) / "ranker.json").read_text())
    assert stored["features"] == list(FEATURE_NAMES) and len(stored["coef"]) == len(FEATURE_NAMES)
    assert stored["calibration"]["method"] in ("isotonic", "platt")
    assert demo.models.active_model("ranker").version == "v1"

    linker = ProjectLinker.for_project(demo, device="cpu")
    assert linker.linker.ranker is not None and linker.linker.ranker.version == "v1"
    summary = linker.link_project(demo)
    assert summary.mentions > 0
    document, mention_ids = next(demo.documents.documents_with_mention_ids())
    ranked = demo.curation.suggestions(mention_ids[0])
    assert ranked and all(0.0 <= c.reranker_score <= 1.0 for c in ranked)
    assert [c.reranker_score for c in ranked] == sorted((c.reranker_score for c in ranked), reverse=True)
    assert demo.curation.suggestion_version(mention_ids[0]).endswith("ranker v1")

    report = retrain(demo, kinds=("ranker",), held_out_fraction=0.34, device="cpu", promote="always")
    assert report.kinds["ranker"].version == "v2" and demo.models.active_model("ranker").version == "v2"
    assert report.kinds["ranker"].new and "acc@1" in report.kinds["ranker"].new


def test_ranker_of_another_feature_set_is_refused_with_retrain_advice(demo, caplog):
    from core.jobs.linking.suggestions import ProjectLinker
    from core.jobs.models.ranker import train_ranker_for_project
    from core.rank.model import RankerModel

    _decide_all(demo)
    outcome = train_ranker_for_project(demo, device="cpu")
    path = Path(outcome.path) / "ranker.json"
    stored = json.loads(path.read_text())
    damaged = {**stored, "coef": [float("nan")] * len(stored["coef"])}
    path.write_text(json.dumps(damaged))
    with pytest.raises(ModelError, match=r"damaged ranker file.*train ranker"):
        RankerModel.load(path.parent, demo.path)
    path.write_text(
        json.dumps({**stored, "calibration": {"method": "isotonic", "x": [0, 1], "y": [0.2, 1.7]}})
    )
    with pytest.raises(ModelError, match=r"outside \[0, 1\]"):
        RankerModel.load(path.parent, demo.path)
    stored["feature_set"] = 0
    stored["features"] = stored["features"][:-1]
    path.write_text(json.dumps(stored))
    with pytest.raises(ModelError, match=r"feature set 0.*not applied.*train ranker") as refused:
        RankerModel.load(path.parent, demo.path)
    assert str(path) in str(refused.value)
    linker = ProjectLinker.for_project(demo, device="cpu")
    assert linker.linker.ranker is None and "train ranker" in linker.linker.ranker_note and "train ranker" in caplog.text
    documents = [d for d, _ in demo.documents.documents_with_mention_ids()]
    assert linker.linker.suggest(documents) == linker.linker.retrieve(documents)
