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


def test_progress_and_done_count_follow_row_updates(qtbot):
    """The overall bar and "N of M documents done" are kept up to date row by row; after a run of
    changes they say what counting every row afresh says."""
    queue = _queue(qtbot)
    changes = [
        QueueEntry("0003", "title 3", mentions=4, reviewed=4),
        QueueEntry("0004", "title 4", mentions=6, reviewed=1),  # a mention added, a decision undone
        QueueEntry("0010", "title 10", mentions=4, reviewed=4),
        QueueEntry("0003", "title 3", mentions=4, reviewed=3),  # undone again
    ]
    for entry in changes:
        assert queue.update_entries([entry])
    entries = queue.model.entries
    done = sum(1 for e in entries if e.mentions and e.reviewed >= e.mentions)
    assert queue.overall.maximum() == sum(e.mentions for e in entries) == 60 * 4 + 2
    assert queue.overall.value() == sum(e.reviewed for e in entries)
    assert queue.summary.text() == f"{done} of 60 documents done"
    # Rows 0004, 0009, ... were done (12); 0004 reopened, 0010 finished, 0003 finished and reopened.
    assert done == 12 and queue.entry("0010").status == "done" and queue.entry("0004").status != "done"


def test_shown_rows_match_an_independent_filter_and_sort_after_many_changes(qtbot):
    """Random decisions, filter and order changes: the table's rows are always the documents an
    independent filter and sort give, and the current document stays selected while it is shown."""
    import random

    rng = random.Random(7)
    queue = _queue(qtbot)
    truth = {e.doc_id: e for e in queue.model.entries}

    def status(e: QueueEntry) -> str:
        return (
            "done"
            if e.mentions and e.reviewed >= e.mentions
            else ("in progress" if e.reviewed else "unreviewed")
        )

    def expected(sort: str, shown_status: str) -> list[str]:
        rows = [e for e in truth.values() if shown_status == "all" or status(e) == shown_status]
        if sort == "id":
            rows.sort(key=lambda e: int(e.doc_id))
        else:
            rows.sort(key=lambda e: (round(e.margin, 2), -(e.mentions - e.reviewed), int(e.doc_id)))
        return [e.doc_id for e in rows]

    sort, shown_status = "id", "all"
    for step in range(200):
        if step % 17 == 0:
            sort = rng.choice(["id", "uncertainty"])
            queue.set_sort(sort)
        if step % 11 == 0:
            shown_status = rng.choice(["all", "unreviewed", "in progress", "done"])
            queue.set_filter(shown_status)
        doc_id = f"{rng.randrange(60):04d}"
        old = truth[doc_id]
        new = QueueEntry(
            doc_id, old.title, mentions=4, reviewed=rng.randrange(5), margin=rng.choice([0.1, 0.5, 1.0, 0.55])
        )
        truth[doc_id] = new
        current = queue.current_id()
        assert queue.update_entries([new])
        assert queue.visible_ids() == expected(sort, shown_status), step
        if current is not None and current in queue.visible_ids():
            assert queue.current_id() == current
        shown = queue.visible_ids()
        if shown and queue.current_id() is None:
            queue.select(rng.choice(shown), emit=False)


def test_footer_counts_follow_the_split_filter(qtbot):
    """With a split chosen, the bar and the done count are that split's (issue 23 item 8), the whole
    project's beside them; counted here from the rows the test wrote."""
    from core.store.desk_queries import DocumentFacets

    queue = DocumentQueue()
    qtbot.addWidget(queue)
    entries = [
        QueueEntry(f"{n:03d}", f"t{n}", mentions=3, reviewed=3 if n % 4 == 0 else n % 3) for n in range(40)
    ]
    facets = {
        e.doc_id: DocumentFacets("test" if n % 2 else "train", frozenset({"Disease"}))
        for n, e in enumerate(entries)
    }
    queue.set_entries(entries, facets)
    queue.set_filters(split="test")
    test_rows = [e for n, e in enumerate(entries) if n % 2]
    done = lambda rows: sum(e.reviewed >= e.mentions for e in rows)  # noqa: E731
    assert queue.overall.maximum() == sum(e.mentions for e in test_rows)
    assert queue.overall.value() == sum(e.reviewed for e in test_rows)
    assert queue.summary.text().startswith(f"{done(test_rows)} of {len(test_rows)} shown documents done")
    assert f"({done(entries)} of 40 in all)" in queue.summary.text()
    # a decision in a shown row moves the split's counts (and the project's)
    changed = QueueEntry("001", "t1", mentions=3, reviewed=3)
    queue.update_entries([changed], {"001": facets["001"]})
    test_rows = [changed if e.doc_id == "001" else e for e in test_rows]
    entries = [changed if e.doc_id == "001" else e for e in entries]
    assert queue.overall.value() == sum(e.reviewed for e in test_rows)
    assert queue.summary.text().startswith(f"{done(test_rows)} of {len(test_rows)} shown documents done")
    queue.set_filters()
    assert queue.summary.text() == f"{done(entries)} of 40 documents done"
