"""Issue 11 item 2 in the real window on the demo project: a decision whose write cannot be made at once
(another process holds the database's write lock, or the disk is full) is shown as waiting, saved once
it can be (or retried or discarded by the curator), and the undo stack only ever lists what the store has.

The lock is a real second process holding `BEGIN IMMEDIATE` on the project's database; the full disk is
a real tmpfs (root only; skipped elsewhere).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QMessageBox

from app.gui.main_window import MainWindow
from core.store import Project

CTRL = Qt.KeyboardModifier.ControlModifier
HOLDER = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("BEGIN IMMEDIATE")
print("held", flush=True)
sys.stdin.readline()
connection.execute("ROLLBACK")
"""


@contextmanager
def write_lock_held(db_path: Path) -> Iterator[subprocess.Popen]:
    """Another process holds the database's write lock until the block ends (or `release` is called)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        release(holder)


def release(holder: subprocess.Popen) -> None:
    if holder.poll() is None:
        holder.stdin.write("\n")
        holder.stdin.flush()
        holder.wait(timeout=30)


def _save_bar(window) -> QFrame | None:
    bar = window.findChild(QFrame, "saveBar")
    return bar if bar is not None and bar.isVisible() else None


def _stored(project, mention_id: int):
    return project.curation.current_decisions(mention_ids=[mention_id]).get(mention_id)


def _first_suggested(window) -> int:
    window.document.open_document(window.queue.visible_ids()[0])
    index = next(i for i, m in enumerate(window.model.mention_ids) if window.model.suggestions.get(m))
    window.document.select_mention(index)
    return window.model.mention_ids[index]


def test_a_decision_waits_for_another_process_lock_and_is_saved_when_it_frees(window, demo_project, qtbot):
    mention_id = _first_suggested(window)
    top = window.model.suggestions[mention_id][0].concept_id
    with write_lock_held(demo_project.path / "curalink.db") as holder:
        qtbot.keyClick(window, Qt.Key.Key_Return)
        # Not in the store, so not in the undo stack either; but on screen, as waiting.
        assert _stored(demo_project, mention_id) is None
        assert window.undo_stack.count() == 0
        bar = _save_bar(window)
        assert bar is not None and "Saving 1 change" in bar.label.text() and top in bar.label.text()
        assert window.model.current_mention_id() != mention_id  # the curator moved on to the next mention
        release(holder)
        qtbot.waitUntil(lambda: _stored(demo_project, mention_id) is not None, timeout=20000)
    qtbot.waitUntil(lambda: _save_bar(window) is None, timeout=5000)
    decision = _stored(demo_project, mention_id)
    assert (decision.action, decision.concept_id) == ("accept", top)
    assert window.undo_stack.count() == 1 and window.model.decisions[mention_id].concept_id == top
    qtbot.keyClick(window, Qt.Key.Key_Z, CTRL)  # the step undoes what the store has
    assert _stored(demo_project, mention_id) is None and window.undo_stack.index() == 0


def test_retries_run_out_then_retry_saves_every_waiting_decision_in_order(window, demo_project, qtbot):
    window.saving.writer.attempts, window.saving.writer.pause_s, window.saving.writer.retry_wait_ms = (
        3,
        0.05,
        20,
    )
    saved = _first_suggested(window)
    assert window.curation.accept_top()  # stored at once: the lock is free
    first = window.model.current_mention_id()
    with write_lock_held(demo_project.path / "curalink.db") as holder:
        qtbot.keyClick(window, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: window.saving.writer.error is not None, timeout=20000)
        bar = _save_bar(window)
        assert bar is not None and "Not saved: 1 change" in bar.label.text()
        assert "locked by another program" in bar.label.text() and bar.retry.isVisible()
        second = window.model.current_mention_id()
        assert second not in (saved, first)
        qtbot.keyClick(window, Qt.Key.Key_N)  # queues behind the stalled one
        assert "Not saved: 2 changes" in _save_bar(window).label.text()
        # Ctrl+Z waits: the curator's last change is not stored, so undoing the stored one would be wrong.
        qtbot.keyClick(window, Qt.Key.Key_Z, CTRL)
        assert "undo waits: 2 changes not saved yet" in window.statusBar().currentMessage()
        assert window.undo_stack.count() == 1 and _stored(demo_project, saved) is not None
        assert _stored(demo_project, first) is None and _stored(demo_project, second) is None
        release(holder)
    qtbot.mouseClick(_save_bar(window).retry, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: _save_bar(window) is None, timeout=20000)
    assert _stored(demo_project, first).action == "accept" and _stored(demo_project, second).action == "nil"
    assert [window.undo_stack.command(i).text().split()[0] for i in range(3)] == ["accept", "accept", "not"]  # "not in the KB"


def test_discard_drops_the_waiting_decision_and_the_undo_stack_matches_the_store(window, demo_project, qtbot):
    window.saving.writer.attempts, window.saving.writer.pause_s, window.saving.writer.retry_wait_ms = (
        2,
        0.05,
        20,
    )
    mention_id = _first_suggested(window)
    before = demo_project.curation.current_decisions()
    with write_lock_held(demo_project.path / "curalink.db"):
        qtbot.keyClick(window, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: window.saving.writer.error is not None, timeout=20000)
        qtbot.mouseClick(_save_bar(window).discard, Qt.MouseButton.LeftButton)
    assert _save_bar(window) is None and not window.saving.writer.busy()
    assert "discarded 1 change" in window.statusBar().currentMessage()
    assert demo_project.curation.current_decisions().keys() == before.keys()
    assert mention_id not in window.model.decisions and window.undo_stack.count() == 0


def test_undo_under_a_lock_moves_the_stack_only_once_the_revert_is_stored(window, demo_project, qtbot):
    mention_id = _first_suggested(window)
    assert window.curation.accept_top()
    assert _stored(demo_project, mention_id) is not None and window.undo_stack.index() == 1
    with write_lock_held(demo_project.path / "curalink.db") as holder:
        qtbot.keyClick(window, Qt.Key.Key_Z, CTRL)
        assert window.undo_stack.index() == 1 and _stored(demo_project, mention_id) is not None
        assert "Saving 1 change" in _save_bar(window).label.text()
        release(holder)
        qtbot.waitUntil(lambda: window.undo_stack.index() == 0, timeout=20000)
    assert _stored(demo_project, mention_id) is None and mention_id not in window.model.decisions


def test_a_span_edit_under_a_lock_is_not_in_the_undo_stack_until_stored(window, demo_project, qtbot):
    mention_id = _first_suggested(window)
    old_end = window.model.doc.mentions[window.model.current].end
    with write_lock_held(demo_project.path / "curalink.db") as holder:
        assert window.curation.adjust(0, -1)
        assert not window.curation.adjust(
            0, -1
        )  # a second nudge would build on the unsaved first one: it waits
        assert window.undo_stack.count() == 0
        assert window.model.doc.mentions[window.model.mention_ids.index(mention_id)].end == old_end
        release(holder)
        qtbot.waitUntil(lambda: window.undo_stack.count() == 1, timeout=20000)
    assert window.model.doc.mentions[window.model.mention_ids.index(mention_id)].end == old_end - 1


def test_closing_with_a_waiting_change_asks_first(window, demo_project, qtbot):
    window.saving.writer.attempts, window.saving.writer.pause_s, window.saving.writer.retry_wait_ms = (
        2,
        0.05,
        20,
    )
    _first_suggested(window)
    with write_lock_held(demo_project.path / "curalink.db"):
        qtbot.keyClick(window, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: window.saving.writer.error is not None, timeout=20000)
        window.close()
        assert window.isVisible() and window.saving.close_box.isVisible()
        assert "not saved yet" in window.saving.close_box.text()
        window.saving.close_box.reject()
        window.saving.discard_writes()


# --- a full disk ----------------------------------------------------------------------------------


@pytest.fixture
def full_disk_project(demo_template: Path, tmp_path: Path) -> Iterator[tuple[Project, Path]]:
    """The demo project on a tmpfs just big enough for it; `filler` then takes every free byte."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("a full disk needs a tmpfs mount (root)")
    mount = tmp_path / "small-disk"
    mount.mkdir()
    size_kb = sum(f.stat().st_size for f in demo_template.rglob("*") if f.is_file()) // 1024 + 1024
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(mount)], check=False
    )
    if done.returncode != 0:
        pytest.skip("mounting a tmpfs failed")
    try:
        shutil.copytree(demo_template, mount / "demo", ignore=shutil.ignore_patterns("*-wal", "*-shm"))
        project = Project.open(mount / "demo")
        project.desk.queue()  # the WAL and its index exist before the disk fills
        yield project, mount / "filler"
        project.close()
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(path: Path) -> None:
    """Take every free byte of the file system `path` is on (large blocks first, then small ones)."""
    with path.open("wb", buffering=0) as out:
        for block in (1 << 16, 512, 1):
            try:
                while True:
                    out.write(b"\0" * block)
            except OSError:
                pass


