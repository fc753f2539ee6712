"""The desk's restart after a curating session (issue 23 item 1): a benchmark, not a test. Part of
`curalink bench desk` (the "restart" rows).

Session 1 loads the models, accepts a second-ranked candidate (the mention's text becomes a curator
synonym of that concept) and undoes it (the synonym is withdrawn) a few times, then accepts one top
suggestion that stands, and closes. The open document's suggestions are then cleared, so the restarted
desk must compute them. Session 2 is a new window, started as the launcher starts it (models preloaded
in the background): Ctrl+Z is pressed at once, while the models load. Measured: window built; start →
the first suggestions shown (painted); Ctrl+Z → the undo shown (painted) and whether the models were
still loading then; the longest event-loop stall from the window's first show until both were shown;
and whether the linking process loaded the saved name index or rebuilt it (its own log line).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from PySide6.QtCore import QElapsedTimer, Qt, QTimer
from PySide6.QtTest import QTest

from app.gui.workers import MODELS_LOADING
from bench.gui.desk import PaintWatch, _gaps, _open_mentions, _ready
from bench.gui.responsiveness import make_window

START_TARGET_MS = 5000.0
"""Desk start → first suggestions shown, with the saved name index reused (no rebuild)."""


class _IndexLog(logging.Handler):
    """The linking process's name-index lines (its log records reach this process under their names)."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def _until(app, done, what: str, limit_s: float = 900.0) -> None:
    deadline = time.perf_counter() + limit_s
    while not done():
        if time.perf_counter() > deadline:
            raise TimeoutError(f"{what}: not done within {limit_s:.0f} s")
        app.processEvents()
        time.sleep(0.001)


def _shown(app, watch: PaintWatch, names: tuple[str, ...], done, limit_s: float = 900.0) -> float:
    """When `done()` first held and the named widgets had painted since (a rebuild takes minutes: the
    limit is far above the paint watch's own)."""
    deadline = time.perf_counter() + limit_s
    while not done():
        if time.perf_counter() > deadline:
            raise TimeoutError(f"not shown within {limit_s:.0f} s")
        watch.loop.processEvents()
        time.sleep(0.001)
    finished = time.perf_counter()
    while not all(watch.painted.get(n, 0) > finished for n in names):
        if time.perf_counter() > deadline:
            raise TimeoutError(f"no repaint of {', '.join(names)} within {limit_s:.0f} s")
        if not watch.loop.processEvents():  # nothing left to do: the view needed no repaint
            break
        time.sleep(0.001)
    return max(finished, *(watch.painted.get(n, 0) for n in names))


def _decide_and_learn(app, window, learnt: list, act) -> tuple:
    before = len(learnt)
    act()
    _until(app, lambda: len(learnt) > before, "learning a decision")
    return learnt[-1][0]


def _session(app, project, scratch: Path, withdrawals: int) -> dict:
    """Session 1: synonyms learnt and withdrawn, then one accept that stands; returns what it left."""
    window = make_window(project, scratch, background=False)
    learnt: list = []
    window.service.learned.connect(learnt.append)
    try:
        _ready(app, window)
        loading = window.service.preload()
        _until(app, loading.done.is_set, "loading the models")
        taught = withdrawn = accepts = 0
        documents = _open_mentions(window)
        for doc_id in documents:
            if withdrawn >= withdrawals:
                break
            window.document.open_document(doc_id)
            app.processEvents()
            mention_id = window.model.current_mention_id()
            if mention_id is None or len(window.model.suggestions.get(mention_id) or []) < 2:
                continue
            taught += len(
                _decide_and_learn(app, window, learnt, lambda: window.curation.accept_rank(2)).added
            )
            accepts += 1
            withdrawn += len(_decide_and_learn(app, window, learnt, window.act_undo.trigger).withdrawn)
        kept = next((d for d in reversed(documents) if d != window.model.doc.doc_id), window.model.doc.doc_id)
        window.document.open_document(kept)
        app.processEvents()
        _decide_and_learn(app, window, learnt, window.act_accept.trigger)
        # the mention that accept stored (on a small project every document may be started already, so
        # "the last decided mention of the document" can be an older decision Ctrl+Z will not touch)
        (decided,) = window.saving.last_changes.mentions
        _until(app, lambda: not window.service.busy(), "the session's last job")
        return {
            "doc_id": kept,
            "mention_id": decided,
            "decision_id": window.model.decisions[decided].id,
            "taught": taught,
            "withdrawn": withdrawn,
            "accepts": accepts + 1,
        }
    finally:
        window.close()
        app.processEvents()


