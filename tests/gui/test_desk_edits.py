"""Issue 10 in the real window on the demo project: a span or type edit re-suggests at once and no key
acts on the old candidates (item 4); one decision links a composite mention to several concepts (item 5);
the export dialog offers the CLI's filters (item 11)."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Qt

from app.gui.workers import LinkedChunk
from core.documents import Candidate
from core.store.curation_log import SuggestionSet, mention_key
from core.store.schema import DecisionRow

CTRL = Qt.KeyboardModifier.ControlModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "formats"
TIMEOUT = 600_000
"""Waits end on the event they wait for (new suggestions shown); this only stops a hang. The first
re-suggest loads the models: 60 s was a budget that a loaded machine missed (issue 23 item 9)."""


def _select(window, doc_id: str, text: str) -> int:
    window.document.open_document(doc_id)
    index = next(i for i, m in enumerate(window.model.doc.mentions) if m.text == text)
    window.document.select_mention(index)
    return window.model.mention_ids[index]


def _key(window, mention_id: int):
    return mention_key(window.model.doc.mentions[window.model.mention_ids.index(mention_id)])


def _suggested(window, mention_id: int) -> bool:
    """The window holds suggestions computed for the mention's current span and type."""
    return bool(window.model.suggestions.get(mention_id)) and window.model.suggested_for.get(
        mention_id
    ) == _key(window, mention_id)


def test_extending_a_span_resuggests_and_enter_waits_for_the_new_candidates(window, demo_project, qtbot):
    mention_id = _select(window, "90000004", "ovarian cancer")
    original = [c.concept_id for c in demo_project.curation.suggestions(mention_id)]
    assert original[0] == "D010051"  # the demo links "ovarian cancer" to Ovarian Neoplasms
    # The imported span is cut short ("an cancer"), as in the issue, and suggested for as it is.
    start, end = (
        window.model.doc.mentions[window.model.current].start,
        window.model.doc.mentions[window.model.current].end,
    )
    demo_project.documents.set_mention_span(mention_id, start + 5, end)
    window.links.resuggest(mention_id)
    window.document.refresh(mention_id)
    assert window.model.doc.mentions[window.model.current].text == "an cancer"
    qtbot.waitUntil(lambda: _suggested(window, mention_id), timeout=TIMEOUT)
    short_key = _key(window, mention_id)

    with window.service._lock:  # hold the worker back: the new suggestions cannot have arrived yet
        for _ in range(5):  # Ctrl+Shift+Left moves the start back to "ovarian cancer"
            qtbot.keyClick(window, Qt.Key.Key_Left, CTRL | SHIFT)
        assert window.model.doc.mentions[window.model.current].text == "ovarian cancer"
        # At once: the old candidates are gone from the store and the panel, so Enter stores nothing.
        assert window.model.suggestions[mention_id] == [] and window.candidates.model.candidates == []
        assert mention_id not in demo_project.curation.suggestion_sets([mention_id])
        assert "computing suggestions for the new span" in window.candidates.mention_label.text()
        qtbot.keyClick(window, Qt.Key.Key_Return)
        assert mention_id not in demo_project.curation.current_decisions()

    qtbot.waitUntil(lambda: _suggested(window, mention_id), timeout=TIMEOUT)
    assert [c.concept_id for c in window.model.suggestions[mention_id]] == original
    qtbot.keyClick(window, Qt.Key.Key_Return)
    decision = demo_project.curation.current_decisions()[mention_id]
    assert (decision.action, decision.concept_id) == ("accept", "D010051")

    # Undo the accept, then the span edit: the short span comes back and is suggested for again.
    qtbot.keyClick(window, Qt.Key.Key_Z, CTRL)
    window.document.select_mention(window.model.mention_ids.index(mention_id))
    with window.service._lock:
        qtbot.keyClick(window, Qt.Key.Key_Z, CTRL)
        assert window.model.doc.mentions[window.model.mention_ids.index(mention_id)].text == "an cancer"
        assert window.model.suggestions[mention_id] == []
    qtbot.waitUntil(lambda: _suggested(window, mention_id), timeout=TIMEOUT)
    assert window.model.suggested_for[mention_id] == short_key
    assert mention_id not in demo_project.curation.current_decisions()


def test_a_late_answer_for_an_old_span_never_reaches_the_panel(window, demo_project, qtbot):
    mention_id = _select(window, "90000004", "ovarian cancer")
    old_key = _key(window, mention_id)
    stale = [Candidate("D009369", "Neoplasms", "Neoplasms", 0.99)]
    window.curation.adjust(0, -1)  # "ovarian cance"
    chunk = LinkedChunk(["90000004"], demo_project.desk.queue(), {mention_id: SuggestionSet(old_key, stale)})
    window.links.on_chunk(chunk)  # a linker that read the old span answers late
    assert window.model.suggestions[mention_id] != stale
    qtbot.keyClick(window, Qt.Key.Key_Return)
    assert mention_id not in demo_project.curation.current_decisions()
    # The store refuses a decision made on suggestions for the old span, whoever sends it.
    window.model.suggestions[mention_id], window.model.suggested_for[mention_id] = stale, old_key
    assert not window.curation.accept_rank(1)
    assert mention_id not in demo_project.curation.current_decisions()
    assert "not saved" in window.statusBar().currentMessage()
    assert not window.undo_stack.canRedo() and window.undo_stack.count() == 1  # only the span edit


