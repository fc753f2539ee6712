"""Desk speed on the real window, offscreen (issue 12): a benchmark, not a test. `curalink bench desk`.

Each figure drives the real `MainWindow` the way a curator does and stops the clock at what the curator
sees: a paint event of the widget that shows the change (the queue row, the abstract, the candidate
table), and for a decision also the store answering with it (`current_decisions`). The window is built
with `background=False`: no model preload runs in a thread during the interactive figures; the stall
figure then starts the desk's own link service on documents whose suggestions were cleared.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from PySide6.QtCore import QElapsedTimer, QEvent, QEventLoop, QObject, Qt, QTimer  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from bench.desk_store import summary  # noqa: E402
from bench.gui.responsiveness import make_window, stall_while, stall_while_linking  # noqa: E402

KEY_TARGET_MS = 16.0  # issue 31: one frame at 60 Hz from the key to the decision stored and shown
STORE_QUEUE_TARGET_MS = 50.0  # issue 31: `Project.desk.queue()` over every document, p50
OPEN_TARGET_MS = 100.0
QUEUE_TARGET_MS = 100.0
STALL_TARGET_MS = 100.0
PAINT_TIMEOUT_S = 60.0  # from the end of the synchronous part: a 20,000-row sort can take seconds


class PaintWatch(QObject):
    """Records when each watched widget last received a paint event (perf_counter seconds)."""

    def __init__(self, widgets: dict[str, object]):
        super().__init__()
        self.widgets = widgets
        self.painted: dict[str, float] = {}
        self.loop = QEventLoop()  # its processEvents says whether anything was left to do
        self._names = {id(widget): name for name, widget in widgets.items()}
        for widget in widgets.values():
            widget.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Paint:
            self.painted[self._names[id(watched)]] = time.perf_counter()
        return super().eventFilter(watched, event)

    def wait(
        self,
        names: tuple[str, ...],
        since: float,
        done: Callable[[], bool] = lambda: True,
        *,
        idle_ends: bool = False,
    ) -> float:
        """Run the event loop until every named widget painted after `since` and `done()` holds; returns
        the moment the last of them happened. With `idle_ends`, an event loop with nothing left to do
        also ends the wait (a change that leaves the view as it was needs no repaint). Raises
        TimeoutError after PAINT_TIMEOUT_S."""
        deadline = time.perf_counter() + PAINT_TIMEOUT_S
        finished: float | None = None
        while True:
            busy = self.loop.processEvents()
            now = time.perf_counter()
            if finished is None and done():
                finished = now
            if finished is not None and all(self.painted.get(n, 0) > since for n in names):
                return max(finished, *(self.painted[n] for n in names))
            if finished is not None and idle_ends and not busy:
                return max([finished, *(self.painted.get(n, 0) for n in names)])
            if now > deadline:
                missing = [n for n in names if self.painted.get(n, 0) <= since]
                raise TimeoutError(
                    f"no repaint of {', '.join(missing) or 'the store'} within {PAINT_TIMEOUT_S} s"
                )


def _watch(window) -> PaintWatch:
    return PaintWatch(
        {
            "queue": window.queue.view.viewport(),
            "abstract": window.abstract.viewport(),
            "candidates": window.candidates.view.viewport(),
        }
    )


def _ready(app, window) -> None:
    window.activateWindow()
    window.raise_()
    for _ in range(20):
        app.processEvents()
        if window.isActiveWindow():
            return
        time.sleep(0.01)


def _open_mentions(window) -> list[str]:
    """Documents a curator has not started, whose every mention has suggestions (Enter accepts)."""
    return [
        e.doc_id for e in window.queue.model.entries if e.mentions and not e.reviewed and not e.unsuggested
    ]


def bench_key_accept(app, window, samples: int, seed: int = 0) -> dict:
    """Enter on a selected mention → the decision is in the store → queue row and abstract repainted."""
    project = window.project
    docs = _open_mentions(window)
    random.Random(seed).shuffle(docs)
    watch = _watch(window)
    times: list[float] = []
    landed: list[dict] = []
    key_input = "key"
    while len(times) < samples and docs:
        doc_id = docs.pop()
        window.document.open_document(doc_id)
        app.processEvents()
        while len(times) < samples:
            mention_id = window.model.current_mention_id()
            if (
                mention_id is None
                or mention_id in window.model.decisions
                or not window.model.suggestions.get(mention_id)
            ):
                break
            top = window.model.suggestions[mention_id][0].concept_id
            reviewed = window.queue.entry(doc_id).reviewed

            def saved(r=reviewed, d=doc_id) -> bool:  # the writer's "saved" came back and was shown
                return not window.saving.writer.busy() and window.queue.entry(d).reviewed == r + 1

            started = time.perf_counter()
            if key_input == "key":
                QTest.keyClick(window, Qt.Key.Key_Return)
                if window.saving.writer.busy() is False and window.queue.entry(doc_id).reviewed == reviewed:
                    key_input = "action"  # the key did not reach the shortcut (window not active)
                    window.act_accept.trigger()
            else:
                window.act_accept.trigger()
            ended = watch.wait(("queue", "abstract"), started, saved)
            times.append((ended - started) * 1000)
            found = project.curation.current_decisions(mention_ids=[mention_id]).get(mention_id)  # off the clock
            if found is None or found.action != "accept" or found.concept_id != top:
                raise RuntimeError(f"mention {mention_id}: the accept shown on screen is not in the store")
            landed.append({"mention_id": mention_id, "concept_id": top, "document": doc_id})
    return {**summary(times), "input": key_input, "landed": landed}


def bench_open(app, window, samples: int, seed: int = 0) -> dict:
    """Open an abstract → its suggestions are in the candidate table and painted."""
    entries = [e for e in window.queue.model.entries if e.mentions and e.unsuggested < e.mentions]
    rng = random.Random(seed)
    watch = _watch(window)
    times = []
    while len(times) < samples and len(entries) > 1:
        doc_id = rng.choice(entries).doc_id
        if window.model.doc is not None and window.model.doc.doc_id == doc_id:
            continue  # another abstract each time: opening the one shown costs nothing
        started = time.perf_counter()
        window.document.open_document(doc_id)
        ended = watch.wait(
            ("abstract", "candidates"), started, lambda: bool(window.candidates.model.candidates)
        )
        times.append((ended - started) * 1000)
    return summary(times)


def queue_changes(queue) -> list[tuple[str, Callable[[], None]]]:
    """Every sort and filter the queue widget offers through its public methods (extend here when it
    gains more: split, type)."""
    from app.gui import document_queue

    changes: list[tuple[str, Callable[[], None]]] = []
    for key in getattr(document_queue, "SORTS", ()):
        changes.append((f"sort {key}", lambda k=key: queue.set_sort(k)))
    for status in getattr(document_queue, "FILTERS", ()):
        changes.append((f"filter {status}", lambda s=status: queue.set_filter(s)))
    return changes


def bench_queue_changes(app, window, cycles: int) -> dict:
    """Each sort and filter change → the queue view repainted; per kind (sort, filter) and all together."""
    watch = _watch(window)
    changes = queue_changes(window.queue)
    by_kind: dict[str, list[float]] = {}
    for _ in range(cycles):
        for label, change in changes:
            started = time.perf_counter()
            change()
            ended = watch.wait(("queue",), started, idle_ends=True)
            by_kind.setdefault(label.split()[0], []).append((ended - started) * 1000)
    window.queue.set_filter("all")
    window.queue.set_sort("id")
    app.processEvents()
    every = [t for times in by_kind.values() for t in times]
    return {"all": summary(every), **{kind: summary(times) for kind, times in by_kind.items()},
            "changes": [label for label, _ in changes]}  # fmt: skip


def bench_stall(app, window, documents: int) -> dict:
    """Clear the suggestions of up to `documents` abstracts, then link them in the desk's worker while a
    5 ms timer ticks: the longest gap is the worst freeze the curator could feel."""
    project = window.project
    ids = [e.doc_id for e in window.queue.model.entries if e.mentions][-documents:]
    pairs = list(project.documents.documents_with_mention_ids(ids=ids))
    project.curation.store_suggestions({m: [] for _, mention_ids in pairs for m in mention_ids})
    window.document.reload_queue()
    gaps, seconds = stall_while_linking(app, window, ids, interval_ms=5)
    return {
        "documents": len(ids),
        "mentions": sum(len(m) for _, m in pairs),
        "seconds": round(seconds, 1),
        **_gaps(gaps),
    }


def bench_learning(app, window, decisions: int, interval_ms: int = 5) -> dict:
    """With the models loaded (after `bench_stall`), accept `decisions` top suggestions one after another,
    each in another document; every one is learnt by the linking process (core.learn.live) and the
    undecided mentions with its text, anywhere in the project, are suggested again. While a timer ticks:
    the longest event-loop gap while that work runs (the bench's own opening of a document and the
    accept itself, timed by `bench_open` and `bench_key_accept`, are left out), and per decision the
    seconds from the accept to the work being done."""
    learnt: list[tuple] = []
    window.service.learned.connect(learnt.append)
    clock, gaps, last, waiting = QElapsedTimer(), [], [0], [False]

    def tick() -> None:
        if waiting[0]:
            gaps.append(clock.elapsed() - last[0])
        last[0] = clock.elapsed()

    timer = QTimer()
    timer.setInterval(interval_ms)
    timer.timeout.connect(tick)
    clock.start()
    timer.start()
    seconds, resuggested = [], []
    for doc_id in _open_mentions(window):
        if len(seconds) >= decisions:
            break
        window.document.open_document(doc_id)
        app.processEvents()
        mention_id = window.model.current_mention_id()
        if (
            mention_id is None
            or mention_id in window.model.decisions
            or not window.model.suggestions.get(mention_id)
        ):
            continue
        before, started = len(learnt), time.perf_counter()
        window.act_accept.trigger()
        last[0], waiting[0] = clock.elapsed(), True  # the accept returned: the event loop is free again
        while len(learnt) == before and time.perf_counter() - started < PAINT_TIMEOUT_S:
            app.processEvents()
            time.sleep(0.001)
        waiting[0] = False
        if len(learnt) == before:
            raise RuntimeError(f"document {doc_id}: the accept was not learnt in {PAINT_TIMEOUT_S:.0f} s")
        seconds.append(time.perf_counter() - started)
        resuggested.append(learnt[-1][1])
    timer.stop()
    window.service.learned.disconnect(learnt.append)
    return {
        "decisions": len(seconds),
        "identical_resuggested": sum(resuggested),
        "seconds_to_learnt": summary([s * 1000 for s in seconds]),
        **_gaps(gaps),
    }


def bench_retrain_stall(app, window, seconds: float) -> dict:
    """Start the desk's background retrain (retriever only, registered, not promoted) while a 5 ms timer
    ticks; cancel it after `seconds` (a retrain on a real project takes minutes) and wait for it to stop:
    the longest gap is the worst freeze while retraining, start-up and cancelling included."""
    started = time.perf_counter()

    def cancel_when_due() -> None:
        if window.retrain.retrain_job is not None and time.perf_counter() - started > seconds:
            window.retrain.cancel_retrain()

    gaps, took = stall_while(
        app,
        lambda: window.retrain.start_retrain({"kinds": ("retriever",), "epochs": 1, "promote": "never"}),
        interval_ms=5,
        each=cancel_when_due,
    )
    return {**_gaps(gaps), "seconds": round(took, 1), "linker": _linker(window)}


def _gaps(gaps: list[int]) -> dict:
    ordered = sorted(gaps)
    return {
        "ticks": len(gaps),
        "max": max(gaps) if gaps else None,
        "p99": ordered[int(len(ordered) * 0.99)] if gaps else None,
    }


def _linker(window) -> str:
    return "thread" if window.service.in_thread else "process"


def cold_start(project_path: Path, scratch: Path, runs: int = 3) -> dict:
    """A fresh process opens the project the way `curalink -p DIR` does; the clock stops when the
    window's first show event fires (the child prints the moment)."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "OMP_WAIT_POLICY": "PASSIVE"}
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    times = []
    for _ in range(runs):
        started = time.time()
        done = subprocess.run(
            [sys.executable, "-m", "bench.gui.desk", str(project_path), str(scratch / "cold.ini")],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        shown = [line for line in done.stdout.splitlines() if line.startswith("shown ")]
        if not shown:
            raise RuntimeError(f"the cold-start child printed no show time: {done.stderr[-800:]}")
        times.append((float(shown[0].split()[1]) - started) * 1000)
    return summary(times)


def _child(project_path: str, ini: str) -> int:
    """The cold-start child: open the window as the launcher does and print when it is first shown."""
    from PySide6.QtCore import QSettings

    from app.gui.launch import application, open_project_window
    from app.gui.settings import AppSettings

    app = application()

    class FirstShow(QObject):
        def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
            if event.type() == QEvent.Type.Show and watched.isWidgetType() and watched.isWindow():
                sys.stdout.write(f"shown {time.time():.6f}\n")
                sys.stdout.flush()
                os._exit(0)  # measured: no need to wait for the model preload thread
            return False

    watcher = FirstShow()
    app.installEventFilter(watcher)
    open_project_window(Path(project_path), AppSettings(QSettings(ini, QSettings.Format.IniFormat)))
    return app.exec()


def measure_window(app, project, scratch: Path, samples: int, queue_cycles: int) -> dict:
    """Key press, open and queue figures on one window over `project` (its decisions land there)."""
    window = make_window(project, scratch, background=False)
    try:
        _ready(app, window)
        return {
            "key_accept": bench_key_accept(app, window, samples),
            "open_document": bench_open(app, window, samples),
            "queue_change": bench_queue_changes(app, window, queue_cycles),
        }
    finally:
        window.close()
        app.processEvents()


def _on_window(app, project, scratch: Path, measure) -> dict:
    window = make_window(project, scratch, background=False)
    try:
        return measure(window)
    finally:
        window.close()
        app.processEvents()


def measure_stall(app, project, scratch: Path, documents: int, decisions: int = 0) -> dict:
    """The stall while linking; then, on the same window with its models loaded, `decisions` accepts
    learnt live (`bench_learning`, under "learning")."""

    def measure(window) -> dict:
        found = {**bench_stall(app, window, documents), "linker": _linker(window)}
        if decisions > 0:
            found["learning"] = bench_learning(app, window, decisions)
        return found

    return _on_window(app, project, scratch, measure)


def measure_retrain_stall(app, project, scratch: Path, seconds: float) -> dict:
    return _on_window(app, project, scratch, lambda w: bench_retrain_stall(app, w, seconds))


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1], sys.argv[2]))
