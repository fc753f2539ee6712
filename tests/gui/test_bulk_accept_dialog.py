"""Bulk accept as a calibrated tool (issue 23 item 5): the dialog names the ranker's probability, counts
what the threshold accepts (checked against an SQL count of the store's own rows), shows the precision
and coverage the ranker measured on held-out data at that threshold with the precision it promises (the
measured one's 95 % lower bound, issue 25: checked against scipy's Wilson interval), and defaults to the
smallest threshold whose promise reaches 98 % (checked against the curve read from ranker.json)."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from PySide6.QtWidgets import QDialogButtonBox

CURVE_KEY = "bulk_accept_held_out"


@pytest.fixture
def ranked_project(demo_project):
    """The demo with a ranker trained on its gold (decided, then reverted) and every mention relinked
    with it: undecided mentions whose suggestions carry the ranker's probability."""
    from core.jobs.linking.suggestions import ProjectLinker
    from core.jobs.models.ranker import train_ranker_for_project

    decided = []
    for document, mention_ids in demo_project.documents.documents_with_mention_ids():
        for mention, mention_id in zip(document.mentions, mention_ids, strict=True):
            if len(mention.concept_ids) == 1:
                top = demo_project.curation.suggestions(mention_id)
                action = "accept" if top and top[0].concept_id == mention.concept_id else "correct"
                demo_project.curation.record_decision(
                    mention_id, action, concept_id=mention.concept_id, curator="ann"
                )
                decided.append(mention_id)
    assert train_ranker_for_project(demo_project, device="cpu").trained
    for mention_id in decided:
        demo_project.curation.record_decision(mention_id, "revert", curator="ann")
    ProjectLinker.for_project(demo_project, device="cpu").link_project(demo_project)
    assert demo_project.curation.current_decisions() == {}
    return demo_project


@pytest.fixture
def ranked_window(qtbot, ranked_project, app_settings):
    from app.gui.main_window import MainWindow

    win = MainWindow(ranked_project, app_settings, background=False)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.service.shutdown()


def _stored_curve(project) -> dict:
    active = project.models.active_model("ranker")
    return json.loads((Path(active.path) / "ranker.json").read_text(encoding="utf-8"))["metrics"][CURVE_KEY]


def _sql_count(project, threshold: float, ranker: str, mention_ids=None) -> tuple[int, int]:
    """(mentions, documents) bulk accept should take, counted in SQL on the database file itself."""
    scope = "" if mention_ids is None else f"AND m.id IN ({','.join(map(str, mention_ids))})"
    with sqlite3.connect(project.path / "curalink.db") as db:
        rows = db.execute(
            f"""SELECT m.id, m.document_id FROM suggestions s JOIN mentions m ON m.id = s.mention_id
                WHERE s.rank = 1 AND NOT m.removed {scope}
                  AND COALESCE(s.reranker_score, s.retriever_score) >= ?
                  AND s.reranker_version LIKE ?
                  AND m.id NOT IN (SELECT mention_id FROM mention_state WHERE decision_id IS NOT NULL)""",
            (threshold, f"%ranker {ranker}"),
        ).fetchall()
    return len(rows), len({document for _, document in rows})


def _plain(label) -> str:
    return re.sub(r"<[^>]+>", "", label.text()).replace("\u00a0", " ")


def _bound(precision: float | None, coverage: float, mentions: int) -> float | None:
    """The one-sided 95 % Wilson lower bound (scipy) of a precision measured on coverage % of mentions."""
    from scipy.stats import binomtest

    accepted = round(coverage * mentions / 100)
    if precision is None or not accepted:
        return None
    right = round(precision * accepted / 100)
    low = 100 * binomtest(right, accepted).proportion_ci(confidence_level=0.90, method="wilson").low
    return round(low, 2)  # as the curve keeps it


def _expected_default(curve: dict) -> float:
    """The smallest threshold whose promise reaches 98 %, when 100 mentions or more were held out."""
    reached = [
        t
        for t, p, c in zip(curve["thresholds"], curve["precision"], curve["coverage"])
        if (_bound(p, c, curve["mentions"]) or 0.0) >= 98.0
    ]
    return min(reached) if reached and curve["mentions"] >= 100 else 0.90


