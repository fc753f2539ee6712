"""What a curator teaches reaches the open desk at once: a correction stored in the real window makes the
linking process learn the string as a synonym, and the undecided mentions with the same text in another
document are suggested again with the corrected concept on top; Ctrl+Z takes it back just as fast."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tests.test_curator_synonyms import _correctable
from tests.test_live_learning import _with_copies, _wrong_concept


def _tops(project, mention_ids) -> list[tuple[str, str]]:
    found = project.curation.suggestions_for(mention_ids)
    return [(found[m][0].concept_id, found[m][0].matched_name) for m in mention_ids]


def test_a_correction_reaches_identical_mentions_elsewhere_and_an_undo_takes_it_back(
    window, demo_project, qtbot
) -> None:
    mention, mention_id = _correctable(demo_project)
    wrong = _wrong_concept(demo_project, mention)
    copies = _with_copies(demo_project, mention.text)
    window.document.reload_queue()
    linking = window.service.link(["copies-1"])  # loads the models; the copies get suggestions
    qtbot.waitUntil(linking.done.is_set, timeout=120000)
    before = _tops(demo_project, copies)
    assert all(concept_id != wrong for concept_id, _ in before)

    doc_id = demo_project.documents.mention_documents([mention_id])[mention_id]
    window.document.open_document(doc_id, mention_id=mention_id)
    assert window.model.current_mention_id() == mention_id
    with qtbot.waitSignal(window.service.learned, timeout=60000) as learnt:
        assert window.curation.decide("correct", wrong)
    found, resuggested = learnt.args[0]
    assert [(e.concept_id, e.name) for e in found.added] == [(wrong, mention.text)]
    assert resuggested >= len(copies)
    qtbot.waitUntil(lambda: not window.service.busy(), timeout=30000)
    assert _tops(demo_project, copies) == [(wrong, mention.text)] * len(copies)
    assert "curator synonym" in window.statusBar().currentMessage()

    with qtbot.waitSignal(window.service.learned, timeout=60000) as learnt:
        qtbot.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    found, _ = learnt.args[0]
    assert [(e.concept_id, e.name) for e in found.withdrawn] == [(wrong, mention.text)]
    qtbot.waitUntil(lambda: not window.service.busy(), timeout=30000)
    assert _tops(demo_project, copies) == before
    assert mention.text not in demo_project.kb.concept(wrong).synonyms
