"""The boosted scorer (issue 25 item 6): LightGBM trees stored as text inside ranker.json, scoring equal
after a round trip; the ranking stage orders by the trees as walked by hand from the stored text; a
logistic ranker file written before the boosted scorer still loads and scores by the logistic formula.

Real NCBI slices: MEDIC 2012 and the first 60 linked documents of NCBI-disease train, candidates from
the TF-IDF retriever (a real component, no training needed): 40 documents to fit on, 20 to rank."""

from __future__ import annotations

import bisect
import json
import math
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from core.errors import ModelError  # noqa: E402
from core.rank.features import FEATURE_NAMES  # noqa: E402
from core.rank.model import RANKER_FILE, RankerModel, fit_ranker  # noqa: E402

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "ranker" / "logistic-before-boosting.json"


@pytest.fixture(scope="module")
def slices(shared_data: Path) -> dict:
    from core.formats.pubtator import read
    from core.jobs.models.ranker import DEFAULT_TFIDF_UNION, examples
    from core.kb.knowledge_base import KnowledgeBase
    from core.kb.medic import read_medic
    from core.pipeline import Linker
    from core.rank.stage import RankingStage, annotation_prior
    from core.retrieve.tfidf import TfidfRetriever

    kb = KnowledgeBase(read_medic(shared_data / "vocab" / "medic_06Jul2012.txt"))
    documents = []
    for document in read(shared_data / "ncbi-disease" / "NCBItrainset_corpus.txt"):
        linked = [m for m in document.mentions if m.concept_ids]
        if linked:
            documents.append(document.with_mentions(linked))
        if len(documents) == 60:
            break
    fit_on, ranked = documents[:40], documents[40:]
    retriever = TfidfRetriever()
    retriever.index(kb)
    linker = Linker(retriever, candidates=20)
    prior = annotation_prior(fit_on)
    stage = RankingStage(None, kb, prior)
    data = examples(
        stage, linker, fit_on, linker.retrieve(fit_on), use_cross_encoder=False, union=DEFAULT_TFIDF_UNION
    )
    plan, retrieved = linker.plan(ranked), linker.retrieve(ranked)
    queries = [q for per_document in plan for q in per_document]
    flat = [list(found) for per_document in retrieved for found in per_document]
    featured = stage.features(queries, flat, use_cross_encoder=False, union=DEFAULT_TFIDF_UNION)
    golds = [
        {i for concept_id in mention.concept_ids for i in kb.ids_of(concept_id)}
        for document in ranked
        for mention in document.mentions
    ]
    return {
        "kb": kb,
        "prior": prior,
        "data": data,
        "plan": plan,
        "retrieved": retrieved,
        "featured": featured,
        "golds": golds,
        "rows": np.vstack([rows for found, rows in featured if found]),
    }


def _walk_trees(text: str, standard: list[float]) -> float:
    """The sum of the leaves a standardised row reaches, read from LightGBM's text model by hand
    (numerical splits: left when the value is <= the threshold; missing values as the decision says)."""
    total = 0.0
    for block in text.split("\nTree=")[1:]:
        fields = dict(line.split("=", 1) for line in block.splitlines()[1:] if "=" in line)
        leaves = [float(v) for v in fields["leaf_value"].split()]
        if int(fields["num_leaves"]) == 1:
            total += leaves[0]
            continue
        feature = [int(v) for v in fields["split_feature"].split()]
        threshold = [float(v) for v in fields["threshold"].split()]
        decision = [int(v) for v in fields["decision_type"].split()]
        left = [int(v) for v in fields["left_child"].split()]
        right = [int(v) for v in fields["right_child"].split()]
        node = 0
        while node >= 0:
            assert not decision[node] & 1, "no categorical feature is fitted"
            value = standard[feature[node]]
            missing_type = (decision[node] >> 2) & 3
            if (missing_type == 1 and abs(value) <= 1e-35) or (missing_type == 2 and math.isnan(value)):
                go_left = bool(decision[node] & 2)
            else:
                go_left = value <= threshold[node]
            node = left[node] if go_left else right[node]
        total += leaves[~node]
    return total


