"""The queue answers "what comes next" and takes one changed row without reading or resetting all rows
(a decision in a 20,000-document project froze the desk while the whole queue was rebuilt)."""

from __future__ import annotations

from app.gui.document_queue import DocumentQueue
from core.store.desk_queries import QueueEntry


def _queue(qtbot) -> DocumentQueue:
    queue = DocumentQueue()
    qtbot.addWidget(queue)
    entries = [
        QueueEntry(f"{n:04d}", f"title {n}", mentions=4, reviewed=n % 5, margin=(n * 37 % 100) / 100)
        for n in range(60)
    ]
    queue.set_entries(entries)
    return queue


def test_visible_from_and_step_follow_the_visible_order(qtbot):
    queue = _queue(qtbot)
    for sort, status in (("id", "all"), ("uncertainty", "all"), ("uncertainty", "in progress")):
        queue.set_sort(sort)
        queue.set_filter(status)
        shown = queue.visible_ids()
        for position in (0, 7, len(shown) - 2):
            assert queue.visible_from(shown[position], 5) == shown[position : position + 5]
            queue.select(shown[position], emit=False)
            assert queue.step(1) == (shown[position + 1] if position + 1 < len(shown) else None)
            assert queue.step(-1) == (shown[position - 1] if position else None)
        assert queue.visible_from("not-there", 3) == shown[:3]


def test_one_changed_row_is_updated_in_place_and_keeps_the_selection(qtbot):
    queue = _queue(qtbot)
    queue.set_sort("uncertainty")
    resets: list[int] = []
    queue.model.modelReset.connect(lambda: resets.append(1))
    queue.select("0010", emit=False)
    changed = QueueEntry("0010", "title 10", mentions=4, reviewed=4, margin=1.0)
    assert queue.update_entries([changed])
    assert resets == [] and queue.current_id() == "0010" and queue.entry("0010").status == "done"
    assert queue.visible_ids()[-1] == "0010"  # re-sorted: nothing uncertain is left in it
    assert "documents done" in queue.summary.text()
    assert not queue.update_entries([QueueEntry("new", "a document the queue has not seen")])
