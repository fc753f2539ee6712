"""Issue 23 item 4 in the real window: Alt+Enter accepts without teaching, Curate ▸ Learnt from curators…
lists what a correction taught, Remove there is one Ctrl+Z step, and the project's switch is one setting
seen by the menu and the dialog alike."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt

from core.jobs.curation import learnt
from core.jobs.curation import operations as curation
from tests.test_curator_synonyms import _correctable
from tests.test_live_learning import _wrong_concept

ALT = Qt.KeyboardModifier.AltModifier
CTRL = Qt.KeyboardModifier.ControlModifier


def _suggested(window, project) -> int:
    """Open a document with an undecided mention that has suggestions, select it, return its id."""
    for entry in project.desk.queue():
        window.document.open_document(entry.doc_id)
        for index, mention_id in enumerate(window.model.mention_ids):
            if window.model.suggestions.get(mention_id) and mention_id not in window.model.decisions:
                window.document.select_mention(index)
                return mention_id
    raise AssertionError("the demo has no undecided mention with suggestions")


def _detail(project, mention_id: int) -> dict:
    return json.loads(project.curation.current_decisions(mention_ids=[mention_id])[mention_id].detail_json)


def test_alt_enter_accepts_without_teaching_and_enter_still_teaches(window, demo_project, qtbot):
    mention_id = _suggested(window, demo_project)
    top = window.model.suggestions[mention_id][0].concept_id
    qtbot.keyClick(window, Qt.Key.Key_Return, ALT)
    qtbot.waitUntil(lambda: mention_id in demo_project.curation.current_decisions(mention_ids=[mention_id]))
    decision = demo_project.curation.current_decisions(mention_ids=[mention_id])[mention_id]
    assert (decision.action, decision.concept_id) == ("accept", top)
    assert _detail(demo_project, mention_id)["teach"] is False
    assert "(not taught)" in window.statusBar().currentMessage()

    other = _suggested(window, demo_project)
    qtbot.keyClick(window, Qt.Key.Key_Return)  # plain Enter teaches as before
    qtbot.waitUntil(lambda: other in demo_project.curation.current_decisions(mention_ids=[other]))
    assert "teach" not in _detail(demo_project, other)

    window.menus.learnt.no_teach.trigger()  # Curate ▸ Decide without teaching: every decision until unchecked
    third = _suggested(window, demo_project)
    qtbot.keyClick(window, Qt.Key.Key_R)
    qtbot.waitUntil(lambda: third in demo_project.curation.current_decisions(mention_ids=[third]))
    assert _detail(demo_project, third)["teach"] is False


def test_the_learnt_list_removes_a_synonym_as_one_undo_step(window, demo_project, qtbot, tmp_path):
    from app.gui.desk_learnt import open_learnt
    from core.jobs.linking.suggestions import ProjectLinker

    mention, mention_id = _correctable(demo_project)
    wrong = _wrong_concept(demo_project, mention)
    curation.decide(demo_project, mention_id, "correct", concept_id=wrong, curator="ann")
    ProjectLinker.for_project(demo_project, use_reranker=False, use_ranker=False)  # a load learns it
    assert mention.text in demo_project.kb.concept(wrong).synonyms

    dialog = open_learnt(window)
    qtbot.waitExposed(dialog)
    assert dialog.table.rowCount() == 1
    cells = [dialog.table.item(0, c).text() for c in range(dialog.table.columnCount())]
    name = demo_project.kb.concept(wrong).preferred_name
    assert cells[0] == mention.text and cells[1] == f"{name} ({wrong})" and cells[3] == "ann"
    assert cells[-1] == "learnt" and not dialog.remove.isEnabled()
    dialog.table.selectRow(0)
    assert dialog.remove.isEnabled() and not dialog.restore.isEnabled()
    dialog.grab().save(str(tmp_path / "learnt.png"))

    assert dialog.remove.click() is None
    qtbot.waitUntil(lambda: dialog.table.item(0, 7).text() == "removed")
    assert window.saving.last_changes.relearn == frozenset(
        {mention_id}
    )  # the loaded linker learns them again
    assert [r.removed for r in learnt.learnt_synonyms(demo_project)] == [True]
    assert window.undo_stack.undoText().startswith("remove learnt synonym")
    dialog.reject()

    qtbot.keyClick(window, Qt.Key.Key_Z, CTRL)
    qtbot.waitUntil(lambda: not window.undo_stack.canUndo() or "remove" not in window.undo_stack.undoText())
    dialog = open_learnt(window)
    assert dialog.table.item(0, 7).text() != "removed"

    dialog.learning.setChecked(False)  # the project's switch, also the menu's check mark
    assert demo_project.settings.setting("learn.from_decisions") is False
    assert not window.menus.learnt.learning.isChecked()
    assert dialog.table.rowCount() == 0 and "off" in dialog.summary.text()
    window.menus.learnt.learning.trigger()
    assert demo_project.settings.setting("learn.from_decisions") is True


def test_removing_in_the_list_withdraws_the_synonym_from_the_loaded_linker(window, demo_project, qtbot):
    from app.gui.desk_learnt import open_learnt

    mention, mention_id = _correctable(demo_project)
    wrong = _wrong_concept(demo_project, mention)
    doc_id = demo_project.documents.mention_documents([mention_id])[mention_id]
    loading = window.service.link([doc_id])  # loads the models
    qtbot.waitUntil(loading.done.is_set, timeout=120000)
    window.document.open_document(doc_id, mention_id=mention_id)
    with qtbot.waitSignal(window.service.learned, timeout=60000) as learning:
        assert window.curation.decide("correct", wrong)
    assert [(e.concept_id, e.name) for e in learning.args[0][0].added] == [(wrong, mention.text)]

    dialog = open_learnt(window)
    dialog.table.selectRow(0)
    with qtbot.waitSignal(window.service.learned, timeout=60000) as learning:
        dialog.remove.click()
    assert [(e.concept_id, e.name) for e in learning.args[0][0].withdrawn] == [(wrong, mention.text)]
    assert mention.text not in demo_project.kb.concept(wrong).synonyms
    dialog.reject()

    # learning off: a correction is stored, but nothing learns from it (live or in the store)
    window.menus.learnt.learning.trigger()
    assert demo_project.settings.setting("learn.from_decisions") is False
    assert window.saving.undo() == "saved"  # the removal
    assert window.saving.undo() == "saved"  # the correction
    qtbot.waitUntil(lambda: mention_id not in demo_project.curation.current_decisions(mention_ids=[mention_id]))
    window.document.open_document(doc_id, mention_id=mention_id)
    assert window.curation.decide("correct", wrong)
    qtbot.waitUntil(lambda: not window.service.busy(), timeout=30000)
    assert mention.text not in demo_project.kb.concept(wrong).synonyms
