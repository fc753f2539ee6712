"""One promotion rule for every model kind (core.jobs.models.kinds), applied where a retrain publishes a version.

For each kind the held-out figures are computed by the kind's own measuring code from hand-made rankings
(or, for the detector, span counts), and the expected decision is worked out here by counting hits, not
with the code's numbers; the decision is then carried through `publish_retrained` into a real project's
registry: a better version goes in force, a worse or an incomparable one stays a candidate.
"""

from __future__ import annotations

import json

import pytest

from core.documents import Candidate, Document, Mention, Passage
from core.jobs.models.compare import ranked_metrics
from core.jobs.models.kinds import KINDS, LINKING_KINDS, model_kind, promotion_decision
from core.jobs.models.retrain_report import KindReport, publish_retrained
from core.jobs.models.versions import draft_version
from core.kb.concept import Concept
from core.kb.knowledge_base import KnowledgeBase
from core.store import Project

KB = KnowledgeBase([Concept(f"D{i}", "MESH", f"disease {i}") for i in range(6)])
GOLD = ["D0", "D1", "D2", "D3"]  # one mention per gold concept
DOCUMENTS = [
    Document(
        "doc",
        (Passage(0, " ".join(f"m{i}" for i in range(len(GOLD)))),),
        mentions=tuple(Mention(3 * i, 3 * i + 2, f"m{i}", concept_id=g) for i, g in enumerate(GOLD)),
    )
]


def _ranking(right: int) -> list[list[list[Candidate]]]:
    """The first `right` mentions have their gold concept on top, the others a wrong one on top."""
    rows = []
    for i, gold in enumerate(GOLD):
        wrong = "D5"
        order = [gold, wrong] if i < right else [wrong, gold]
        rows.append([Candidate(c, c, c, 1.0 - n / 10) for n, c in enumerate(order)])
    return [rows]


def test_every_kind_is_registered_with_its_jobs():
    assert set(KINDS) == {"retriever", "reranker", "ranker", "detector", "tagger"}
    assert LINKING_KINDS == ("retriever", "reranker", "ranker")
    for kind in KINDS.values():
        for which in ("train", "evaluate", "load"):
            assert callable(kind.job(which)), f"{kind.name}.{which}"


def _figures(kind: str, right: int) -> dict:
    """Held-out figures as each kind measures them: ranked lists for the linking kinds, span counts
    turned into F1 for the detector (its score is the mean of span F1 and end-to-end F1)."""
    if kind not in ("detector", "tagger"):
        return ranked_metrics(DOCUMENTS, _ranking(right), KB, 2)
    gold_spans = len(GOLD)
    f1 = 100 * 2 * right / (right + gold_spans)  # `right` spans found, all of them correct
    return {"score": round(f1, 2), "span_f1": f1}


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize(("old_right", "new_right"), [(2, 3), (3, 3), (3, 1)])
def test_the_rule_promotes_a_version_at_least_as_good_and_refuses_a_worse_one(kind, old_right, new_right):
    promoted, reason = promotion_decision(kind, _figures(kind, new_right), _figures(kind, old_right))
    # counted here: a version goes in force when it gets at least as many held-out items right
    assert promoted is (new_right >= old_right), reason
    assert model_kind(kind).score_name in reason


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_nothing_to_compare_on_is_refused_and_nothing_in_force_is_promoted(kind):
    assert promotion_decision(kind, {}, _figures(kind, 4))[0] is False
    assert promotion_decision(kind, _figures(kind, 0), {})[0] is True
    assert promotion_decision(kind, _figures(kind, 0), _figures(kind, 4), "always")[0] is True
    assert promotion_decision(kind, _figures(kind, 4), _figures(kind, 0), "never")[0] is False


def test_an_unknown_rule_or_kind_is_refused():
    from core.errors import CuralinkError

    with pytest.raises(CuralinkError, match="promotion rule"):
        promotion_decision("retriever", {"acc@1": 1.0}, {}, "when-i-say-so")
    with pytest.raises(CuralinkError, match="model kind"):
        model_kind("lexicon")


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_retrain_step_publishes_under_the_rule(tmp_path, kind):
    """A better version (3 of 4 right vs 2) goes in force; then a worse one (1 of 4) is registered as a
    candidate beside it, the better one staying in force; both folders are complete."""
    with Project.create(tmp_path / "p") as project:
        for right, previous in ((2, None), (3, "v1"), (1, "v2")):
            with draft_version(project, kind) as draft:
                (draft.folder / "weights.txt").write_text(str(right))
                report = KindReport(kind, draft.version, previous or "", "")
                report.new = _figures(kind, right)
                report.old = _figures(kind, {None: 0, "v1": 2, "v2": 3}[previous]) if previous else {}
                publish_retrained(
                    project, draft, report, rule="if-not-worse", kb_fingerprint="kb", data_fingerprint="d"
                )
            folder = project.models_dir / kind / draft.version
            assert (folder / "weights.txt").read_text() == str(right)
            assert json.loads((folder / "metrics.json").read_text())["decision"] == report.reason
        assert project.models.active_model(kind).version == "v2"
        statuses = {row.version: row.status for row in project.models.model_versions(kind)}
        assert statuses["v3"] == "candidate"
        assert not list((project.models_dir / kind).glob(".*"))  # no scratch folder left
