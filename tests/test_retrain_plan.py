"""One progress bar across the phases of a retrain (never restarting), and the reranker proposed only
where a GPU makes training it worthwhile."""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402

from core.jobs.models.retrain_plan import NOMINAL_TRAINING_SECONDS, reranker_advice, retrain_phases  # noqa: E402
from core.progress import PhasedProgress  # noqa: E402


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_phased_progress_maps_phases_onto_one_bar():
    seen: list[tuple[int, int, str]] = []
    clock = Clock()
    bar = PhasedProgress(lambda *args: seen.append(args), [("a", 1.0), ("b", 3.0)], clock=clock)
    bar.enter("a")
    bar(5, 10, "half of a")  # a is the first quarter of the whole: half of it is 1/8
    assert seen[-1] == (125, 1000, "a: half of a")
    bar.enter("b", budget_seconds=10.0)
    assert seen[-1][0] == 250
    bar(1, 3, "one third")  # 1/4 + 3/4 * 1/3
    assert seen[-1][0] == 500
    bar(0, 3, "a sub-task restarting")
    assert seen[-1][0] == 500  # never backwards
    clock.now += 5.0  # half the budget gone with no step reported: the clock moves the bar
    bar(0, None, "slow step")
    assert seen[-1][0] == 625
    bar.finish()
    assert seen[-1][:2] == (1000, 1000)


def test_retrain_phases_follow_the_kinds():
    names = [name for name, _ in retrain_phases(("retriever", "ranker"), 60)]
    assert names == ["preparing", "retriever: training", "retriever: evaluating", "ranker"]
    assert dict(retrain_phases(("reranker",), 60))["reranker: training"] == 60


def test_without_a_time_limit_the_phases_keep_a_nominal_share():
    phases = dict(retrain_phases(("retriever",), None))
    assert phases["retriever: training"] == NOMINAL_TRAINING_SECONDS


def test_retrain_without_a_time_limit_trains_the_epochs_asked(demo):
    """The default retrain is bounded by epochs, not seconds: what it learns does not depend on load."""
    from core.jobs.models.retrain import retrain

    for document, ids in demo.documents.documents_with_mention_ids():
        for mention, mention_id in zip(document.mentions, ids, strict=True):
            if len(mention.concept_ids) == 1:
                demo.curation.record_decision(mention_id, "accept", concept_id=mention.concept_id, curator="ann")
    report = retrain(
        demo, kinds=("retriever",), promote="never", epochs=2, held_out_fraction=0.34, device="cpu"
    )
    epochs = [h["epoch"] for h in report.kinds["retriever"].history]
    assert epochs == [0.0, 1.0, 2.0], "the version in force (epoch 0), then each epoch trained"


def test_reranker_advice_depends_on_the_device():
    assert not reranker_advice("cpu").worthwhile and "CPU" in reranker_advice("cpu").reason
    auto = reranker_advice("auto")
    assert auto.worthwhile == torch.cuda.is_available()
    assert ("GPU" in auto.reason) and (auto.worthwhile or "no GPU" in auto.reason)


def test_retrain_reports_one_monotone_bar(demo):
    from core.jobs.models.retrain import retrain

    for document, ids in demo.documents.documents_with_mention_ids():
        for mention, mention_id in zip(document.mentions, ids, strict=True):
            if len(mention.concept_ids) == 1:
                demo.curation.record_decision(mention_id, "accept", concept_id=mention.concept_id, curator="ann")
    seen: list[tuple[int, int, str]] = []
    retrain(
        demo,
        kinds=("retriever", "ranker"),
        promote="never",
        max_seconds=2.0,
        epochs=1,
        held_out_fraction=0.34,
        device="cpu",
        progress=lambda *args: seen.append(args),
    )
    values = [done for done, _, _ in seen]
    assert all(total == 1000 for _, total, _ in seen)
    assert values == sorted(values) and values[-1] == 1000 and len(set(values)) > 3
    phases = [message.split(":")[0] for _, _, message in seen]
    assert {"preparing", "retriever", "ranker"} <= set(phases)


