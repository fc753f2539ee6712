"""The models room (issue 34): the registry (core.model_kinds) drives the CLI's `train` and `evaluate`
subcommands and a retrain's phases and choice, `load_linker` loads through the registry's loaders, and
`retrain_and_relink` relinks exactly when the promotion rule put something in force."""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from app.cli import build_parser
from app.cli.kind_options import keywords
from core.jobs.models.kinds import KINDS, ModelKind, Option
from core.jobs.models.relinking import RetrainOutcome, retrain_and_relink
from core.jobs.models.retrain_report import KindReport, RetrainReport
from core.model_kinds import KindCommands

FAKE = ModelKind(
    "fake",
    score="acc@1",
    score_name="held-out acc@1",
    held_out="mentions",
    needs="nothing",
    train="tests.test_models_room:_fake_train",
    retrain="tests.test_models_room:_fake_train",
    evaluate="tests.test_models_room:_fake_train",
    load="tests.test_models_room:_fake_train",
    commands=KindCommands(
        "train the fake kind",
        (
            Option("--alpha", "whole", 2, "how much", minimum=1),
            Option("--loud", "switch", False, keyword="shout"),
        ),
        "measure the fake kind",
        (Option("--split", "choice", "test", choices=("dev", "test")),),
        evaluate_name="fakes",
    ),
    phases=(("warming", 0.5), ("training", 1.0)),
    retrained_by_default=False,
)


def _fake_train(*args, **kwargs):
    raise AssertionError("not called by these tests")


def _subcommands(parser: argparse.ArgumentParser, verb: str) -> dict[str, argparse.ArgumentParser]:
    (top,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    (sub,) = [a for a in top.choices[verb]._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def _flags(parser: argparse.ArgumentParser) -> set[str]:
    return {flag for a in parser._actions for flag in a.option_strings if flag not in ("-h", "--help")}


def test_every_registered_kind_has_its_train_and_evaluate_subcommands_and_nothing_else_does():
    parser = build_parser()
    train, evaluate = _subcommands(parser, "train"), _subcommands(parser, "evaluate")
    assert set(train) == set(KINDS)
    named = {
        ("detect" if kind == "detector" else kind): kind for kind in KINDS if kind != "tagger"
    }  # the tagger is measured by `evaluate detect`, with the detector
    assert set(evaluate) == set(named)
    for name, kind in named.items():
        assert _flags(evaluate[name]) == {o.flag for o in KINDS[kind].commands.evaluate_options}
    for kind, sub in train.items():
        assert _flags(sub) == {o.flag for o in KINDS[kind].commands.train_options}


def test_a_kind_added_to_the_registry_gets_its_subcommands_phases_and_a_place_in_a_retrain(monkeypatch):
    from core.jobs.models.retrain_plan import retrain_phases

    monkeypatch.setitem(KINDS, "fake", FAKE)
    parser = build_parser()
    assert "fake" in _subcommands(parser, "train") and "fakes" in _subcommands(parser, "evaluate")
    args = parser.parse_args(["-p", "x", "train", "fake", "--alpha", "3", "--loud"])
    assert keywords(args, FAKE.commands.train_options) == {"alpha": 3, "shout": True}
    args = parser.parse_args(["-p", "x", "evaluate", "fakes", "--split", "dev"])
    assert args.evaluated_kind == "fake" and keywords(args, FAKE.commands.evaluate_options) == {
        "split": "dev"
    }
    with pytest.raises(SystemExit):  # checked by the parser, as every declared whole number
        parser.parse_args(["-p", "x", "train", "fake", "--alpha", "0"])
    phases = dict(retrain_phases(("retriever", "fake"), 100))
    assert phases["fake: warming"] == 50 and phases["fake: training"] == 100
    assert list(phases) == [
        "preparing",
        "retriever: training",
        "retriever: evaluating",
        "fake: warming",
        "fake: training",
    ]


class _Models:
    def __init__(self, active: dict):
        self.active = active

    def active_model(self, kind):
        return self.active.get(kind)


def test_retrain_choice_offers_the_registry_s_kinds(monkeypatch):
    from core.jobs.models import retrain_plan

    monkeypatch.setattr(
        retrain_plan, "reranker_advice", lambda device="auto": retrain_plan.RerankerAdvice(False, "no GPU")
    )
    project = type("P", (), {"models": _Models({})})()
    choice = retrain_plan.retrain_choice(project)
    assert choice.offered == ("retriever", "reranker", "ranker", "tagger")  # no detector in force
    assert choice.kinds == ("retriever", "ranker", "tagger") and choice.note == "no GPU"
    project.models = _Models({"detector": object()})
    monkeypatch.setitem(KINDS, "fake", FAKE)
    assert retrain_plan.retrain_choice(project).offered == (
        "retriever",
        "reranker",
        "ranker",
        "detector",
        "tagger",
        "fake",
    )


def _report(**promoted: bool) -> RetrainReport:
    report = RetrainReport()
    for number, (kind, went) in enumerate(promoted.items(), start=2):
        report.kinds[kind] = KindReport(kind, f"v{number}", "v1", "", promoted=went)
    return report


@pytest.mark.parametrize(
    ("promoted", "relink", "changed"),
    [
        ({"retriever": True, "ranker": False}, True, {"retriever": "v2"}),
        ({"retriever": False, "ranker": True}, True, {"ranker": "v3"}),
        ({"retriever": False, "ranker": False}, True, {}),
        ({"retriever": True}, False, {"retriever": "v2"}),
    ],
)
def test_retrain_and_relink_relinks_only_what_the_rule_put_in_force(promoted, relink, changed):
    report = _report(**promoted)
    calls = []

    def retrainer(project, **options):
        calls.append(("retrain", options["kinds"], options["device"]))
        return report

    def relinker(project, what, **options):
        calls.append(("relink", dict(what), options["device"]))
        return "relinked"

    outcome = retrain_and_relink(
        "project", kinds=("retriever",), relink=relink, retrainer=retrainer, relinker=relinker, device="cpu"
    )
    assert isinstance(outcome, RetrainOutcome) and outcome.report is report and outcome.changed == changed
    expected = [("retrain", ("retriever",), "cpu")]
    if relink and changed:
        expected.append(("relink", changed, "cpu"))
    assert calls == expected
    assert outcome.relinked == ("relinked" if relink and changed else None)


# The spy loaders the registry is pointed at below ("module:function", as every entry names its loader).
_spy_retriever = _spy_reranker = _spy_ranker = None


def test_load_linker_loads_each_model_through_the_registry(demo, monkeypatch):
    from core.project_models import load_linker

    loaded = []
    for kind in ("retriever", "reranker", "ranker"):
        real = KINDS[kind].load

        def spy(project, row, _kind=kind, _real=real, **options):
            loaded.append((_kind, row.version))
            return KINDS[_kind].job(_real)(project, row, **options)  # the loader named before

        monkeypatch.setattr(f"tests.test_models_room._spy_{kind}", spy)
        monkeypatch.setitem(
            KINDS, kind, dataclasses.replace(KINDS[kind], load=f"tests.test_models_room:_spy_{kind}")
        )
    linker = load_linker(demo, use_reranker=True)
    in_force = [
        (kind, demo.models.active_model(kind).version)
        for kind in ("retriever", "reranker", "ranker")
        if demo.models.active_model(kind) is not None
    ]
    assert loaded == in_force and in_force[0][0] == "retriever"
    assert linker.retriever_version == in_force[0][1]
