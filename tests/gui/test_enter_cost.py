"""What one Enter costs on the UI thread (issue 34 item 4): store round trips and redraws.

A *store round trip* is one connection checkout from the project's engine pool on the UI thread: one
session or transaction opened (and committed) to answer the desk, whatever number of SQL statements
run inside it. The statements are counted too (`before_cursor_execute` on the UI thread) and reported,
but the bound is on checkouts, as a round trip to the store is a transaction, not a statement.

A *redraw* is one time the selected mention's panes are drawn again: one call of the candidate panel's
`show_candidates` (the abstract's highlights, the concept pane and the queue row move in the same
pass); the desk's change signal (`window.changes.applied`, app/gui/desk_changes.py) and the abstract's
`set_marks` are counted beside it.

Before (81dc02d, this same counting code): Enter on the first mention of the demo's first document
cost 8 checkouts (27 SQL statements) and 2 redraws (the decision's changes drawn at the decided
mention, then "go to the next mention" drawn again). After: 1 checkout (27 SQL statements: the
operation's reads, its write and the reads the desk redraws from now share one transaction) and 1
redraw, already at the next mention.
"""

from __future__ import annotations

import threading

from PySide6.QtCore import Qt
from sqlalchemy import event

MAX_ROUND_TRIPS = 3


class StoreCounter:
    """Connection checkouts and SQL statements on the thread that built it (the UI thread)."""

    def __init__(self, engine):
        self.engine, self.thread = engine, threading.get_ident()
        self.checkouts = self.statements = 0
        self.texts: list[str] = []

    def _checkout(self, *_args) -> None:
        if threading.get_ident() == self.thread:
            self.checkouts += 1

    def _statement(self, _conn, _cursor, statement, *_args) -> None:
        if threading.get_ident() == self.thread:
            self.statements += 1
            self.texts.append(statement.split("\n")[0][:120])

    def __enter__(self) -> StoreCounter:
        event.listen(self.engine.pool, "checkout", self._checkout)
        event.listen(self.engine, "before_cursor_execute", self._statement)
        return self

    def __exit__(self, *_exc) -> None:
        event.remove(self.engine.pool, "checkout", self._checkout)
        event.remove(self.engine, "before_cursor_execute", self._statement)


def test_one_enter_is_one_redraw_and_few_store_round_trips(window, demo_project, qtbot, monkeypatch):
    queue = demo_project.desk.queue()
    window.document.open_document(queue[0].doc_id)
    window.document.select_mention(0)
    mention_id = window.model.current_mention_id()
    assert window.model.suggestions[mention_id], "the demo's first mention has suggestions"
    top = window.model.suggestions[mention_id][0].concept_id
    expected_next = window.model.next_after(mention_id)  # the next undecided mention, computed first

    redraws: list[int | None] = []
    shown = window.candidates.show_candidates
    monkeypatch.setattr(
        window.candidates,
        "show_candidates",
        lambda *args, **kwargs: (redraws.append(window.model.current), shown(*args, **kwargs))[1],
    )
    signals: list = []
    window.changes.applied.connect(signals.append)
    marks: list = []
    set_marks = window.abstract.set_marks
    monkeypatch.setattr(
        window.abstract, "set_marks", lambda *args, **kwargs: (marks.append(1), set_marks(*args, **kwargs))[1]
    )
    with StoreCounter(demo_project.engine) as store:
        qtbot.keyClick(window, Qt.Key.Key_Return)

    decision = demo_project.curation.current_decisions(mention_ids=[mention_id])[mention_id]
    assert (decision.action, decision.concept_id) == ("accept", top)  # the key did its work
    assert window.model.current == expected_next  # and the desk moved on
    print(f"Enter: {store.checkouts} checkouts, {store.statements} SQL statements, {len(redraws)} redraws")
    assert redraws == [expected_next], f"one redraw, at the next mention: {redraws}"
    assert len(signals) == 1 and len(marks) == 1
    assert signals[0].changes.decisions[mention_id].concept_id == top
    assert store.checkouts <= MAX_ROUND_TRIPS, store.texts
