"""The desk logs each document it opens, and `curalink bench desk-opened` compares those with the
documents that got decisions or done marks (issue 31's check of a curator session): a session driven by
keys in the real window is clean; a decision written on a document the desk never opened is named;
a bulk accept over the queue is counted apart."""

from __future__ import annotations

import json
import logging

import pytest
from PySide6.QtCore import Qt

from core.jobs.curation import operations as curation


@pytest.fixture
def logged_window(qtbot, demo_project, app_settings):
    """The real window on a project that logs to its logs/curalink.log, as the desk's own start does."""
    from app.console import ProjectLogHandler, log_to_project
    from app.gui.main_window import MainWindow

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.INFO)
    log_to_project(demo_project.path)
    win = MainWindow(demo_project, app_settings, background=False)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow, timeout=2000)
    yield win
    win.service.shutdown()
    for handler in [h for h in root.handlers if isinstance(h, ProjectLogHandler)]:
        root.removeHandler(handler)
        handler.close()
    root.setLevel(level)


def test_opened_documents_are_logged_and_compared_with_the_decisions(logged_window, demo_project, qtbot, capsys):
    from app.cli import main
    from bench.desk_opened import check_opened

    window = logged_window
    qtbot.keyClick(window, Qt.Key.Key_Return)  # accept on the first document
    qtbot.keyClick(window, Qt.Key.Key_Down, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(window, Qt.Key.Key_D)  # the second marked done
    assert window.model.doc.doc_id == "90000002"
    log = demo_project.path / "logs" / "curalink.log"
    result = check_opened(demo_project, log)
    assert (result["opened"], result["decided_by_keys"], result["marked_done"]) == (2, 1, 1)
    assert result["unopened"] == []

    # A decision on a document the desk never opened (what issue 31 saw on 9703501) is named.
    found = list(demo_project.documents.documents_with_mention_ids(ids=["90000004"]))
    unseen = found[0][1][0]
    curation.decide(demo_project, unseen, "reject", curator="tester")
    # A bulk accept over the whole queue writes on unopened documents by design: counted apart.
    decided = demo_project.curation.current_decisions()
    open_left = {
        document.doc_id
        for document, ids in demo_project.documents.documents_with_mention_ids()
        if any(m not in decided for m in ids)
    }
    window.curation.bulk_accept(-1e9, whole_queue=True)
    result = check_opened(demo_project, log)
    assert result["unopened"] == [{"document": "90000004", "decisions": 1, "done_mark": False}]
    assert result["decided_by_multi_document_steps"] == len(open_left) == 6

    assert main(["-p", str(demo_project.path), "bench", "desk-opened", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["unopened"][0]["document"] == "90000004"
