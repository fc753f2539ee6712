"""The real desk (offscreen) as a fault-trial process: decisions under a full disk or another writer's
lock, or opening a project someone else made.

    python -m bench.faults.desk full-disk PROJECT      # stdin: "go" (disk filled), "retry" (space freed)
    python -m bench.faults.desk decide PROJECT --seconds S
    python -m bench.faults.desk open PROJECT           # load the models in force, as the desk does

It prints `ready`, then `kind {json}` reports. The event loop's longest stall is measured with a 10 ms
timer while the desk works (the window must never wait on another program's lock).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from PySide6.QtCore import QElapsedTimer, QEventLoop, QSettings, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QMessageBox  # noqa: E402

from app.gui.launch import application  # noqa: E402


def say(kind: str, payload: object = None) -> None:
    sys.stdout.write(kind + ("" if payload is None else " " + json.dumps(payload)) + "\n")
    sys.stdout.flush()


class StallClock:
    """The longest gap between two ticks of a 10 ms timer: how long the UI thread was busy at once."""

    def __init__(self) -> None:
        self.clock = QElapsedTimer()
        self.last = 0
        self.longest = 0
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._tick)
        self.clock.start()
        self.timer.start()

    def _tick(self) -> None:
        now = self.clock.elapsed()
        self.longest = max(self.longest, now - self.last)
        self.last = now


def pump(app: QApplication, seconds: float, until=None) -> bool:
    """Run the event loop for up to `seconds`, or until `until()` is true; returns `until()`'s last answer."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
        if until is not None and until():
            return True
        time.sleep(0.002)
    return bool(until and until())


def stdin_lines() -> queue.Queue:
    lines: queue.Queue = queue.Queue()

    def read() -> None:
        for line in sys.stdin:
            lines.put(line.strip())

    threading.Thread(target=read, daemon=True).start()
    return lines


def window_on(project_path: Path, *, background: bool, curator: str, scratch: Path):
    from app.console import log_to_project
    from app.gui.main_window import MainWindow
    from app.gui.settings import AppSettings
    from core.store import Project

    project = Project.open(project_path)
    log_to_project(project.path)
    settings = AppSettings(QSettings(str(scratch / "settings.ini"), QSettings.Format.IniFormat))
    settings.curator = curator
    window = MainWindow(project, settings, background=background)
    window.show()
    return window


def next_suggested(window, skip: set[int] = frozenset()) -> bool:
    """Select the next undecided mention with suggestions (not in `skip`), opening later documents."""
    ids = window.queue.visible_ids()
    start = ids.index(window.model.doc.doc_id) if window.model.doc and window.model.doc.doc_id in ids else 0
    for doc_id in ids[start:] + ids[:start]:
        if window.model.doc is None or window.model.doc.doc_id != doc_id:
            window.document.open_document(doc_id)
        for index, mention_id in enumerate(window.model.mention_ids):
            if (
                window.model.suggestions.get(mention_id)
                and mention_id not in window.model.decisions.keys() | skip
            ):
                window.document.select_mention(index)
                return True
    return False


def bar_text(window) -> str:
    return window.saving.save_bar.label.text() if window.saving.save_bar.isVisible() else ""


def run_full_disk(app, window, lines: queue.Queue) -> int:
    """A decision while the disk is full: a dialog, a red bar, nothing in the undo stack; Retry saves it."""
    next_suggested(window)
    mention_id = window.model.current_mention_id()
    say("ready")
    lines.get()  # "go": the harness filled the disk
    window.curation.accept_top()
    pump(app, 30, lambda: window.saving.writer.error is not None)
    dialogs = [w for w in app.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()]
    stored = mention_id in window.project.curation.current_decisions(mention_ids=[mention_id])
    say(
        "stalled",
        {
            "dialog": dialogs[0].windowTitle() if dialogs else "",
            "dialog_text": dialogs[0].text()[:300] if dialogs else "",
            "bar": bar_text(window)[:300],
            "undo": window.undo_stack.count(),
            "stored": stored,
        },
    )
    for dialog in dialogs:
        dialog.accept()
    lines.get()  # "retry": the harness freed the space
    window.saving.retry_writes()
    pump(app, 30, lambda: not window.saving.writer.busy())
    stored = mention_id in window.project.curation.current_decisions(mention_ids=[mention_id])
    say("result", {"stored": stored, "undo": window.undo_stack.count(), "bar": bar_text(window)[:300]})
    return 0


