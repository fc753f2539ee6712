"""`bench_learning` end to end on a small real slice of NCBI-disease and MEDIC (shared data).

Each retrain must be bounded by epochs, not by the machine's load: without a time cap the steps of every
retrain are counted here from its training pairs and the batch size, and the cap still stops a run when
one is given.
"""

from __future__ import annotations

import json
import math
import os

import pytest

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


@pytest.fixture
def training_runs(monkeypatch) -> list[dict]:
    """Every retrain's KB, pairs and training arguments (epochs, max_seconds, options), as
    `finetune_rescnn` hands them to the trainer."""
    from core.learn import warm_start

    runs: list[dict] = []
    trainer = warm_start.train_rescnn

    def spy(kb, pairs, config, out_dir, **kwargs):
        result = trainer(kb, pairs, config, out_dir, **kwargs)
        runs.append({"kb": kb, "pairs": list(pairs), **kwargs})
        return result

    monkeypatch.setattr(warm_start, "train_rescnn", spy)
    return runs


def _expected_steps(run: dict) -> int:
    """Optimizer steps of `epochs` full epochs: unique (text, concept) pairs plus the KB names sampled
    against forgetting (at least `kb_names_per_epoch`, `kb_names_per_pair` a pair, at most all), per batch."""
    kb, options = run["kb"], run["options"]
    pairs = {(text, kb.resolve(cid)) for text, cid in run["pairs"] if "|" not in cid and "+" not in cid}
    pairs = {p for p in pairs if p[1] is not None and p[0].strip()}
    kb_names = min(len(kb.names), max(options.kb_names_per_epoch, options.kb_names_per_pair * len(pairs)))
    return math.ceil((len(pairs) + kb_names) / options.batch_size) * run["epochs"]


def test_bench_learning_small(shared_data, tmp_path, training_runs):
    from bench.learning import ORDERS, bench_learning

    seen = []
    summary = bench_learning(
        shared_data,
        tmp_path,
        pool=6,
        step=3,
        epochs_per_retrain=1,  # not the default (2): the argument is what bounds a retrain
        kb_concepts=60,
        eval_documents=8,
        progress=lambda done, total, message="": seen.append((done, total)),
    )
    assert seen[-1] == (5, 5)
    assert set(summary["curves"]) == set(ORDERS)
    for points in summary["curves"].values():
        assert [p["documents"] for p in points] == [0, 3, 6]
        assert all(0.0 <= p["acc@1"] <= 100.0 for p in points)
        assert points[-1]["mentions"] > points[1]["mentions"] > 0
    # both orders start from the same zero-shot model
    assert summary["curves"]["uncertainty"][0] == summary["curves"]["random"][0]
    assert summary["rest_documents"] == 8 and summary["kb_concepts"] >= 60
    assert json.loads((tmp_path / "learning_curves.json").read_text())["curves"] == summary["curves"]
    assert (tmp_path / "learning_curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # no time cap: every retrain ran exactly the asked epochs, step for step
    assert summary["seconds_per_retrain"] is None and summary["epochs_per_retrain"] == 1
    assert [run["epochs"] for run in training_runs] == [1] * 4
    assert all(run["max_seconds"] is None for run in training_runs)
    points = [p for order in ORDERS for p in summary["curves"][order][1:]]
    assert [p["steps"] for p in points] == [_expected_steps(run) for run in training_runs]
    assert all(p["epochs"] == 1 and p["stopped_by"] == "epochs" for p in points)
    assert all(p["train_seconds"] >= 0 for p in points)
    assert summary["zero_shot"]["epochs"] == summary["zero_shot_epochs"] == 1
    assert summary["zero_shot"]["stopped_by"] == "epochs"


def test_bench_learning_time_cap_still_stops_a_retrain(shared_data, tmp_path, training_runs):
    from bench.learning import bench_learning

    summary = bench_learning(
        shared_data,
        tmp_path,
        pool=3,
        step=3,
        epochs_per_retrain=1000,
        zero_shot_epochs=1000,
        seconds_per_retrain=1.0,
        kb_concepts=60,
        eval_documents=4,
    )
    assert summary["seconds_per_retrain"] == 1.0
    assert [run["max_seconds"] for run in training_runs] == [1.0, 1.0]
    for run in [summary["zero_shot"], *(points[1] for points in summary["curves"].values())]:
        assert run["stopped_by"] == "max_seconds"
        assert 0 < run["epochs"] < 1000
        assert run["train_seconds"] < 30  # the cap plus one step, far below 1000 epochs
