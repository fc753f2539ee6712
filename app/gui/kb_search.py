"""Search the whole KB as you type (names, synonyms, ids) and pick any concept for a correction: Enter
links the mention to it alone, Ctrl+Enter adds it to the mention's link (a mention naming several).

The search forgives spelling variants, word order and typos (`Project.kb.search_names`); ↑/↓ move through
the results and the concept pane beside them shows the highlighted one, so a near miss can be judged
before it is picked.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QRect, Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from app.gui.concept_pane import ConceptPane
from app.gui.elide import DistinguishingElide

if TYPE_CHECKING:
    from core.store.project import Project

SEARCH_LIMIT = 50
INDEX_POLL_MS = 40  # how often a search waiting for the index looks again (the window takes keys meanwhile)
logger = logging.getLogger(__name__)


_BUILDS: dict[int, threading.Thread] = {}  # id(project.kb) -> the thread building its index


def warm_search_index(project: Project) -> threading.Thread:
    """Build the forgiving-search index off the UI thread at start, so the first Ctrl+F does not wait
    for it (about 0.5 s on MEDIC); a search before it is ready waits for the same build, never a second.
    One build per KB at a time: a second call while one runs returns that one."""
    running = _BUILDS.get(id(project.kb))
    if running is not None and running.is_alive():
        return running

    def build() -> None:
        try:
            project.kb.name_index()
        except Exception:  # the project closed under it: the next search builds it again
            logger.debug("KB search index not built in the background", exc_info=True)

    thread = threading.Thread(target=build, name="kb-search-index", daemon=True)
    _BUILDS[id(project.kb)] = thread
    thread.start()
    return thread


MIN_SIZE = (560, 320)  # below this the results and the concept pane are no longer readable side by side


def placement(wanted: QRect, avoid: QRect, screen: QRect) -> QRect:
    """Where the search goes so that `avoid` (the mention being linked, with its line) stays in view:
    beside it on the wider side, else below or above it, shrunk to the room there (never below
    MIN_SIZE); where nothing fits, the place that covers the least of it."""
    width, height = wanted.width(), wanted.height()
    min_w, min_h = MIN_SIZE
    room = {
        "right": QRect(avoid.right() + 1, screen.top(), screen.right() - avoid.right(), screen.height()),
        "left": QRect(screen.left(), screen.top(), avoid.left() - screen.left(), screen.height()),
        "below": QRect(screen.left(), avoid.bottom() + 1, screen.width(), screen.bottom() - avoid.bottom()),
        "above": QRect(screen.left(), screen.top(), screen.width(), avoid.top() - screen.top()),
    }
    order = sorted(("right", "left"), key=lambda side: -room[side].width()) + ["below", "above"]
    for side in order:
        area = room[side]
        if area.width() >= min_w and area.height() >= min_h:
            w, h = min(width, area.width()), min(height, area.height())
            x = area.left() if side != "left" else area.right() - w + 1
            y = area.top() if side != "above" else area.bottom() - h + 1
            if side in ("right", "left"):  # level with the mention where the screen allows
                y = max(screen.top(), min(avoid.center().y() - h // 2, screen.bottom() - h + 1))
            else:
                x = max(screen.left(), min(avoid.center().x() - w // 2, screen.right() - w + 1))
            return QRect(x, y, w, h)
    w, h = max(min_w, min(width, screen.width())), max(min_h, min(height, screen.height()))
    below = avoid.bottom() + 1 <= screen.bottom() - h + 1
    y = avoid.bottom() + 1 if below else screen.top()
    return QRect(screen.left(), min(y, screen.bottom() - h + 1), w, h)


class KbSearchDialog(QDialog):
    """Type-ahead over `Project.kb.search_names`; Enter (or a double click) picks the highlighted concept."""

    def __init__(self, project: Project, parent=None, *, initial: str = ""):
        super().__init__(parent)
        self.project = project
        self.chosen: str = ""
        self.add = False  # add the concept to the mention's link instead of replacing it
        self.last_latency_ms = 0.0
        self.setWindowTitle("Search the knowledge base")
        self.resize(1040, 560)
        self.query = QLineEdit()
        self.query.setPlaceholderText(
            "name, synonym or id (e.g. D006816); spelling, word order and typos forgiven"
        )
        self.query.setClearButtonEnabled(True)
        self.results = QTableWidget(0, 3)
        self.results.setHorizontalHeaderLabels(["ID", "Preferred name", "Matched name"])
        self.results.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.results.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.results.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.results.verticalHeader().hide()
        self.results.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        for column in (1, 2):  # both names share the width the id leaves
            self.results.horizontalHeader().setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)
        # Names too long for their column keep the words that tell them from the other results (they
        # were cut at the end, issue 31); the tooltip has the whole name.
        self.names_elide = DistinguishingElide(self.results)
        for column in (1, 2):
            self.results.setItemDelegateForColumn(column, self.names_elide)
        self.results.currentCellChanged.connect(lambda row, *_rest: self.show_row(row))
        self.concept = ConceptPane(
            names=lambda concept_id: project.kb.concept_names([concept_id]).get(concept_id, "")
        )
        self.concept.setMinimumWidth(300)
        panes = QSplitter()
        panes.addWidget(self.results)
        panes.addWidget(self.concept)
        panes.setSizes([620, 400])
        self.status = QLabel("")
        self.status.setObjectName("hint")
        layout = QVBoxLayout(self)
        layout.addWidget(self.query)
        layout.addWidget(panes, 1)
        layout.addWidget(self.status)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.link_button = buttons.addButton("Link", QDialogButtonBox.ButtonRole.AcceptRole)
        self.add_button = buttons.addButton("Add to link", QDialogButtonBox.ButtonRole.ActionRole)
        self.link_button.setAutoDefault(False)
        self.add_button.setAutoDefault(False)
        self.link_button.clicked.connect(lambda: self.pick())
        self.add_button.clicked.connect(lambda: self.pick(add=True))
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        # Coalesce bursts of keystrokes into one query per event-loop turn.
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._search_when_ready)
        self.query.textChanged.connect(lambda _text: self._timer.start())
        self.query.installEventFilter(self)
        self.results.doubleClicked.connect(lambda _index: self.pick())
        self.query.returnPressed.connect(lambda: self.pick())
        self.query.setText(initial)
        self.query.selectAll()

    def keep_in_view(self, avoid: QRect) -> None:
        """Move (and if need be shrink) the dialog so it does not cover `avoid` (global coordinates)."""
        screen = self.screen().availableGeometry() if self.screen() else QRect(0, 0, 1920, 1080)
        frame = self.frameGeometry()
        extra_w, extra_h = frame.width() - self.width(), frame.height() - self.height()
        wanted = QRect(0, 0, self.width() + extra_w, self.height() + extra_h)
        target = placement(wanted, avoid, screen)
        self.resize(target.width() - extra_w, target.height() - extra_h)
        self.move(target.topLeft())

    def _search_when_ready(self) -> None:
        """The search as the curator types. While the forgiving index is still being built (the first
        Ctrl+F of a session, before the desk built it when idle), it is built in a thread and the search
        waits for it without blocking: blocked in the build, the dialog was not even shown, and what the
        curator typed meanwhile went to the desk under it and was lost ("ion" for "infection")."""
        if self.query.text().strip() and not self.project.kb.name_index_built():
            warm_search_index(self.project)
            self.status.setText("preparing the KB search (once per session)… keep typing")
            self._timer.start(INDEX_POLL_MS)
            return
        self._timer.setInterval(0)
        self.run_search()

    def run_search(self) -> None:
        """The search for what is typed now (waits for the index where it is still being built)."""
        text = self.query.text()
        started = time.perf_counter()
        hits = self.project.kb.search_names(text, limit=SEARCH_LIMIT) if text.strip() else []
        self.last_latency_ms = (time.perf_counter() - started) * 1000
        self.names_elide.forget()
        self.results.setRowCount(len(hits))
        for row, (concept_id, matched, preferred) in enumerate(hits):
            for column, value in enumerate((concept_id, preferred, matched if matched != preferred else "")):
                item = QTableWidgetItem(value)
                item.setToolTip(value)
                self.results.setItem(row, column, item)
        if hits:
            self.results.selectRow(0)
        self.show_row(self.results.currentRow())
        self.status.setText(
            f"{len(hits)} concept(s) in {self.last_latency_ms:.0f} ms · ↑/↓ to choose, Enter to link, "
            "Ctrl+Enter to add to the link, Esc to cancel"
        )

    def show_row(self, row: int) -> None:
        """The concept pane follows the highlighted result."""
        if 0 <= row < self.results.rowCount():
            self.concept.show_concept(self.project.kb.concept(self.results.item(row, 0).text()))
        else:
            self.concept.show_concept(None)

    def result_ids(self) -> list[str]:
        return [self.results.item(row, 0).text() for row in range(self.results.rowCount())]

    def pick(self, *, add: bool = False) -> None:
        if self._timer.isActive():
            self._timer.stop()
            self.run_search()  # Enter before the index was ready: this one waits for it
        row = self.results.currentRow()
        if row < 0:
            return
        self.chosen = self.results.item(row, 0).text()
        self.add = add
        self.accept()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.query and event.type() == QEvent.Type.KeyPress:
            key = event.key()
            control = event.modifiers() & Qt.KeyboardModifier.ControlModifier
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and control:
                self.pick(add=True)
                return True
            if key in (Qt.Key.Key_Down, Qt.Key.Key_Up) and self.results.rowCount():
                step = 1 if key == Qt.Key.Key_Down else -1
                row = min(max(self.results.currentRow() + step, 0), self.results.rowCount() - 1)
                self.results.selectRow(row)
                return True
        return super().eventFilter(watched, event)