def run_decide(app, window, seconds: float, pause: float, lines: queue.Queue | None = None) -> int:
    """Decide for `seconds` (one decision every `pause`), then wait for every change to be saved,
    pressing Retry when the writer stalls (as a curator would, once told the lock is gone). With `lines`,
    the work starts when "go" arrives."""
    say("ready")
    if lines is not None:
        pump(app, 600, lambda: not lines.empty())
    stalls = StallClock()
    outcomes = {"saved": 0, "pending": 0, "refused": 0}
    stalled = {"count": 0}
    window.saving.writer.stalled.connect(lambda _error: stalled.__setitem__("count", stalled["count"] + 1))
    decided: set[int] = set()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not next_suggested(window, decided):
            break
        decided.add(window.model.current_mention_id())
        before = (window.undo_stack.count(), len(window.saving.writer.pending))
        window.curation.accept_top()
        after = (window.undo_stack.count(), len(window.saving.writer.pending))
        outcomes["saved" if after[0] > before[0] else "pending" if after[1] > before[1] else "refused"] += 1
        pump(app, pause)
    longest_while_deciding = stalls.longest
    retries = 0
    end = time.monotonic() + 240
    while window.saving.writer.busy() and time.monotonic() < end:
        if window.saving.writer.error is not None:
            retries += 1
            window.saving.retry_writes()
        pump(app, 1.0)
    say(
        "result",
        {
            **outcomes,
            "stalls": stalled["count"],
            "retries": retries,
            "pending_left": len(window.saving.writer.pending),
            "undo": window.undo_stack.count(),
            "longest_stall_ms": longest_while_deciding,
            "longest_stall_ms_overall": stalls.longest,
        },
    )
    return 0


def run_open(app, window) -> int:
    """Load the models in force in the background, as the desk does on open; report what happened."""
    say("ready")
    outcome: dict = {}
    window.service.linkerReady.connect(lambda text: outcome.setdefault("linker", text))
    window.service.failed.connect(lambda exc: outcome.setdefault("error", f"{type(exc).__name__}: {exc}"))
    if not window.service.busy():
        window.service.preload()
    pump(app, 180, lambda: bool(outcome))
    say("opened", outcome or {"error": "the models did not load within 180 s"})
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.faults.desk")
    parser.add_argument("mode", choices=["full-disk", "decide", "open"])
    parser.add_argument("project", type=Path)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--pause", type=float, default=0.4)
    parser.add_argument("--curator", default="fault-desk")
    parser.add_argument("--wait-go", action="store_true", help="decide: start once a line arrives on stdin")
    args = parser.parse_args(argv)
    app = application()
    wants_stdin = args.mode == "full-disk" or args.wait_go
    lines = stdin_lines() if wants_stdin else queue.Queue()  # `open` leaves stdin to the probe
    with tempfile.TemporaryDirectory(prefix="curalink-desk-") as scratch:
        try:
            window = window_on(
                args.project, background=args.mode == "open", curator=args.curator, scratch=Path(scratch)
            )
        except Exception as exc:  # noqa: BLE001 - reported, as the desk would show it
            say("ready")
            say("opened" if args.mode == "open" else "result", {"error": f"{type(exc).__name__}: {exc}"})
            return 1
        if args.mode == "full-disk":
            code = run_full_disk(app, window, lines)
        elif args.mode == "decide":
            code = run_decide(app, window, args.seconds, args.pause, lines if args.wait_go else None)
        else:
            code = run_open(app, window)
        window.saving.writer.pending.clear()
        window.close()
        window.service.shutdown()
        window.project.close()
    return code


if __name__ == "__main__":
    raise SystemExit(main())
