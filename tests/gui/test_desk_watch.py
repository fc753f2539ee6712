"""The desk re-reads what another process wrote to its project: decisions, deleted mentions, promotions."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from PySide6.QtCore import Qt


def _other_process(project_path, code: str) -> None:
    """Run `code` in a separate Python process with `project` open on the same folder."""
    script = textwrap.dedent(
        f"""
        from core.store import Project
        from core.store.curation_log import NewDecision
        project = Project.open({str(project_path)!r})
        {textwrap.indent(textwrap.dedent(code), "        ").strip()}
        project.close()
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)


def test_decisions_written_by_another_process_reach_the_screen(qtbot, window) -> None:
    doc_id = window.model.doc.doc_id
    open_ids = list(window.model.mention_ids)
    other_doc = next(d for d in window.queue.visible_ids() if d != doc_id)
    other_ids = [m for d, ids in window.project.documents.documents_with_mention_ids(ids=[other_doc]) for m in ids]
    assert open_ids[0] not in window.model.decisions
    before = window.queue.entry(other_doc).reviewed
    _other_process(
        window.project.path,
        f"project.curation.record_decisions([NewDecision({open_ids[0]}, 'nil', curator='cli'), "
        f"NewDecision({other_ids[0]}, 'reject', curator='cli')])",
    )
    qtbot.waitUntil(lambda: open_ids[0] in window.model.decisions, timeout=10_000)  # the timer's own tick
    assert window.model.decisions[open_ids[0]].action == "nil"
    assert window.queue.entry(other_doc).reviewed == before + 1
    assert window.queue.entry(doc_id).reviewed == 1
    assert not window.watch.check_project_changes(), "nothing new since the last look"


def test_a_mention_deleted_elsewhere_cannot_be_decided_in_the_desk(qtbot, window) -> None:
    window.watch.watch_timer.stop()  # the desk has not looked yet: the curator acts on what is on screen
    window.document.select_mention(0)
    mention_id = window.model.current_mention_id()
    assert window.model.suggestions[mention_id], "the demo mention has suggestions to accept"
    _other_process(window.project.path, f"project.documents.set_mention_removed({mention_id}, curator='cli')")
    qtbot.keyClick(window, Qt.Key.Key_Return)
    assert "was deleted" in window.statusBar().currentMessage()
    assert mention_id not in window.project.curation.current_decisions(), "nothing was written"
    assert window.watch.check_project_changes()
    assert mention_id not in window.model.mention_ids, "the reloaded document no longer shows it"


def test_a_promotion_elsewhere_drops_the_loaded_models(qtbot, window) -> None:
    active = window.project.models.active_model("retriever")
    assert active is not None
    window.service.linker()  # loaded, as after the first suggestions
    assert window.service.models_loaded
    _other_process(
        window.project.path,
        f"""
        version = project.models.register_model('retriever', 'v99', {str(active.path)!r}, metrics={{}})
        project.models.promote_model('retriever', 'v99')
        """,
    )
    assert window.watch.check_project_changes()
    assert not window.service.models_loaded, "the next suggestions come from the promoted model"
    assert "v99" in window.models_label.text()


def test_the_desks_own_decision_is_not_shown_twice(qtbot, window) -> None:
    """A tick after the curator's own accept finds the screen current: it re-reads the queue row but does
    not re-show the document (that would move the candidate row the curator has gone on to)."""
    shown = []
    original = window.document.open_document
    window.document.open_document = lambda *a, **k: (shown.append(a), original(*a, **k))
    window.document.select_mention(0)
    qtbot.keyClick(window, Qt.Key.Key_Return)
    assert len(window.model.decisions) == 1, "the accept was stored"
    shown.clear()
    assert window.watch.check_project_changes(), "the marks moved (the desk's own write)"
    assert shown == []


def test_a_wide_change_is_read_in_the_background_and_keeps_the_desks_newer_rows(qtbot, window) -> None:
    """Documents imported by another process make the desk re-read its whole queue, off the UI thread
    (it took ~1 s at 20,000 documents); a decision the curator makes while that read is under way is not
    undone by the read's older rows."""
    import threading

    window.watch.watch_timer.stop()
    read_done, may_return = threading.Event(), threading.Event()
    whole_queue = window.project.desk.queue

    def slow_queue(doc_ids=None):
        rows = whole_queue(doc_ids)
        if doc_ids is None:  # the background read: it has its rows, now it waits
            read_done.set()
            may_return.wait(30)
        return rows

    window.project.desk.queue = slow_queue
    _other_process(
        window.project.path,
        """
        from core.documents import document_from_title_abstract
        project.documents.import_documents([document_from_title_abstract("77777777", "Imported elsewhere", "Text.")])
        """,
    )
    assert window.watch.check_project_changes()
    assert read_done.wait(30), "the whole queue is read in the background"
    assert window.queue.entry("77777777") is None, "not shown before the read lands"
    doc_id = window.model.doc.doc_id
    before = window.queue.entry(doc_id).reviewed
    qtbot.keyClick(window, Qt.Key.Key_Return)  # a decision while the read waits: its row is newer
    assert window.queue.entry(doc_id).reviewed == before + 1
    may_return.set()
    qtbot.waitUntil(lambda: window.queue.entry("77777777") is not None, timeout=30_000)
    assert window.queue.entry(doc_id).reviewed == before + 1, "the older read did not undo the decision"
    window.project.desk.queue = whole_queue
