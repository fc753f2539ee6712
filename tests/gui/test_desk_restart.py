"""Issue 23 item 1 in the real window: after a session that learnt and then withdrew a curator synonym, the
restarted desk reuses the saved name index (no rebuild), and while its models load the curator's keys act at
once: Ctrl+Z, Tab and J change the view to what the store holds without waiting for the loader.

The linking process is real. Its load is held back at its start (standing in for the 75-90 s index build
the issue measured on MEDIC) until the test has pressed its keys; the test then lets it go and checks what
the load did to the saved index."""

from __future__ import annotations

import threading

from PySide6.QtCore import Qt

from app.gui.states import mention_state
from app.gui.workers import MODELS_LOADING, LinkService
from tests.test_curator_synonyms import _correctable
from tests.test_live_learning import _wrong_concept

CTRL = Qt.KeyboardModifier.ControlModifier
CEILING_MS = 600_000
"""How long a wait for an event may take before the test gives up: a hang, never a slow machine."""
HELD_SECONDS = 90
"""How long the load is held at most: only a desk whose keys wait for the loader lets this run out."""


def _open(qtbot, project, settings, *, background: bool):
    from app.gui.main_window import MainWindow

    window = MainWindow(project, settings, background=background)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=CEILING_MS)
    return window


def _index_files(folder) -> dict[str, tuple[int, int, int]]:
    """Each saved index file: (inode, size, modification time); a rebuild or a re-save changes them."""
    return {p.name: (p.stat().st_ino, p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir()}


def _view_matches_store(window, project, doc_id: str) -> None:
    """What the window shows of the open document is what the store holds now."""
    stored = project.curation.current_decisions(mention_ids=window.model.mention_ids)
    assert {m: d.action for m, d in window.model.decisions.items()} == {
        m: d.action for m, d in stored.items()
    }
    suggested = project.curation.suggestion_sets(window.model.mention_ids)
    expected = [
        mention_state(
            stored[m].action if m in stored else None, bool(suggested.get(m) and suggested[m].candidates)
        )
        for m in window.model.mention_ids
    ]
    assert [mark.state for mark in window.abstract.marks] == expected
    assert f"· {len(stored)} reviewed" in window.doc_meta.text()
    (row,) = project.desk.queue(doc_ids=[doc_id])
    assert window.queue.entry(doc_id).reviewed == row.reviewed


def test_a_restart_after_a_withdrawal_reuses_the_index_and_keys_act_while_models_load(
    qtbot, demo_project, app_settings, monkeypatch
) -> None:
    mention, mention_id = _correctable(demo_project)
    wrong = _wrong_concept(demo_project, mention)
    doc_id = demo_project.documents.mention_documents([mention_id])[mention_id]

    # Session 1: a correction teaches a synonym, Ctrl+Z withdraws it, then a decision that stands ("not in
    # the KB": it teaches no synonym, so undoing it later leaves the index as saved).
    first = _open(qtbot, demo_project, app_settings, background=False)
    loading = first.service.preload()
    qtbot.waitUntil(loading.done.is_set, timeout=CEILING_MS)
    first.document.open_document(doc_id, mention_id=mention_id)
    with qtbot.waitSignal(first.service.learned, timeout=CEILING_MS) as learnt:
        assert first.curation.decide("correct", wrong)
    assert [(e.concept_id, e.name) for e in learnt.args[0][0].added] == [(wrong, mention.text)]
    with qtbot.waitSignal(first.service.learned, timeout=CEILING_MS) as learnt:
        qtbot.keyClick(first, Qt.Key.Key_Z, CTRL)
    assert [(e.concept_id, e.name) for e in learnt.args[0][0].withdrawn] == [(wrong, mention.text)]
    first.document.select_mention(next(i for i, m in enumerate(first.model.mention_ids) if m != mention_id))
    decided_id = first.model.current_mention_id()
    with qtbot.waitSignal(first.service.learned, timeout=CEILING_MS):
        qtbot.keyClick(first, Qt.Key.Key_N)
    assert demo_project.curation.current_decisions()[decided_id].action == "nil"
    qtbot.waitUntil(lambda: not first.service.busy(), timeout=CEILING_MS)
    first.close()
    saved = _index_files(demo_project.index_dir)

    # Session 2: the models load (held back) while the curator undoes and moves on.
    entered, release, loaded = threading.Event(), threading.Event(), threading.Event()
    real_load = LinkService._load

    def held_load(self, progress, cancel):
        entered.set()
        release.wait(HELD_SECONDS)
        try:
            return real_load(self, progress, cancel)
        finally:
            loaded.set()

    monkeypatch.setattr(LinkService, "_load", held_load)
    second = _open(qtbot, demo_project, app_settings, background=True)
    try:
        qtbot.waitUntil(entered.is_set, timeout=CEILING_MS)
        assert second.device_label.text() == MODELS_LOADING
        second.document.open_document(doc_id, mention_id=decided_id)
        _view_matches_store(second, demo_project, doc_id)
        assert "not in the KB" in second.undo_stack.undoText()  # the restored history's last step

        qtbot.keyClick(second, Qt.Key.Key_Z, CTRL)
        qtbot.waitUntil(lambda: decided_id not in second.model.decisions, timeout=CEILING_MS)
        assert not loaded.is_set(), "the undo waited for the model loader"
        assert decided_id not in demo_project.curation.current_decisions()
        _view_matches_store(second, demo_project, doc_id)

        at = second.model.current
        qtbot.keyClick(second, Qt.Key.Key_Tab)
        qtbot.keyClick(second, Qt.Key.Key_J)
        assert second.model.current == min(at + 2, len(second.model.mention_ids) - 1)
        assert not loaded.is_set(), "Tab and J waited for the model loader"
        assert second.device_label.text() == MODELS_LOADING
    finally:
        release.set()

    qtbot.waitUntil(lambda: second.device_label.text() != MODELS_LOADING, timeout=CEILING_MS)
    qtbot.waitUntil(lambda: not second.service.busy(), timeout=CEILING_MS)
    assert loaded.is_set()
    # The undo reached the loaded models after the load (its learning job waited in the
    # worker), and the saved index was loaded as it was: nothing rebuilt, re-encoded or re-saved.
    assert _index_files(demo_project.index_dir) == saved, "the name index was rebuilt or re-saved"
    _view_matches_store(second, demo_project, doc_id)
    second.close()
