"""`curalink [-p DIR] --smoke SECONDS`: start the desk as a curator would, then quit once it is usable and
print one JSON line of start-up times. CI runs it on the packaged app (a missing hidden import or data
file fails here, not at a curator's desk) and packaging/bench_startup.py reads its times.

Times are seconds since the process was created (psutil), so they include the interpreter, the
PyInstaller bootloader and every import: `window_s` when the main window is exposed on screen,
`suggestions_s` when its candidate list first shows ranked concepts, `models_s` when the background
worker has the models loaded (new suggestions can be computed).
"""

from __future__ import annotations

import json
import logging
import sys
import time

import psutil
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

log = logging.getLogger(__name__)

POLL_MS = 20
MILESTONES = ("window_s", "suggestions_s", "models_s")


def since_launch() -> float:
    """Seconds since this process was created (the user's click), not since Python started."""
    return time.time() - psutil.Process().create_time()


class SmokeWatch:
    """Polls the open desk windows until every milestone is seen, then exits the event loop: 0 when all
    were seen within `timeout_s`, 1 (and `problem` says why) when one failed or time ran out."""

    def __init__(self, app: QApplication, timeout_s: float):
        self.app = app
        self.timeout_s = timeout_s
        self.seen: dict[str, float | str] = {}
        self.window = None
        self.done = False
        self.timer = QTimer()
        self.timer.timeout.connect(self.look)
        self.timer.start(POLL_MS)

    def look(self) -> None:
        from app.gui.main_window import OPEN_WINDOWS

        if self.done:
            return
        if since_launch() > self.timeout_s:
            missing = [name for name in MILESTONES if name not in self.seen]
            self.finish(1, f"timed out after {self.timeout_s:.0f} s waiting for {', '.join(missing)}")
            return
        if self.window is None and OPEN_WINDOWS:
            self.window = OPEN_WINDOWS[0]
            self.window.service.linkerReady.connect(self._models_ready)
            self.window.service.failed.connect(
                lambda exc: self.finish(1, f"loading the models failed: {exc}")
            )
        window = self.window
        if window is None or not window.isVisible():
            return
        handle = window.windowHandle()
        if "window_s" not in self.seen and handle is not None and handle.isExposed():
            self.seen.update(window_s=since_launch(), title=window.windowTitle())
        if "window_s" in self.seen and "suggestions_s" not in self.seen:
            if window.candidates.model.rowCount() > 0:
                self.seen["suggestions_s"] = since_launch()
        if all(name in self.seen for name in MILESTONES):
            self.finish(0)

    def _models_ready(self, device: str) -> None:
        self.seen.setdefault("models_s", since_launch())
        self.seen["device"] = device

    def finish(self, code: int, problem: str = "") -> None:
        if self.done:
            return
        self.done = True
        self.timer.stop()
        report = {
            key: round(value, 3) if isinstance(value, float) else value for key, value in self.seen.items()
        }
        report.update(ok=code == 0, frozen=bool(getattr(sys, "frozen", False)))
        if problem:
            report["problem"] = problem
            log.error("smoke check failed: %s", problem)
        sys.stdout.write(json.dumps(report) + "\n")
        sys.stdout.flush()
        if self.window is not None:
            self.window.service.shutdown()
        self.app.exit(code)


def watch(app: QApplication, timeout_s: float) -> SmokeWatch:
    """Start watching; keep the returned object alive until the event loop ends."""
    return SmokeWatch(app, timeout_s)
