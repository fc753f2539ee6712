"""The document queue: which abstracts are left, how far each is, and the most uncertain first."""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.gui.queue_model import ALL, FILTERS, NO_SPLIT, NO_TYPE, QueueModel
from app.gui.queue_order import SORTS
from core.store.desk_queries import DocumentFacets
from core.store.project import QueueEntry


class QueueTable(QTableView):
    """The queue's table: a click or an arrow key moves to a row, and opens its document; nothing else
    does (`asked`). Letters are the desk's keys, never a type-ahead search (a search by title opened
    documents the curator never chose: issue 31)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.asked = False  # a mouse press or key press of the curator's is under way

    def keyboardSearch(self, search: str) -> None:  # noqa: N802 - Qt's name
        """No type-ahead: a letter typed here is a desk key (app/gui/desk_keys.py)."""

    def mousePressEvent(self, event) -> None:  # noqa: N802 - Qt's name
        self.asked = True
        try:
            super().mousePressEvent(event)
        finally:
            self.asked = False

    def keyPressEvent(self, event) -> None:  # noqa: N802 - Qt's name
        self.asked = True
        try:
            super().keyPressEvent(event)
        finally:
            self.asked = False


class DocumentQueue(QWidget):
    """Filter and sort on top, the table, and the overall progress below."""

    documentActivated = Signal(str)
    viewChanged = Signal()  # a filter or the order changed (the desk remembers them)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = QueueModel(self)
        self._changed: set[str] = set()
        self.filter_box = QComboBox()
        self.filter_box.addItems(FILTERS)
        self.split_box = QComboBox()
        self.type_box = QComboBox()
        for box, label in ((self.split_box, "all splits"), (self.type_box, "all types")):
            box.addItem(label, ALL)
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.sort_box = QComboBox()
        self.sort_box.addItems(["by id", "by uncertainty"])
        for box in (self.filter_box, self.split_box, self.type_box, self.sort_box):
            box.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # letters are the curator's keys, not a combo's
        self.view = QueueTable()
        self.view.setModel(self.model)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.verticalHeader().hide()
        self.view.setAlternatingRowColors(True)
        self.view.setWordWrap(False)
        # Long titles end in an ellipsis (the tooltip has the whole title); never a sideways scrollbar.
        self.view.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.view.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        header = self.view.horizontalHeader()
        # Narrow columns are fitted when rows are loaded and widened when a changed row needs it, never
        # re-measured on every change (ResizeToContents asked Python for ~180 cells after each decision).
        header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        # Fit columns to the rows around the visible ones, not all 20,000: with Qt's default (1,000 rows)
        # every fit asked Python for ~70,000 cells (0.8 s).
        header.setResizeContentsPrecision(60)
        self.overall = QProgressBar()
        self.overall.setFormat("%v of %m mentions reviewed")
        self.summary = QLabel()
        self.summary.setObjectName("queueSummary")

        controls = QHBoxLayout()
        controls.addWidget(QLabel("Show"))
        controls.addWidget(self.filter_box, 1)
        controls.addWidget(QLabel("Sort"))
        controls.addWidget(self.sort_box, 1)
        facets = QHBoxLayout()
        facets.addWidget(QLabel("Split"))
        facets.addWidget(self.split_box, 1)
        facets.addWidget(QLabel("Type"))
        facets.addWidget(self.type_box, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        title = QLabel("Documents")
        title.setObjectName("paneTitle")
        layout.addWidget(title)
        layout.addLayout(controls)
        layout.addLayout(facets)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.overall)
        layout.addWidget(self.summary)

        self.filter_box.currentTextChanged.connect(lambda status: self._filter(status=status))
        self.split_box.currentIndexChanged.connect(
            lambda _i: self._filter(split=self.split_box.currentData())
        )
        self.type_box.currentIndexChanged.connect(lambda _i: self._filter(type=self.type_box.currentData()))
        self.sort_box.currentIndexChanged.connect(lambda which: self._sort(SORTS[which]))
        self.view.selectionModel().currentRowChanged.connect(self._row_changed)
        self._quiet = False
        self._asked = False  # a `select` that opens its document is under way

    def _sort(self, key: str) -> None:
        self._settle(lambda: self.model.set_sort(key))

    def _filter(self, **which: str) -> None:
        self._settle(lambda: self.model.set_filters(**which))

    def _settle(self, change) -> None:
        """Apply a filter or order change quietly, then keep the current document when it is still
        shown; when the filter hid it, open the row Qt moved the selection to (or the first), once."""
        previous = self.current_id()
        self._quiet = True
        self.model.hold(self.held_id())  # the curator asked for this view: the open document as it is now
        change()
        self._quiet = False
        if previous is not None and not self.select(previous, emit=False):
            target = self.current_id() or next(iter(self.visible_from(None, 1)), None)
            if target is not None:
                self.select(target, emit=False)
                self.documentActivated.emit(target)
        index = self.view.currentIndex()
        if index.isValid():
            self.view.scrollTo(index)
        self._summarise()
        self.viewChanged.emit()

    def held_id(self) -> str | None:
        return self.model.held.doc_id if self.model.held is not None else None

    def hold(self, doc_id: str | None) -> None:
        """The document now open (QueueModel.hold): always shown, in the place it has now, until another
        is opened or the curator changes the order or a filter."""
        self._quiet = True
        self.model.hold(doc_id)
        self._quiet = False
        self._summarise()

    def sort_key(self) -> str:
        return self.model.sort_key

    def set_sort(self, key: str) -> None:
        self.sort_box.setCurrentIndex(SORTS.index(key))

    def set_filter(self, status: str) -> None:
        self.filter_box.setCurrentText(status)

    def filters(self) -> dict[str, str]:
        """The active filters, as `set_filters` takes them (what the desk restores on reopening)."""
        return {"status": self.model.status, "split": self.model.split, "type": self.model.type}

    def set_filters(self, status: str = ALL, split: str = ALL, type: str = ALL) -> dict[str, str]:
        """Set each filter that names a choice the queue offers (others fall back to "all"); returns
        what was set."""
        self.filter_box.setCurrentText(status if status in FILTERS else ALL)
        for box, value in ((self.split_box, split), (self.type_box, type)):
            found = box.findData(value)
            box.setCurrentIndex(max(found, 0))
        return self.filters()

    def cycle(self, which: str) -> str:
        """Move one filter (`status`, `split`, `type`) or the `sort` to its next choice; returns its label."""
        box = {"status": self.filter_box, "split": self.split_box, "type": self.type_box}.get(
            which, self.sort_box
        )
        box.setCurrentIndex((box.currentIndex() + 1) % box.count())
        return box.currentText()

    def choices(self, which: str) -> list:
        """The values a filter offers now (`split` and `type` come from the loaded documents)."""
        box = {"status": self.filter_box, "split": self.split_box, "type": self.type_box}[which]
        return [box.itemData(i) if which != "status" else box.itemText(i) for i in range(box.count())]

    def _offer(self, facets: dict[str, DocumentFacets]) -> None:
        """Offer the splits and mention types present; keep the chosen ones (even when none is left)."""
        splits = sorted({f.split or NO_SPLIT for f in facets.values()} - {NO_SPLIT})
        splits += [NO_SPLIT] if any(not f.split for f in facets.values()) else []
        types = sorted({t for f in facets.values() for t in f.types})
        for box, values in ((self.split_box, splits), (self.type_box, types)):
            chosen = box.currentData()
            wanted = values + ([chosen] if chosen != ALL and chosen not in values else [])
            if [box.itemData(i) for i in range(1, box.count())] == wanted:
                continue
            box.blockSignals(True)
            while box.count() > 1:
                box.removeItem(1)
            for value in wanted:
                box.addItem(NO_TYPE if box is self.type_box and value == "" else value, value)
            box.setCurrentIndex(max(box.findData(chosen), 0))
            box.blockSignals(False)

    def set_entries(self, entries: list[QueueEntry], facets: dict[str, DocumentFacets] | None = None) -> None:
        """Refresh counts without moving the curator: the current document stays selected."""
        current = self.current_id()
        self._quiet = True
        self.model.set_entries(entries, facets)
        if facets is not None:
            self._offer(self.model.facets)
        if current:
            self.select(current, emit=False)
        self._quiet = False
        for column in (0, 2, 3):
            self.view.resizeColumnToContents(column)
        self._summarise()

    def _widen_for(self, entries: list[QueueEntry]) -> None:
        """Widen a narrow column when a changed row's text no longer fits it (it never shrinks by itself)."""
        metrics = self.view.fontMetrics()
        header = self.view.horizontalHeader()
        padding = 2 * self.view.style().pixelMetric(self.view.style().PixelMetric.PM_FocusFrameHMargin) + 12
        for column in (0, 2, 3):
            texts = [
                str(self.model.data(self.model.index(self.model.shown_rows[e.doc_id], column)) or "")
                for e in entries
                if e.doc_id in self.model.shown_rows
            ]
            needed = max((metrics.horizontalAdvance(text) for text in texts), default=0) + padding
            if texts and needed > header.sectionSize(column):
                header.resizeSection(column, needed)

    def update_entries(
        self, entries: list[QueueEntry], facets: dict[str, DocumentFacets] | None = None
    ) -> bool:
        """Refresh the rows of a few documents (what one decision changes); False when one is new to the
        queue (the caller then reloads it whole)."""
        self._changed.update(entry.doc_id for entry in entries)
        current = self.current_id()
        self._quiet = True
        new_facets = bool(facets) and any(self.model.facets.get(k) != v for k, v in (facets or {}).items())
        updated = self.model.update_entries(entries, facets)
        if updated and new_facets:  # a split or a type the boxes may not offer yet
            self._offer(self.model.facets)
        if updated and current:
            self.select(current, emit=False)
        self._quiet = False
        if updated:
            self._widen_for(entries)
            self._summarise()
        return updated

    def set_marked(self, marked: set[str], documents: set[str] | None = None) -> None:
        """Which documents carry a note or flag (all, or what changed among `documents`). The current
        row stays selected where it is still shown; the open document never changes by itself."""
        current = self.current_id()
        self._quiet = True
        self.model.set_marked(marked, documents)
        if current:
            self.select(current, emit=False)
        self._quiet = False
        self._summarise()

    def take_changed(self) -> set[str]:
        """The documents whose rows were updated since the last call (a background re-read of the whole
        queue started before them must not undo them)."""
        changed, self._changed = self._changed, set()
        return changed

    def _summarise(self) -> None:
        """Counts over the documents the filters show (a split filter on: that split's progress), with
        the whole project's beside them."""
        total, reviewed, done = self.model.totals
        if not self.model.filtered():
            self.overall.setMaximum(max(total, 1))
            self.overall.setValue(reviewed)
            self.summary.setText(f"{done} of {len(self.model.entries)} documents done")
            return
        shown_total, shown_reviewed, shown_done = self.model.shown_totals
        self.overall.setMaximum(max(shown_total, 1))
        self.overall.setValue(shown_reviewed)
        self.summary.setText(
            f"{shown_done} of {len(self.model.shown)} shown documents done "
            f"({done} of {len(self.model.entries)} in all)"
        )

    def entry(self, doc_id: str) -> QueueEntry | None:
        row = self.model.rows.get(doc_id)
        return None if row is None else self.model.entries[row]

    def visible_ids(self) -> list[str]:
        return [entry.doc_id for entry in self.model.shown]

    def shown_count(self) -> int:
        return len(self.model.shown)

    def visible_row(self, doc_id: str | None) -> int | None:
        """Where a document is in the visible order (None when it is not shown)."""
        return self.model.shown_rows.get(doc_id) if doc_id is not None else None

    def visible_from(self, doc_id: str | None, count: int) -> list[str]:
        """Up to `count` visible ids from `doc_id` on (from the top when it is not shown): what comes next
        without reading all 20,000 rows."""
        start = self.visible_row(doc_id) or 0
        return [entry.doc_id for entry in self.model.shown[start : start + count]]

    def current_id(self) -> str | None:
        index = self.view.currentIndex()
        return self.model.shown[index.row()].doc_id if index.isValid() else None

    def select(self, doc_id: str, *, emit: bool = True) -> bool:
        if self.current_id() == doc_id:  # already there: moving the selection costs ~0.1 s at 20,000 rows
            return True
        row = self.model.shown_rows.get(doc_id)
        if row is None:  # not in the queue, or filtered out
            return False
        index = self.model.index(row, 0)
        quiet, self._quiet, self._asked = self._quiet, not emit, emit
        self.view.selectionModel().setCurrentIndex(
            index,
            QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
        )
        self.view.scrollTo(index)
        self._quiet, self._asked = quiet, False
        return True

    def step(self, offset: int) -> str | None:
        """The document `offset` rows away in the visible order (None at either end)."""
        shown = self.model.shown
        if not shown:
            return None
        row = self.visible_row(self.current_id())
        position = row + offset if row is not None else 0
        if not 0 <= position < len(shown):
            return None
        return shown[position].doc_id

    def _row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        """Open the row the curator moved to; a row Qt made current by itself (the first row when the
        table gets the focus without one) opens nothing."""
        asked = self.view.asked or self._asked
        if not self._quiet and asked and current.isValid():
            self.documentActivated.emit(self.model.shown[current.row()].doc_id)