def _undone(window, left: dict) -> bool:
    """Session 1's last accept is no longer the mention's decision. Undo restores what was there before:
    on a project whose earlier decisions touched that mention (the demo, after the bench's own store
    phase) that is an older decision, not none; waiting for no decision at all never ended there."""
    shown = window.model.decisions.get(left["mention_id"])
    return shown is None or shown.id != left["decision_id"]


def bench_restart(app, project, scratch: Path, withdrawals: int = 3) -> dict:
    left = _session(app, project, scratch, withdrawals)
    mention_ids = [m for _, ids in project.documents.documents_with_mention_ids(ids=[left["doc_id"]]) for m in ids]
    project.curation.store_suggestions({m: [] for m in mention_ids})  # the restarted desk computes them itself
    index_log = _IndexLog()
    retriever_log = logging.getLogger("core.retrieve.rescnn_retriever")
    retriever_log.addHandler(index_log)
    level = retriever_log.level
    retriever_log.setLevel(logging.INFO)
    clock, gaps, last, ends = QElapsedTimer(), [], [0], []

    def tick() -> None:
        now = clock.elapsed()
        gaps.append(now - last[0])
        ends.append(now)
        last[0] = now

    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(tick)
    started = time.perf_counter()
    window = make_window(project, scratch, background=True)  # the launcher's start: models preload
    try:
        built = time.perf_counter() - started
        clock.start()
        timer.start()
        _ready(app, window)
        watch = PaintWatch({"abstract": window.abstract.viewport(), "queue": window.queue.view.viewport()})
        reopened = window.model.doc is not None and window.model.doc.doc_id == left["doc_id"]
        if not reopened:
            window.document.open_document(left["doc_id"])
        undo_at = time.perf_counter()
        undo_clock = clock.elapsed()
        QTest.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
        undone = _shown(app, watch, ("abstract", "queue"), lambda: _undone(window, left))
        loading_when_undone = window.device_label.text() == MODELS_LOADING
        shown = _shown(
            app,
            watch,
            ("abstract",),
            lambda: any(window.model.suggestions.get(m) for m in window.model.mention_ids),
        )
        timer.stop()
        _until(app, lambda: not window.service.busy(), "the restarted desk's jobs")
    finally:
        timer.stop()
        retriever_log.removeHandler(index_log)
        retriever_log.setLevel(level)
        window.close()
        app.processEvents()
    rebuilt = [line for line in index_log.lines if line.startswith("built ")]
    return {
        **{k: left[k] for k in ("taught", "withdrawn", "accepts")},
        "window_built_ms": round(built * 1000, 1),
        "start_to_suggestions_ms": round((shown - started) * 1000, 1),
        "undo_to_shown_ms": round((undone - undo_at) * 1000, 1),
        "undo_while_models_loading": loading_when_undone,
        "reopened_last_document": reopened,
        "index": "rebuilt" if rebuilt else "loaded" if index_log.lines else "not seen",
        "index_lines": index_log.lines,
        **_gaps(gaps),
        # when the longest stall ended, in ms after the window was shown, and when Ctrl+Z was pressed
        "max_ended_at_ms": ends[gaps.index(max(gaps))] if gaps else None,
        "undo_pressed_at_ms": undo_clock,
        "shown_at_ms": round((shown - undo_at) * 1000 + undo_clock, 1),
    }


def measure_restart(app, project, scratch: Path, withdrawals: int = 3) -> dict:
    return bench_restart(app, project, scratch, withdrawals)