def test_retriever_without_epoch_evaluation_still_records_every_epoch(demo, monkeypatch):
    """On a large KB the retriever is not evaluated per epoch (too slow): its mean training loss per
    epoch is recorded instead, so the summary still plots every epoch."""
    import math

    import core.jobs.models.compare as compare
    from core.jobs.models.retrain import retrain

    monkeypatch.setattr(compare, "SMALL_KB_NAMES", 0)  # the demo KB now counts as large
    for document, ids in demo.documents.documents_with_mention_ids():
        for mention, mention_id in zip(document.mentions, ids, strict=True):
            if len(mention.concept_ids) == 1:
                demo.curation.record_decision(mention_id, "accept", concept_id=mention.concept_id, curator="ann")
    report = retrain(
        demo,
        kinds=("retriever",),
        promote="never",
        max_seconds=120.0,
        epochs=3,
        held_out_fraction=0.34,
        device="cpu",
    )
    history = report.kinds["retriever"].history
    assert [h["epoch"] for h in history] == [1.0, 2.0, 3.0]
    assert all(set(h) == {"epoch", "loss"} and math.isfinite(h["loss"]) and h["loss"] > 0 for h in history)


def test_cli_retrain_on_a_cpu_leaves_the_reranker_out_and_says_why(demo, capsys):
    """`curalink retrain` follows the desk: without a GPU the cross-encoder is not trained by default
    (epochs of it would take hours on a CPU); the reason goes to stderr so --json stays JSON."""
    import json

    from app.cli import main

    for document, ids in demo.documents.documents_with_mention_ids():
        for mention, mention_id in zip(document.mentions, ids, strict=True):
            if len(mention.concept_ids) == 1:
                demo.curation.record_decision(mention_id, "accept", concept_id=mention.concept_id, curator="ann")
    path = str(demo.path)
    args = [
        "-p",
        path,
        "retrain",
        "--device",
        "cpu",
        "--epochs",
        "1",
        "--promote",
        "never",
        "--no-relink",
        "--json",
    ]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "reranker off by default" in captured.err and "CPU" in captured.err
    assert set(json.loads(captured.out)["kinds"]) == {"retriever", "ranker", "tagger"}


def test_one_retrain_policy_for_both_front_ends(demo):
    """`retrain_choice` decides the kinds for the CLI and the desk's dialog alike: on a CPU the
    reranker is offered but not ticked; kinds asked for are trained as asked; the tagger is always
    offered and ticked, a span model when one is in force (both learn from the new spans). The expected kinds are written out here."""
    from core.jobs.models.retrain_plan import retrain_choice

    cpu = retrain_choice(demo, "cpu")
    assert cpu.offered == ("retriever", "reranker", "ranker", "tagger")
    assert cpu.kinds == ("retriever", "ranker", "tagger") and "CPU" in cpu.note
    assert retrain_choice(demo, "cpu", ["reranker"]).kinds == ("reranker",)
    folder = demo.models_dir / "detector" / "v1"
    folder.mkdir(parents=True)
    demo.models.register_model("detector", "v1", folder, metrics={}, kb_fingerprint="", data_fingerprint="")
    demo.models.promote_model("detector", "v1")
    with_detector = retrain_choice(demo, "cpu")
    assert with_detector.offered == ("retriever", "reranker", "ranker", "detector", "tagger")
    assert with_detector.kinds == ("retriever", "ranker", "detector", "tagger")


def test_retrain_prunes_curator_synonyms_once(demo, monkeypatch):
    """The curator synonyms of undone decisions are pruned once per retrain, before its training set is
    built; loading the linker for the ranker's candidates does not prune them again (issue 22)."""
    import core.learn.synonyms as synonyms
    from core.jobs.models.retrain import retrain

    for document, ids in demo.documents.documents_with_mention_ids():
        for mention, mention_id in zip(document.mentions, ids, strict=True):
            if len(mention.concept_ids) == 1:
                demo.curation.record_decision(mention_id, "accept", concept_id=mention.concept_id, curator="ann")
    calls = []
    real = synonyms.prune_synonyms
    monkeypatch.setattr(synonyms, "prune_synonyms", lambda *a, **k: calls.append(1) or real(*a, **k))
    report = retrain(demo, kinds=("ranker",), promote="never", device="cpu")
    assert "ranker" in report.kinds
    assert len(calls) == 1