def test_a_full_disk_opens_a_dialog_and_keeps_the_decision_for_retry(full_disk_project, app_settings, qtbot):
    project, filler = full_disk_project
    window = MainWindow(project, app_settings, background=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    mention_id = _first_suggested(window)
    fill(filler)
    assert window.curation.accept_top() is False
    dialog = window.saving.save_dialog
    assert dialog.isVisible() and dialog.windowTitle() == "The disk is full"
    assert "disk is full" in dialog.text() and dialog.icon() == QMessageBox.Icon.Warning
    bar = _save_bar(window)
    assert bar is not None and "Not saved: 1 change" in bar.label.text() and bar.retry.isVisible()
    assert window.undo_stack.count() == 0
    dialog.accept()
    filler.unlink()
    qtbot.mouseClick(bar.retry, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: _save_bar(window) is None, timeout=20000)
    assert _stored(project, mention_id).action == "accept" and window.undo_stack.count() == 1
    window.service.shutdown()


def test_a_decision_rereads_its_documents_queue_row_not_the_whole_queue(window, demo_project, qtbot):
    """Reloading all rows after every decision froze the desk for seconds with 20,000 documents."""
    resets: list[int] = []
    window.queue.model.modelReset.connect(lambda: resets.append(1))
    mention_id = _first_suggested(window)
    doc_id = window.model.doc.doc_id
    before = window.queue.entry(doc_id).reviewed
    assert window.curation.accept_top()
    assert resets == [] and window.queue.entry(doc_id).reviewed == before + 1
    qtbot.keyClick(window, Qt.Key.Key_Z, CTRL)
    assert resets == [] and window.queue.entry(doc_id).reviewed == before
    assert _stored(demo_project, mention_id) is None
    # The rows agree with the store's own full queue.
    assert [(e.doc_id, e.reviewed, e.mentions) for e in window.queue.model.entries] == [
        (e.doc_id, e.reviewed, e.mentions) for e in demo_project.desk.queue()
    ]


def test_a_decision_saved_late_updates_the_row_of_its_own_document(window, demo_project, qtbot):
    _first_suggested(window)
    doc_id = window.model.doc.doc_id
    before = window.queue.entry(doc_id).reviewed
    with write_lock_held(demo_project.path / "curalink.db") as holder:
        qtbot.keyClick(window, Qt.Key.Key_Return)
        other = next(d for d in window.queue.visible_ids() if d != doc_id)
        window.document.open_document(other)  # the curator moves on before the store has the decision
        release(holder)
        qtbot.waitUntil(lambda: not window.saving.writer.busy(), timeout=20000)
    assert window.model.doc.doc_id == other
    assert window.queue.entry(doc_id).reviewed == before + 1