def _interpolate(table: dict, score: float) -> float:
    """Isotonic calibration by hand: linear between breakpoints, clipped at both ends."""
    xs, ys = table["x"], table["y"]
    if score <= xs[0]:
        return ys[0]
    if score >= xs[-1]:
        return ys[-1]
    i = bisect.bisect_right(xs, score)
    x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
    return y0 if x1 == x0 else y0 + (y1 - y0) * (score - x0) / (x1 - x0)


def _check_ranking(model: RankerModel, slices: dict, score_by_hand) -> tuple[int, int]:
    """The stage's order per mention against scores computed by hand; returns (right top-1, mentions)."""
    from core.rank.stage import RankingStage

    ranked = RankingStage(model, slices["kb"], slices["prior"]).rank(slices["plan"], slices["retrieved"], 20)
    flat = [found for per_document in ranked for found in per_document]
    assert len(flat) == len(slices["featured"]) == len(slices["golds"])
    right = 0
    for found, (merged, rows), gold in zip(flat, slices["featured"], slices["golds"], strict=True):
        if not merged:
            assert found == []
            continue
        by_hand = {c.concept_id: score_by_hand(row) for c, row in zip(merged, rows.tolist(), strict=True)}
        scores = [by_hand[c.concept_id] for c in found]
        assert all(a >= b - 1e-9 for a, b in zip(scores, scores[1:])), "not ordered by the score"
        assert scores[0] == pytest.approx(max(by_hand.values()), abs=1e-9)
        assert len(found) == min(20, len(merged))
        for candidate, score in zip(found, scores, strict=True):
            assert candidate.reranker_score == pytest.approx(_interpolate(model.calibration, score), abs=1e-9)
        right += bool(slices["kb"].ids_of(found[0].concept_id) & gold)
    return right, len(flat)


def test_boosted_ranker_scores_equal_after_a_round_trip_through_ranker_json(slices, tmp_path):
    data = slices["data"]
    model = fit_ranker(data.rows, data.labels, data.groups, mentions=data.mention_of_row, scorer="lightgbm")
    assert model.scorer == "lightgbm" and model.metrics["boosting_rounds"] >= 1
    model.save(tmp_path)
    stored = json.loads((tmp_path / RANKER_FILE).read_text(encoding="utf-8"))
    assert stored["scorer"] == "lightgbm" and stored["trees"].startswith("tree") and stored["coef"] == []
    loaded = RankerModel.load(tmp_path, "P")
    rows = slices["rows"]
    assert np.array_equal(loaded.raw_scores(rows), model.raw_scores(rows))
    assert np.array_equal(loaded.probabilities(rows), model.probabilities(rows))
    assert len(np.unique(model.raw_scores(rows))) > 10  # the trees separate candidates


def test_boosted_ranking_follows_the_stored_trees_walked_by_hand(slices, tmp_path):
    data = slices["data"]
    fit_ranker(data.rows, data.labels, data.groups, scorer="lightgbm").save(tmp_path)
    model = RankerModel.load(tmp_path, "P")
    assert model.calibration["method"] == "isotonic"
    mean, scale = model.mean, model.scale

    def by_hand(row: list[float]) -> float:
        return _walk_trees(model.trees, [(x - m) / s for x, m, s in zip(row, mean, scale, strict=True)])

    rows = slices["rows"][:200]
    assert np.allclose(model.raw_scores(rows), [by_hand(r) for r in rows.tolist()], rtol=0, atol=1e-9)
    right, mentions = _check_ranking(model, slices, by_hand)
    assert mentions > 100 and right > mentions // 2  # and every top-1 is the best by hand


def test_a_logistic_ranker_file_from_before_boosting_loads_and_scores_as_the_formula_says(slices, tmp_path):
    stored = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert "scorer" not in stored and stored["features"] == list(FEATURE_NAMES)
    shutil.copy(FIXTURE, tmp_path / RANKER_FILE)
    model = RankerModel.load(tmp_path, "P")
    assert model.scorer == "logistic"
    mean, scale, coef, intercept = stored["mean"], stored["scale"], stored["coef"], stored["intercept"]

    def by_hand(row: list[float]) -> float:
        return sum((x - m) / s * c for x, m, s, c in zip(row, mean, scale, coef, strict=True)) + intercept

    rows = slices["rows"]
    assert np.allclose(model.raw_scores(rows), [by_hand(r) for r in rows.tolist()], rtol=1e-12, atol=1e-9)
    _check_ranking(model, slices, by_hand)
    model.save(tmp_path)  # saved again: now it names its scorer, and scores the same
    assert json.loads((tmp_path / RANKER_FILE).read_text())["scorer"] == "logistic"
    assert np.array_equal(RankerModel.load(tmp_path, "P").raw_scores(rows), model.raw_scores(rows))


