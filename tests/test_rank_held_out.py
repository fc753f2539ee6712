"""The held-out bulk-accept curve stored with a ranker (issue 23 item 5): per mention the top candidate by
out-of-fold score, its probability from a calibration table fitted without its fold, precision and
coverage at every threshold, and the default threshold read from the curve."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from core.rank.calibration import apply_calibration, fit_calibration
from core.rank.held_out import (
    METRICS_KEY,
    bulk_accept_curve,
    curve_point,
    default_threshold,
    held_out_top1,
    thresholds,
    valid_curve,
)
from core.rank.model import fit_ranker


def _synthetic(seed: int = 3, documents: int = 30, per_document: int = 4, candidates: int = 5):
    """Rows of candidates: the right one (first of each mention) scores higher on feature 0, noisily."""
    rng = np.random.default_rng(seed)
    rows, labels, groups, mentions = [], [], [], []
    mention = 0
    for document in range(documents):
        for _ in range(per_document):
            for c in range(candidates):
                right = c == 0 and rng.random() < 0.85  # some mentions have no right candidate
                rows.append([rng.normal(1.5 if right else 0.0), rng.normal()])
                labels.append(int(right))
                groups.append(document)
                mentions.append(mention)
            mention += 1
    return np.array(rows), np.array(labels), np.array(groups), np.array(mentions)


def test_top1_probabilities_come_from_tables_fitted_without_their_fold():
    rng = np.random.default_rng(7)
    raw = rng.normal(size=60)
    labels = (raw + rng.normal(scale=0.8, size=60) > 0).astype(int)
    mentions = np.repeat(np.arange(20), 3)
    folds = np.repeat(np.arange(20) % 3, 3)
    probability, right = held_out_top1(raw, labels, mentions, folds)
    expected_p, expected_right = [], []
    for mention in range(20):  # by hand: the best-scored row of the mention, its fold's outside table
        rows = [i for i in range(60) if mentions[i] == mention]
        best = max(rows, key=lambda i: raw[i])
        outside = folds != folds[best]
        table = fit_calibration(raw[outside], labels[outside])
        expected_p.append(float(apply_calibration(table, np.array([raw[best]]))[0]))
        expected_right.append(bool(labels[best]))
    assert probability == pytest.approx(expected_p)
    assert right.tolist() == expected_right
    inside = fit_calibration(raw, labels)  # the in-sample table would give other numbers
    assert not np.allclose(
        probability,
        apply_calibration(
            inside, raw[[max(range(3 * m, 3 * m + 3), key=lambda i: raw[i]) for m in range(20)]]
        ),
    )


def test_curve_counts_precision_and_coverage_at_every_step():
    probability = np.array([0.99, 0.97, 0.95, 0.90, 0.60, 0.30])
    right = np.array([True, True, False, True, True, False])
    curve = bulk_accept_curve(probability, right)
    assert curve["mentions"] == 6 and curve["thresholds"] == thresholds() and len(thresholds()) == 101
    for t in (0.0, 0.3, 0.6, 0.9, 0.95, 0.96, 0.98, 1.0):
        chosen = [r for p, r in zip(probability, right) if p >= t]
        precision = round(100 * sum(chosen) / len(chosen), 2) if chosen else None
        assert curve_point(curve, t) == (precision, round(100 * len(chosen) / 6, 2))
    assert default_threshold(curve, min_mentions=6) == 0.96  # 0.96, 0.97: 2 of 2 right; 0.91 - 0.95: 2 of 3
    assert default_threshold(curve, target=70.0, min_mentions=6) == 0.31  # 4 of 6 from 0.00, 4 of 5 from 0.31
    assert default_threshold(curve) is None  # 6 mentions are too few to vouch for 98 %
    assert default_threshold(None) is None and valid_curve({"thresholds": []}) is None
    assert valid_curve(json.loads(json.dumps(curve))) == curve


def test_fit_ranker_keeps_the_curve_in_its_metrics():
    rows, labels, groups, mentions = _synthetic()
    model = fit_ranker(rows, labels, groups, mentions=mentions)
    curve = valid_curve(model.metrics[METRICS_KEY])
    assert curve is not None and curve["mentions"] == len(np.unique(mentions))
    assert curve_point(curve, 0.0)[1] == 100.0  # every mention has a top candidate with p >= 0
    coverage = [c for c in curve["coverage"]]
    assert coverage == sorted(coverage, reverse=True)  # a higher threshold never accepts more
    assert "bulk_accept_held_out" not in fit_ranker(rows, labels, groups).metrics  # without mentions


def _decide_all(project) -> int:
    done = 0
    for document, mention_ids in project.documents.documents_with_mention_ids():
        for mention, mention_id in zip(document.mentions, mention_ids, strict=True):
            if len(mention.concept_ids) == 1:
                top = project.curation.suggestions(mention_id)
                action = "accept" if top and top[0].concept_id == mention.concept_id else "correct"
                project.curation.record_decision(mention_id, action, concept_id=mention.concept_id, curator="ann")
                done += 1
    return done


def test_trained_and_retrained_rankers_store_the_curve(demo):
    from core.jobs.ranker import train_ranker_for_project
    from core.jobs.retrain import retrain

    decided = _decide_all(demo)
    outcome = train_ranker_for_project(demo, device="cpu")
    stored = json.loads((Path(outcome.path) / "ranker.json").read_text())
    curve = valid_curve(stored["metrics"][METRICS_KEY])
    assert curve is not None and curve["mentions"] == decided
    assert f"bulk accept on {decided} held-out mentions: too few" in outcome.message
    assert METRICS_KEY not in outcome.metrics  # the curve stays in the file, out of the summary
    report = retrain(demo, kinds=("ranker",), held_out_fraction=0.34, device="cpu", promote="always")
    stored = json.loads((Path(report.kinds["ranker"].path) / "ranker.json").read_text())
    assert valid_curve(stored["metrics"][METRICS_KEY]) is not None
