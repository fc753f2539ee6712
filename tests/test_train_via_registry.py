"""Every kind trains, retrains, evaluates and loads through one registry (core.jobs.models.kinds), and the
CLI's `train KIND` goes through it: the version is published by `publish_version` (folder, metrics.json,
registry row with its parent) and put in force or not as the promotion rule decides."""

from __future__ import annotations

import inspect
import json
import logging

import pytest

from app.cli import main
from core.errors import CuralinkError
from core.jobs.models.kinds import KINDS, load, train

KEYWORD = inspect.Parameter.KEYWORD_ONLY


def _parameters(function) -> dict[str, inspect.Parameter]:
    return dict(inspect.signature(function).parameters)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_kind_s_jobs_take_the_shared_leading_signature(kind):
    spec = KINDS[kind]
    trainer = spec.job("train")
    params = _parameters(trainer)
    assert list(params)[0] == "project"
    for name in ("promote", "progress", "cancel"):
        assert params[name].kind is KEYWORD, f"{kind} train: {name}"
    assert inspect.signature(trainer).return_annotation == "TrainedVersion", kind

    params = _parameters(spec.job("retrain"))
    assert list(params) == ["project", "step"], kind  # the KB, training set, rule and bounds in one RetrainStep
    assert params["step"].annotation == "RetrainStep", kind
    assert inspect.signature(spec.job("retrain")).return_annotation == "KindReport", kind

    params = _parameters(spec.job("evaluate"))
    assert list(params)[0] == "project" and "split" in params, kind
    params = _parameters(spec.job("load"))
    assert list(params)[:2] == ["project", "row"], kind


def _decide_all(project) -> int:
    """Accept or correct every single-concept mention to its gold link (the ranker learns from these)."""
    done = 0
    for document, mention_ids in project.documents.documents_with_mention_ids():
        for mention, mention_id in zip(document.mentions, mention_ids, strict=True):
            if len(mention.concept_ids) == 1:
                top = project.curation.suggestions(mention_id)
                action = "accept" if top and top[0].concept_id == mention.concept_id else "correct"
                project.curation.record_decision(mention_id, action, concept_id=mention.concept_id, curator="ann")
                done += 1
    return done


def test_cli_train_goes_through_the_registry_and_publishes_under_the_rule(demo, caplog, capsys):
    caplog.set_level(logging.INFO, logger="core.jobs")
    decided = _decide_all(demo)
    assert decided > 0
    path = ["-p", str(demo.path)]

    assert main([*path, "train", "ranker", "--device", "cpu"]) == 0
    assert "training ranker via registry (promoted by explicit choice)" in caplog.text
    (row,) = demo.models.model_versions("ranker")
    assert row.status == "active" and row.version == "v1"
    folder = demo.models_dir / "ranker" / "v1"
    assert json.loads((folder / "metrics.json").read_text())["mentions"] == decided  # publish_version wrote it
    printed = " ".join(capsys.readouterr().out.split())
    assert "made active" in printed
    # what the ranker learnt from, as a sentence with the stored count, not the metrics dictionary
    assert f"trained on {decided:,} mentions in" in printed and "{'" not in printed
    stage = load(demo, "ranker")
    assert stage.model.version == "v1" and len(stage.prior) == decided

    before = demo.models.active_model("retriever").version
    caplog.clear()
    assert main([*path, "train", "retriever", "--epochs", "1", "--patience", "0", "--max-seconds", "5"]) == 0
    assert "training retriever via registry (promoted by explicit choice)" in caplog.text
    active = demo.models.active_model("retriever")
    assert active.version != before and active.parent_version == before
    assert (demo.models_dir / "retriever" / active.version / "metrics.json").is_file()


def test_the_rule_keeps_a_version_a_candidate_and_train_refuses_a_rule_it_cannot_judge(demo):
    _decide_all(demo)
    kept = train(demo, "ranker", promote="never", device="cpu")
    assert kept.trained and not kept.promoted and kept.reason == "kept as a candidate by explicit choice"
    assert demo.models.active_model("ranker") is None
    assert [r.status for r in demo.models.model_versions("ranker")] == ["candidate"]
    with pytest.raises(CuralinkError, match="if-not-worse.*retrain"):
        train(demo, "ranker", promote="if-not-worse")
    with pytest.raises(CuralinkError, match="no ranker in force"):
        load(demo, "ranker")
    assert load(demo, "ranker", kept.version).model.version == kept.version