def test_logistic_stays_the_default_and_a_damaged_or_unknown_scorer_is_refused(slices, tmp_path):
    data = slices["data"]
    logistic = fit_ranker(data.rows, data.labels, data.groups)
    assert logistic.scorer == "logistic" and len(logistic.coef) == len(FEATURE_NAMES) and not logistic.trees
    boosted = fit_ranker(data.rows, data.labels, data.groups, scorer="lightgbm")
    boosted.save(tmp_path)
    path = tmp_path / RANKER_FILE
    stored = json.loads(path.read_text())
    for change, message in (
        ({"trees": "tree\nversion=v4\nnot a model"}, r"damaged ranker file.*trees.*train ranker"),
        ({"trees": ""}, r"damaged ranker file.*not a LightGBM text model"),
        ({"scorer": "xgboost"}, r"damaged ranker file.*unknown scorer 'xgboost'"),
        (
            {"features": stored["features"][:-1], "mean": stored["mean"][:-1], "scale": stored["scale"][:-1]},
            rf"reads {len(FEATURE_NAMES)} features, the file names {len(FEATURE_NAMES) - 1}",
        ),
    ):
        path.write_text(json.dumps({**stored, **change}))
        with pytest.raises(ModelError, match=message) as refused:
            RankerModel.load(tmp_path, "P")
        assert str(path) in str(refused.value)
    with pytest.raises(ValueError, match="unknown ranker scorer"):
        fit_ranker(data.rows, data.labels, data.groups, scorer="forest")


def test_train_ranker_scorer_lightgbm_in_a_real_project_links_with_the_trees(demo, capsys):
    """`train ranker --scorer lightgbm`: the file and the registry name the scorer, linking applies it
    (calibrated probabilities, best first, the suggestion version naming the ranker), and `retrain`
    keeps it."""
    from app.cli import main
    from core.jobs.linking.suggestions import ProjectLinker

    for document, mention_ids in demo.documents.documents_with_mention_ids():
        for mention, mention_id in zip(document.mentions, mention_ids, strict=True):
            if len(mention.concept_ids) == 1:
                demo.curation.record_decision(
                    mention_id, "correct", concept_id=mention.concept_id, curator="ann"
                )
    assert main(["-p", str(demo.path), "train", "ranker", "--scorer", "lightgbm", "--device", "cpu"]) == 0
    assert "ranker v1 saved" in " ".join(capsys.readouterr().out.split())
    active = demo.models.active_model("ranker")
    stored = json.loads((Path(active.path) / RANKER_FILE).read_text(encoding="utf-8"))
    assert stored["scorer"] == "lightgbm" and stored["metrics"]["scorer"] == "lightgbm"
    registered = json.loads(active.metrics_json)
    assert registered["scorer"] == "lightgbm" and registered["boosting_rounds"] >= 1
    linker = ProjectLinker.for_project(demo, device="cpu")
    assert linker.linker.ranker is not None and linker.linker.ranker.model.scorer == "lightgbm"
    assert linker.link_project(demo).mentions > 0
    _, mention_ids = next(demo.documents.documents_with_mention_ids())
    ranked = demo.curation.suggestions(mention_ids[0])
    assert ranked and all(0.0 <= c.reranker_score <= 1.0 for c in ranked)
    assert [c.reranker_score for c in ranked] == sorted((c.reranker_score for c in ranked), reverse=True)
    assert demo.curation.suggestion_version(mention_ids[0]).endswith("ranker v1")

    from core.jobs.models.retrain import retrain

    report = retrain(demo, kinds=("ranker",), held_out_fraction=0.34, device="cpu", promote="always")
    assert report.kinds["ranker"].version == "v2"  # retrain keeps the scorer the project chose
    retrained = demo.models.active_model("ranker")
    assert json.loads((Path(retrained.path) / RANKER_FILE).read_text(encoding="utf-8"))["scorer"] == "lightgbm"
