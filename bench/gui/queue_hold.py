"""The queue model's cost at 20,000 rows with Sort = by uncertainty and Show = unreviewed (issue 31): a
decision's row update, and opening another document (the queue holds the open one in place; the one
left takes its own place then). Synthetic rows, no project; run from a checkout's root, e.g. an old one
beside this one for a comparison:

    QT_QPA_PLATFORM=offscreen python -m bench.gui.queue_hold [--rows 20000] [--samples 40]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time


def _p(values: list[float]) -> str:
    ordered = sorted(values)
    return f"p50 {statistics.median(ordered):.1f} ms, p95 {ordered[max(0, int(len(ordered) * 0.95) - 1)]:.1f} ms"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--samples", type=int, default=40)
    args = parser.parse_args(argv)
    from PySide6.QtWidgets import QApplication

    from app.console import stdout
    from app.gui.document_queue import DocumentQueue
    from core.store.project import QueueEntry

    app = QApplication.instance() or QApplication([])
    rng = random.Random(1)
    rows = [
        QueueEntry(str(10_000_000 + i), f"title {i}", 10, 0, 0, round(rng.random(), 3), False) for i in range(args.rows)
    ]
    queue = DocumentQueue()
    queue.set_entries(rows)
    queue.set_sort("uncertainty")
    queue.set_filter("unreviewed")
    hold = getattr(queue, "hold", None)  # absent before issue 31
    opens, decisions = [], []
    for k in range(args.samples):
        doc_id = queue.visible_ids()[k * 7 % 500]
        started = time.perf_counter()
        if hold is not None:
            hold(doc_id)
        queue.select(doc_id, emit=False)
        opens.append((time.perf_counter() - started) * 1000)
        entry = queue.entry(doc_id)
        decided = QueueEntry(doc_id, entry.title, entry.mentions, entry.reviewed + 1, 0, min(1.0, entry.margin + 0.3), False)
        started = time.perf_counter()
        queue.update_entries([decided])
        decisions.append((time.perf_counter() - started) * 1000)
    app.processEvents()
    stdout.print(f"{args.rows} rows: open another document {_p(opens)} | one decision's row update {_p(decisions)}")


if __name__ == "__main__":
    main()
