"""Responsiveness figures of the real window, offscreen, on the demo project (a benchmark, not a test).

    python -m bench.gui.responsiveness [--demo PATH] [--medic FILE]

Prints: time from opening an abstract to its retriever suggestions on screen, the reranked list (or
that no reranker is trained), the event loop's longest stall while the worker links every document,
and KB type-ahead latency on MEDIC imported into a temporary project.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from PySide6.QtCore import QElapsedTimer, QSettings, QTimer  # noqa: E402

from app.gui.launch import application  # noqa: E402

MEDIC = Path(__file__).resolve().parents[3] / "shared" / "data" / "vocab" / "medic_06Jul2012.txt"
QUERIES = (
    "hunt",
    "huntington",
    "breast canc",
    "diabetes mell",
    "D006816",
    "cystic fib",
    "alzh",
    "parkinson dis",
    "neoplasm",
    "ataxia tel",
    "colorectal",
    "heart fail",
    "oesophageal cancer",
    "cancer breast",
    "diabtes",
)


def _out(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def make_window(project, scratch: Path, background: bool):
    """The real main window on `project`, shown, with its settings in `scratch` (never the user's)."""
    from app.gui.main_window import MainWindow
    from app.gui.settings import AppSettings

    settings = AppSettings(QSettings(str(scratch / "settings.ini"), QSettings.Format.IniFormat))
    window = MainWindow(project, settings, background=background)
    window.show()
    return window


def stall_while(app, start, interval_ms: int = 10, each=None) -> tuple[list[int], float]:
    """Run the job `start()` returns while a timer ticks every `interval_ms` (calling `each()` between
    event-loop turns): the gaps between ticks (ms; the longest is the worst event-loop stall) and the
    seconds the job took."""
    clock = QElapsedTimer()
    gaps: list[int] = []
    last = [0]

    def tick() -> None:
        now = clock.elapsed()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.setInterval(interval_ms)
    timer.timeout.connect(tick)
    clock.start()
    timer.start()
    started = time.perf_counter()
    job = start()
    while not job.done.is_set():
        app.processEvents()
        time.sleep(0.001)
        if each is not None:
            each()
    app.processEvents()
    timer.stop()
    return gaps, time.perf_counter() - started


def stall_while_linking(app, window, ids: list[str], interval_ms: int = 10) -> tuple[list[int], float]:
    """Link `ids` in the window's worker while the event loop's gaps are measured (`stall_while`)."""
    return stall_while(app, lambda: window.links.link_documents(ids), interval_ms)


def bench_open(app, project, scratch: Path) -> None:
    window = make_window(project, scratch, background=False)
    app.processEvents()
    doc_id = max(window.queue.model.entries, key=lambda e: e.mentions).doc_id
    other = next(e.doc_id for e in window.queue.model.entries if e.doc_id != doc_id)
    times = []
    for _ in range(5):
        window.document.open_document(other)
        app.processEvents()
        started = time.perf_counter()
        window.document.open_document(doc_id)
        app.processEvents()  # painted: the candidate table and the highlights are on screen
        times.append((time.perf_counter() - started) * 1000)
        assert window.candidates.model.candidates, "no stored suggestions to show"
    mentions = len(window.model.mention_ids)
    _out(
        f"open abstract {doc_id} ({mentions} mentions) -> retriever suggestions shown: "
        f"median {statistics.median(times):.1f} ms, max {max(times):.1f} ms (target <= 300 ms)"
    )
    if window.links.reranker_version:
        _out(
            f"reranked list: shown with the same stored suggestions (reranker {window.links.reranker_version})"
        )
    else:
        _out("reranked list: no reranker trained in the demo project (the column reads 'not trained')")
    window.close()


def bench_stall(app, project, scratch: Path) -> None:
    ids = project.documents.document_ids()
    pairs = list(project.documents.documents_with_mention_ids())
    project.curation.store_suggestions({m: [] for _, mention_ids in pairs for m in mention_ids})
    window = make_window(project, scratch, background=False)
    gaps, seconds = stall_while_linking(app, window, ids)
    _out(
        f"linking {len(ids)} documents in the worker (model load included): {seconds:.1f} s; "
        f"{len(gaps)} timer ticks, longest event-loop stall {max(gaps)} ms, "
        f"p99 {sorted(gaps)[int(len(gaps) * 0.99)]} ms (target <= 100 ms)"
    )
    window.close()


def bench_kb(medic: Path, scratch: Path) -> None:
    from core.kb import load_kb
    from core.store import Project

    if not medic.is_file():
        _out(f"KB type-ahead: skipped, {medic} not found")
        return
    project = Project.create(scratch / "medic")
    started = time.perf_counter()
    project.kb.import_concepts(load_kb(medic, "medic"), source=str(medic), fmt="medic")
    stats = project.desk.stats()
    _out(
        f"MEDIC imported: {stats['concepts']} concepts, {stats['names']} names in "
        f"{time.perf_counter() - started:.1f} s"
    )
    started = time.perf_counter()
    project.kb.name_index()  # the desk builds it in the background at start; `curalink bench kb-search` has more
    _out(
        f"KB search index (spelling, word order, typos) built in {(time.perf_counter() - started) * 1000:.0f} ms"
    )
    latencies = []
    for query in QUERIES:
        for end in range(1, len(query) + 1):  # every keystroke of the query
            begun = time.perf_counter()
            project.kb.search_names(query[:end], limit=50)
            latencies.append((time.perf_counter() - begun) * 1000)
    latencies.sort()
    _out(
        f"KB type-ahead on MEDIC: {len(latencies)} keystrokes, median {statistics.median(latencies):.1f} ms, "
        f"p95 {latencies[int(len(latencies) * 0.95)]:.1f} ms, max {latencies[-1]:.1f} ms (target <= 100 ms)"
    )
    project.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--demo", type=Path, help="an already built demo project (copied, never changed)")
    parser.add_argument("--medic", type=Path, default=MEDIC)
    args = parser.parse_args(argv)
    app = application()
    from app.demo import build_demo_project
    from core.store import Project

    with tempfile.TemporaryDirectory(prefix="curalink-bench-") as tmp:
        scratch = Path(tmp)
        if args.demo:
            shutil.copytree(args.demo, scratch / "demo")
            project = Project.open(scratch / "demo")
        else:
            project = build_demo_project(scratch / "demo")
        bench_open(app, project, scratch)
        bench_stall(app, project, scratch)
        project.close()
        bench_kb(args.medic, scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
