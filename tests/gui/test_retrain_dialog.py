"""The Retrain dialog: the reranker proposed only with a GPU, its options handed to the desk (which runs
the retrain in the background: tests/gui/test_desk_retrain.py). And the adjudication view writes the
adjudicator's decision."""

from __future__ import annotations

import json

from app.gui.adjudication import AdjudicationDialog
from app.gui.retrain_dialog import RetrainDialog


def test_retrain_dialog_proposes_the_reranker_only_with_a_gpu(qtbot, demo_project):
    import torch

    from core.jobs.models.retrain_plan import reranker_advice

    dialog = RetrainDialog(demo_project, device="auto")
    qtbot.addWidget(dialog)
    gpu = torch.cuda.is_available()
    assert dialog.kind_boxes["reranker"].isChecked() == gpu
    assert dialog.kind_boxes["retriever"].isChecked() and dialog.kind_boxes["ranker"].isChecked()
    assert dialog.reranker_note.text().lower().startswith(reranker_advice("auto").reason[:20].lower())
    cpu = RetrainDialog(demo_project, device="cpu")
    qtbot.addWidget(cpu)
    assert not cpu.kind_boxes["reranker"].isChecked() and "CPU" in cpu.reranker_note.text()


def test_retrain_dialog_hands_its_options_to_the_desk(qtbot, demo_project):
    dialog = RetrainDialog(demo_project, max_seconds=2, epochs=1, held_out_fraction=0.34, device="cpu")
    qtbot.addWidget(dialog)
    dialog.show()
    for box in dialog.kind_boxes.values():
        box.setChecked(False)
    assert dialog.start() is None and "at least one" in dialog.status.text()
    dialog.kind_boxes["retriever"].setChecked(True)
    with qtbot.waitSignal(dialog.startRequested, timeout=1000) as blocker:
        dialog.start_button.click()
    assert blocker.args[0] == {
        "kinds": ("retriever",),
        "max_seconds": 2.0,
        "epochs": 1,
        "promote": "never",
        "held_out_fraction": 0.34,
        "device": "cpu",
    }
    assert not dialog.isVisible()


def test_retrain_dialog_sets_no_time_limit_by_default(qtbot, demo_project):
    """Training is bounded by epochs; a time limit is the curator's option (0 in the box: none)."""
    dialog = RetrainDialog(demo_project, device="cpu")
    qtbot.addWidget(dialog)
    assert dialog.seconds.value() == 0 and dialog.seconds.text().startswith("none")
    assert dialog.options()["max_seconds"] is None and dialog.options()["epochs"] == 4
    dialog.seconds.setValue(90)
    assert dialog.options()["max_seconds"] == 90.0


def test_adjudication_dialog_writes_final_link(qtbot, demo_project):
    document, ids = next(demo_project.documents.documents_with_mention_ids())
    gold = document.mentions[0].concept_id
    other = next(c.concept_id for c in demo_project.kb.knowledge_base() if c.concept_id != gold)
    demo_project.curation.record_decision(ids[0], "accept", concept_id=gold, curator="ann")
    demo_project.curation.record_decision(ids[0], "correct", concept_id=other, curator="bob")
    demo_project.curation.record_decision(ids[1], "accept", concept_id=gold, curator="ann")
    demo_project.curation.record_decision(ids[1], "accept", concept_id=gold, curator="bob")
    dialog = AdjudicationDialog(demo_project, "judge")
    qtbot.addWidget(dialog)
    assert dialog.table.rowCount() == 1
    assert dialog.table.item(0, 1).text() == document.mentions[0].text
    assert "kappa" in dialog.summary.text()
    dialog.choose(0, "B")
    assert dialog.save() == 1
    final = demo_project.curation.current_decisions()[ids[0]]
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


def test_summary_plots_every_epoch_of_each_model(qtbot):
    from app.gui.retrain_summary import RetrainSummary
    from core.jobs.models.retrain import KindReport, RetrainReport

    retriever = KindReport("retriever", "v2", "v1", "", old={"acc@1": 50.0}, new={"acc@1": 60.0})
    retriever.history = [
        {"epoch": 1.0, "loss": 0.9},
        {"epoch": 2.0, "loss": 0.7},
        {"epoch": 2.5, "loss": 0.6},
    ]
    reranker = KindReport("reranker", "v1", "", "", old={"acc@1": 55.0}, new={"acc@1": 58.0})
    reranker.history = [{"epoch": e, "train acc@1": a} for e, a in ((0.5, 40.0), (1.0, 52.0), (1.5, 57.0))]
    summary = RetrainSummary(RetrainReport(kinds={"retriever": retriever, "reranker": reranker}))
    qtbot.addWidget(summary)
    lines = [line for axes in summary.figure.axes for line in axes.lines]
    plotted = {line.get_label(): list(line.get_xdata()) for line in lines}
    assert plotted == {"reranker train acc@1": [0.5, 1.0, 1.5], "retriever loss": [1.0, 2.0, 2.5]}
    assert summary.promote_button.isEnabled() and not summary.rollback_button.isEnabled()
    with qtbot.waitSignal(summary.promoteRequested, timeout=1000) as blocker:
        summary.promote_button.click()
    assert blocker.args[0] == {"retriever": "v2", "reranker": "v1"}
    assert not summary.promote_button.isEnabled() and summary.rollback_button.isEnabled()
