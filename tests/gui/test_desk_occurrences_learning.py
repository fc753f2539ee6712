"""Issue 31 item 3 in the real window, driven with keys: Ctrl+Shift+A's Text field recounts as it is typed
and an edited text no longer takes the source mention's decision; a step that taught a synonym (the
new mentions' decisions) is taken back whole by Ctrl+Z, the synonym withdrawn from the store and the
loaded linker; and the learnt list shows that synonym, with its concept's name, while it stands.

The expected counts are written out by hand from the texts of tests/gui/test_desk_occurrences.py:
"patients" occurs once in occ-1; "QZ" twice in occ-2, where no abbreviation defines it (so its query is
"QZ" there, while in occ-1 "Quizoticus disease (QZ)" expands it)."""

from __future__ import annotations

from PySide6.QtCore import Qt

from core.documents import Document, Passage
from core.jobs.curation import learnt
from core.learn.synonyms import CURATOR_SOURCE
from tests.gui.test_desk_occurrences import CTRL_SHIFT, _open, _spans

CTRL = Qt.KeyboardModifier.ControlModifier


def _decided(project, doc_id: str) -> dict:
    ids = [i for _, ids in project.documents.documents_with_mention_ids(ids=[doc_id]) for i in ids]
    return project.curation.current_decisions(mention_ids=ids)


def _top(project, mention_id: int) -> tuple[str, str] | None:
    """The stored top suggestion of a mention: (concept, matched name lower-case)."""
    found = project.curation.suggestions_for([mention_id]).get(mention_id)
    return (found[0].concept_id, found[0].matched_name.lower()) if found else None


def _lower(names) -> set[str]:
    return {n.lower() for n in names}


def test_typing_a_new_text_recounts_and_drops_the_source_decision(window, demo_project, qtbot):
    first = _open(window, demo_project)
    window.document.select_mention(window.model.mention_ids.index(first))
    qtbot.keyClick(window, Qt.Key.Key_N)  # "QZ": not in the KB
    qtbot.waitUntil(lambda: first in demo_project.curation.current_decisions(mention_ids=[first]))
    window.document.select_mention(window.model.mention_ids.index(first))
    window.abstract.select_text(0, 0)
    qtbot.keyClick(window, Qt.Key.Key_A, CTRL_SHIFT)
    dialog = window.menu_dialog
    qtbot.waitUntil(dialog.text.hasFocus)
    assert dialog.link.isChecked() and dialog.count.text().startswith("<b>3 occurrences in 1 document")

    qtbot.keyClick(dialog.text, Qt.Key.Key_A, CTRL)  # the whole field, then a new text typed over it
    qtbot.keyClicks(dialog.text, "patients")
    qtbot.waitUntil(lambda: dialog.count.text() == "<b>1 occurrence in 1 document</b> will become mentions")
    assert not dialog.link.isChecked() and not dialog.link.isEnabled()  # "nil" was for "QZ"
    qtbot.keyClick(dialog.text, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: (3, 11) in _spans(demo_project, "occ-1"))
    assert _spans(demo_project, "occ-1") == [(0, 2), (3, 11)]
    state = _decided(demo_project, "occ-1")
    assert [d.action for d in state.values()] == ["nil"]  # the source's only: "patients" is undecided


def test_undo_of_every_occurrence_withdraws_the_synonym_it_taught(window, demo_project, qtbot):
    from app.gui.desk_learnt import open_learnt

    first = _open(window, demo_project)
    # elsewhere, an undecided "QZ" already a mention: its suggestions show what the linker learnt
    demo_project.documents.import_documents(
        [Document("occ-3", (Passage(0, "QZ is here.", "abstract"),))], source="", split=""
    )
    elsewhere = demo_project.documents.add_mention("occ-3", 0, 2, type="Disease")
    window.document.reload_queue()
    loading = window.service.link(["occ-1", "occ-3"])  # loads the models
    qtbot.waitUntil(loading.done.is_set, timeout=120000)
    concept = next(c for c in demo_project.kb.knowledge_base().concepts.values() if "+" not in c.concept_id)
    assert "qz" not in {n.lower() for n in concept.names}
    assert _top(demo_project, elsewhere) != (concept.concept_id, "qz")

    window.document.open_document("occ-1", mention_id=first)
    with qtbot.waitSignal(window.service.learned, timeout=60000) as learning:
        assert window.curation.decide("correct", concept.concept_id)
    taught = {(e.concept_id, e.name.lower()) for e in learning.args[0][0].added}
    assert (concept.concept_id, "qz") not in taught  # the source taught its long form, not "QZ"

    window.document.open_document("occ-1", mention_id=first)
    window.abstract.select_text(0, 0)
    qtbot.keyClick(window, Qt.Key.Key_A, CTRL_SHIFT)
    dialog = window.menu_dialog
    qtbot.waitUntil(dialog.text.hasFocus)
    assert dialog.link.isChecked()
    qtbot.keyClick(dialog.text, Qt.Key.Key_Tab)  # to "In"
    qtbot.keyClick(dialog.scope, Qt.Key.Key_Down)  # the whole project
    assert dialog.count.text().startswith("<b>5 occurrences in 2 documents")
    with qtbot.waitSignal(window.service.learned, timeout=60000) as learning:
        qtbot.keyClick(dialog.scope, Qt.Key.Key_Return)
    assert (concept.concept_id, "qz") in {(e.concept_id, e.name.lower()) for e in learning.args[0][0].added}
    assert "qz" in _lower(demo_project.kb.names_from_source(CURATOR_SOURCE)[concept.concept_id])
    assert _spans(demo_project, "occ-2") == [(3, 5), (18, 20)]
    qtbot.waitUntil(lambda: _top(demo_project, elsewhere) == (concept.concept_id, "qz"), timeout=60000)

    listed = open_learnt(window)
    qtbot.waitExposed(listed)
    rows = [[listed.table.item(r, c).text() for c in (0, 1)] for r in range(listed.table.rowCount())]
    named = [b for a, b in rows if a.lower() == "qz"]  # listed, with its concept's name and id
    assert len(named) == 1 and concept.preferred_name in named[0] and concept.concept_id in named[0]
    listed.reject()

    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    with qtbot.waitSignal(window.service.learned, timeout=60000) as learning:
        qtbot.keyClick(window, Qt.Key.Key_Z, CTRL)
    withdrawn = {(e.concept_id, e.name.lower()) for e in learning.args[0][0].withdrawn}
    assert (concept.concept_id, "qz") in withdrawn
    assert _spans(demo_project, "occ-2") == []
    qtbot.waitUntil(lambda: _top(demo_project, elsewhere) != (concept.concept_id, "qz"), timeout=60000)
    assert "qz" not in _lower(
        demo_project.kb.names_from_source(CURATOR_SOURCE).get(concept.concept_id, set())
    )
    assert "qz" not in _lower(row.string for row in learnt.learnt_synonyms(demo_project))
    assert first in demo_project.curation.current_decisions(mention_ids=[first])  # the earlier step stands
