"""The background linker delivers suggestions while the UI thread keeps turning."""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer


def test_worker_links_while_event_loop_ticks(window, demo_project, qtbot):
    doc_ids = ["90000002", "90000003"]
    pairs = list(demo_project.documents.documents_with_mention_ids(ids=doc_ids))
    mention_ids = [m for _, ids in pairs for m in ids]
    demo_project.curation.store_suggestions({m: [] for m in mention_ids})  # forget them: the worker must redo it
    window.document.reload_queue()
    window.document.open_document("90000002")
    assert window.abstract.marks[0].state == "unsuggested"
    assert all(window.queue.entry(d).unsuggested for d in doc_ids)

    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start()
    started = time.perf_counter()
    job = window.links.link_documents(doc_ids)
    assert window.job_progress.isVisible()  # progress with a cancel button while it runs
    with qtbot.waitSignal(window.service.suggestionsReady, timeout=60000) as blocker:
        pass
    elapsed = time.perf_counter() - started
    timer.stop()

    assert blocker.args == [doc_ids]
    qtbot.waitUntil(job.done.is_set, timeout=10000)  # set as the worker returns, after its last signal
    stored = demo_project.curation.suggestions_for(mention_ids)
    assert all(stored[m] for m in mention_ids)
    assert window.abstract.marks[0].state == "suggested"  # the open document refreshed itself
    # The UI thread kept processing timer ticks during the work (10 ms timer: a floor of a third).
    assert len(ticks) >= max(3, int(elapsed / 0.010 / 3)), (len(ticks), elapsed)
    assert "reranker: not trained" in window.device_label.text()


def test_cancelled_link_leaves_the_window_usable(window, demo_project, qtbot):
    job = window.links.link_documents(["90000004"])
    with qtbot.waitSignal(job.signals.cancelled, timeout=60000):  # raises if the job never says so
        job.cancel()
    qtbot.waitUntil(job.done.is_set, timeout=60000)
    assert not window.model.linking
    assert window.curation.accept_rank(1)