def test_the_dialog_counts_names_the_score_and_shows_held_out_figures(ranked_window, ranked_project, qtbot):
    window, project = ranked_window, ranked_project
    curve = _stored_curve(project)
    window.act_bulk.trigger()
    dialog = window.menu_dialog
    assert dialog.isVisible()
    assert "calibrated probability of ranker v1" in dialog.score_label.text()
    assert dialog.threshold.value() == pytest.approx(_expected_default(curve))
    if curve["mentions"] < 100:  # the demo's: 46 mentions, all right at every threshold
        assert f"measured on {curve['mentions']} held-out mentions, too few" in dialog.default_label.text()

    for threshold in (0.5, 0.77, 0.95):
        dialog.threshold.setValue(threshold)
        count, _ = _sql_count(project, threshold, "v1", window.model.mention_ids)
        assert f"Accepts {count} mention" in _plain(dialog.count_label)
        index = curve["thresholds"].index(threshold)
        precision, coverage = curve["precision"][index], curve["coverage"][index]
        text = _plain(dialog.held_out_label)
        assert f"{curve['mentions']:,} mentions" in text and f"coverage {coverage:.1f} %" in text
        bound = _bound(precision, coverage, curve["mentions"])
        assert (f"precision at least {bound:.1f} %" if bound is not None else "precision at least –") in text
        assert (f"{precision:.1f} % measured" if precision is not None else "– measured") in text

    dialog.threshold.setValue(0.5)
    dialog.scope.setCurrentIndex(1)  # the whole queue
    count, documents = _sql_count(project, 0.5, "v1")
    assert count > 0 and f"Accepts {count} mentions in {documents} document" in _plain(dialog.count_label)
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok).click()
    state = project.curation.current_decisions()
    assert len(state) == count
    assert all(
        d.action == "accept" and json.loads(d.detail_json)["bulk_threshold"] == 0.5 for d in state.values()
    )
    assert _sql_count(project, 0.5, "v1") == (0, 0)


def test_the_default_follows_the_stored_curve(ranked_window, ranked_project):
    """A curve written by hand into ranker.json, as rankers stored it before issue 25 (no counts): 10,000
    mentions, 97 % right below 0.84, 99 % from 0.84 up."""
    active = ranked_project.models.active_model("ranker")
    path = Path(active.path) / "ranker.json"
    stored = json.loads(path.read_text(encoding="utf-8"))
    thresholds = [round(i / 100, 2) for i in range(101)]
    stored["metrics"][CURVE_KEY] = {
        "mentions": 10_000,
        "thresholds": thresholds,
        "precision": [97.0 if t < 0.84 else 99.0 for t in thresholds],
        "coverage": [round(100 - 50 * t, 2) for t in thresholds],
    }
    path.write_text(json.dumps(stored), encoding="utf-8")
    dialog = ranked_window.curation.bulk_accept_dialog()
    assert dialog.threshold.value() == pytest.approx(0.84)
    assert "Default 0.84: the smallest threshold whose precision on held-out data vouches for 98 %" in (
        dialog.default_label.text()
    )
    at_084 = _bound(99.0, 58.0, 10_000)  # 5,742 of 5,800: 98.8 %
    assert f"precision at least {at_084:.1f} % (95 % lower bound; 99.0 % measured), coverage 58.0 %" in (
        _plain(dialog.held_out_label)
    )
    dialog.threshold.setValue(0.83)
    at_083 = _bound(97.0, 58.5, 10_000)
    assert f"precision at least {at_083:.1f} % (95 % lower bound; 97.0 % measured), coverage 58.5 %" in (
        _plain(dialog.held_out_label)
    )


def test_without_a_ranker_the_dialog_falls_back_to_090_and_says_so(window):
    dialog = window.curation.bulk_accept_dialog()
    assert dialog.threshold.value() == pytest.approx(0.90)
    assert "fixed fallback: no ranker in force" in dialog.default_label.text()
    assert "not a probability" in dialog.score_label.text()
    assert "No held-out precision or coverage" in dialog.held_out_label.text()
    suggestions = window.project.curation.suggestions_for(window.model.mention_ids)
    expected = sum(1 for m in window.model.mention_ids if suggestions[m] and suggestions[m][0].score >= 0.9)
    assert f"Accepts {expected} mention" in _plain(dialog.count_label)


def test_suggestions_the_ranker_did_not_score_are_never_bulk_accepted(ranked_window, ranked_project):
    from core.jobs.linking.suggestions import ProjectLinker

    window, project = ranked_window, ranked_project
    doc_id = window.model.doc.doc_id
    ProjectLinker.for_project(project, device="cpu", use_ranker=False).link_project(project, ids=[doc_id])
    window.document.open_document(doc_id)
    assert not any(
        project.curation.suggestion_version(m).endswith("ranker v1") for m in window.model.mention_ids
    )
    dialog = window.curation.bulk_accept_dialog()
    dialog.threshold.setValue(0.0)
    assert "Accepts 0 mentions in this document, of 0 undecided" in _plain(dialog.count_label)
    others = len([m for m in window.model.mention_ids if project.curation.suggestions(m)])
    assert others > 0 and dialog.other_label.isVisible()
    assert f"{others} undecided mentions here have suggestions ranker v1 did not score" in _plain(
        dialog.other_label
    )
    assert not dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok).isEnabled()
    assert window.curation.bulk_accept(0.0) == 0 and project.curation.current_decisions() == {}
    dialog.scope.setCurrentIndex(1)  # the rest of the queue was scored by the ranker
    count, _ = _sql_count(project, 0.0, "v1")
    assert count > 0 and f"Accepts {count} mentions" in _plain(dialog.count_label)
