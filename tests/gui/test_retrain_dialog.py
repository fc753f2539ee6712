"""The Retrain dialog drives `retrain` in a worker on the demo project (tiny budgets): progress, the
before/after table, the plot, promote and roll back; a cancel keeps the models in force. And the
adjudication view writes the adjudicator's decision."""

from __future__ import annotations

import json

from app.gui.adjudication import AdjudicationDialog
from app.gui.retrain_dialog import RetrainDialog


def _accept_gold(project, curator="tester"):
    for document, ids in project.documents_with_mention_ids():
        for mention, mention_id in zip(document.mentions, ids, strict=True):
            if len(mention.concept_ids) == 1:
                project.record_decision(mention_id, "accept", concept_id=mention.concept_id, curator=curator)


def _dialog(qtbot, project):
    dialog = RetrainDialog(project, max_seconds=2, epochs=1, held_out_fraction=0.34, device="cpu")
    qtbot.addWidget(dialog)
    dialog.kind_boxes["reranker"].setChecked(False)
    dialog.rule.setCurrentText("never")
    return dialog


def test_retrain_dialog_runs_shows_table_promotes_and_rolls_back(qtbot, demo_project):
    _accept_gold(demo_project)
    before = demo_project.active_model("retriever").version
    dialog = _dialog(qtbot, demo_project)
    dialog.show()
    progress = []
    job = dialog.start()
    job.signals.progress.connect(lambda *args: progress.append(args))
    with qtbot.waitSignal(job.signals.finished, timeout=180_000):
        pass
    qtbot.waitUntil(lambda: dialog.report is not None, timeout=5000)
    assert progress
    new = dialog.report.kinds["retriever"]
    assert dialog.table.rowCount() >= 2
    assert dialog.table.item(0, 0).text() == "retriever" and dialog.table.item(0, 1).text() == "acc@1"
    assert dialog.table.item(0, 3).text() == f"{new.new['acc@1']:.2f}"
    assert dialog.figure.axes and dialog.figure.axes[0].lines  # accuracy by epoch
    assert demo_project.active_model("retriever").version == before  # rule "never": nothing changed
    assert dialog.promote_button.isEnabled()

    with qtbot.waitSignal(dialog.modelsChanged, timeout=2000):
        dialog.promote_button.click()
    assert demo_project.active_model("retriever").version == new.version
    with qtbot.waitSignal(dialog.modelsChanged, timeout=2000):
        dialog.rollback_button.click()
    assert demo_project.active_model("retriever").version == before


def test_retrain_dialog_cancel_keeps_models(qtbot, demo_project):
    _accept_gold(demo_project)
    versions = [(v.version, v.status) for v in demo_project.model_versions()]
    dialog = _dialog(qtbot, demo_project)
    job = dialog.start()
    dialog.cancel()
    with qtbot.waitSignal(job.signals.cancelled, timeout=60_000):
        pass
    assert [(v.version, v.status) for v in demo_project.model_versions()] == versions
    assert "unchanged" in dialog.status.text()


def test_adjudication_dialog_writes_final_link(qtbot, demo_project):
    document, ids = next(demo_project.documents_with_mention_ids())
    gold = document.mentions[0].concept_id
    other = next(c.concept_id for c in demo_project.knowledge_base() if c.concept_id != gold)
    demo_project.record_decision(ids[0], "accept", concept_id=gold, curator="ann")
    demo_project.record_decision(ids[0], "correct", concept_id=other, curator="bob")
    demo_project.record_decision(ids[1], "accept", concept_id=gold, curator="ann")
    demo_project.record_decision(ids[1], "accept", concept_id=gold, curator="bob")
    dialog = AdjudicationDialog(demo_project, "judge")
    qtbot.addWidget(dialog)
    assert dialog.table.rowCount() == 1
    assert dialog.table.item(0, 1).text() == document.mentions[0].text
    assert "kappa" in dialog.summary.text()
    dialog.choose(0, "B")
    assert dialog.save() == 1
    final = demo_project.current_decisions()[ids[0]]
    assert (final.curator, final.concept_id) == ("judge", other)
    assert json.loads(final.detail_json)["adjudicated"] is True


def test_curate_menu_opens_retrain_and_adjudication(qtbot, window):
    menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Curate")
    actions = {a.text(): a for a in menu.actions()}
    actions["Retrain…"].trigger()
    assert isinstance(window.menu_dialog, RetrainDialog) and window.menu_dialog.isVisible()
    window.menu_dialog.close()
    actions["Adjudicate…"].trigger()
    assert isinstance(window.menu_dialog, AdjudicationDialog)
    assert window.menu_dialog.adjudicator == "tester"
    window.menu_dialog.close()