def test_a_type_change_resuggests_and_undoes(window, demo_project, qtbot):
    mention_id = _select(window, "90000004", "ovarian cancer")
    assert window.curation.change_type("SpecificDisease")
    assert window.model.doc.mentions[window.model.current].type == "SpecificDisease"
    assert window.model.suggestions[mention_id] == []
    qtbot.waitUntil(lambda: _suggested(window, mention_id), timeout=TIMEOUT)
    qtbot.keyClick(window, Qt.Key.Key_Z, CTRL)
    assert window.model.doc.mentions[window.model.mention_ids.index(mention_id)].type == "Disease"
    qtbot.waitUntil(lambda: _suggested(window, mention_id), timeout=TIMEOUT)
    with demo_project.session() as session:
        edits = [r.action for r in session.query(DecisionRow).where(DecisionRow.mention_id == mention_id)]
    assert edits == ["change_type", "change_type"]
    dialog = window.curation.change_type()  # T: a chooser with the types in use
    assert "CompositeMention" in [dialog.comboBoxItems()[i] for i in range(len(dialog.comboBoxItems()))]
    dialog.reject()


def test_composite_mention_linked_to_several_concepts(window, demo_project, qtbot, tmp_path):
    mention_id = _select(window, "90000004", "Breast and ovarian cancer")
    ranked = [c.concept_id for c in window.model.suggestions[mention_id]]
    breast, ovarian = ranked.index("D001943") + 1, ranked.index("D010051") + 1
    assert max(breast, ovarian) <= 9
    qtbot.keyClick(window, getattr(Qt.Key, f"Key_{breast}"), CTRL)
    qtbot.keyClick(window, getattr(Qt.Key, f"Key_{ovarian}"), CTRL)
    assert window.candidates.model.marked == {"D001943", "D010051"}
    qtbot.keyClick(window, Qt.Key.Key_Return)
    decision = demo_project.curation.current_decisions()[mention_id]
    assert (decision.action, decision.concept_id) == ("accept", "D001943|D010051")
    assert json.loads(decision.detail_json)["ranks"] == [breast, ovarian]

    window.document.select_mention(window.model.mention_ids.index(mention_id))
    assert window.candidates.model.linked == {"D001943", "D010051"}
    label = window.candidates.mention_label.text()
    assert "Breast Neoplasms" in label and "Ovarian Neoplasms" in label
    mark = window.abstract.marks[window.model.current]
    assert mark.state == "accepted" and "D001943 Breast Neoplasms | D010051 Ovarian Neoplasms" in mark.concept

    qtbot.keyClick(window, Qt.Key.Key_Z, CTRL)  # one undo step for the whole link
    assert mention_id not in demo_project.curation.current_decisions()
    qtbot.keyClick(window, Qt.Key.Key_Z, CTRL | SHIFT)
    assert demo_project.curation.current_decisions()[mention_id].concept_id == "D001943|D010051"

    # A KB search adds a concept to the link (Ctrl+Enter) instead of replacing it (Enter).
    window.document.select_mention(window.model.mention_ids.index(mention_id))
    dialog = window.curation.open_kb_search()
    dialog.query.setText("prostatic neoplasms")
    dialog.run_search()
    assert dialog.result_ids()[0] == "D011471"
    qtbot.keyClick(dialog.query, Qt.Key.Key_Return, CTRL)
    assert demo_project.curation.current_decisions()[mention_id].concept_id == "D001943|D010051"  # not yet
    qtbot.keyClick(window, Qt.Key.Key_Return)  # Enter stores the link built
    decision = demo_project.curation.current_decisions()[mention_id]
    assert (decision.action, decision.concept_id) == ("correct", "D001943|D010051|D011471")

    window.act_help.trigger()
    help_text = window.help_overlay.findChild(type(window.doc_meta)).text()
    assert "Ctrl+1 – 9" in help_text and "Ctrl+Enter" in help_text
    window.help_overlay.hide()

    out = tmp_path / "curated.pubtator"
    window.files.export_to(out, "pubtator", accepted_only=True)
    qtbot.waitUntil(window.menu_job.done.is_set, timeout=30000)
    lines = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines() if "\t" in line]
    assert lines == [
        ["90000004", "0", "25", "Breast and ovarian cancer", "CompositeMention", "D001943|D010051|D011471"]
    ]


def test_export_dialog_offers_curated_accepted_and_split_filters(window, demo_project, qtbot, tmp_path):
    job = window.files.import_corpus_from(FIXTURES / "composite.pubtator", "pubtator", "dev")
    qtbot.waitUntil(job.done.is_set, timeout=30000)
    window.document.reload_queue()
    _select(window, "1000001", "seizures")
    window.curation.decide("nil")  # curated, nothing accepted
    window.document.open_document("90000001")
    window.curation.accept_rank(1)

    def export(**filters) -> list[str]:
        window.files.act_export.trigger()
        dialog = window.menu_dialog
        assert [dialog.split_box.itemText(i) for i in range(dialog.split_box.count())] == [
            "all documents",
            "dev",
        ]
        dialog.path_edit.setText(str(tmp_path / "out.jsonl"))
        dialog.format_box.setCurrentText("jsonl")
        dialog.curated_only.setChecked(filters.get("curated_only", False))
        dialog.accepted_only.setChecked(filters.get("accepted_only", False))
        dialog.split_box.setCurrentText(filters.get("split", "all documents"))
        dialog.accept()
        qtbot.waitUntil(window.menu_job.done.is_set, timeout=30000)
        lines = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
        return [json.loads(line)["doc_id"] for line in lines]

    assert export(curated_only=True) == ["90000001", "1000001"]
    assert export(curated_only=True, split="dev") == ["1000001"]
    assert export(accepted_only=True) == ["90000001"]
    assert export(accepted_only=True, split="dev") == []
    assert len(export()) == len(demo_project.documents.document_ids())
