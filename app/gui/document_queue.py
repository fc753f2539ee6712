"""The document queue: which abstracts are left, how far each is, and the most uncertain first."""

from __future__ import annotations

import bisect

import numpy as np
from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor
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

from app.gui.queue_order import SORTS, natural_id_key, uncertainty_key
from core.store.desk_lookup import DocumentFacets
from core.store.project import QueueEntry

ALL = "all"
FILTERS = (ALL, "unreviewed", "in progress", "done")
NO_SPLIT = "none"
NO_TYPE = "(untyped)"
_COLUMNS = ("Document", "Title", "Rev.", "Margin")
_HEADER_TIPS = (
    "document id (PMID)",
    "title (hover a row for all of it)",
    "mentions reviewed / mentions",
    "smallest top-two score margin among unreviewed mentions: low means uncertain",
)
_STATUS_COLOURS = {"done": "#2e8b3a", "in progress": "#d9780f", "unreviewed": "#707070"}

_Index = QModelIndex | QPersistentModelIndex
_NO_FACETS = DocumentFacets("", frozenset())


class QueueModel(QAbstractTableModel):
    """The queue's rows: `entries` holds every document in display order (the model sorts itself, see
    app/gui/queue_order.py), `shown` the ones the filters let through, which are the table's rows.

    No QSortFilterProxyModel: each order or filter change made it call `filterAcceptsRow` in Python for
    every row, and a sort made it filter every row again (~100-200 ms at 20,000 documents). Here a filter
    is one list comprehension and a change of order or filter one layout change (the selection follows
    its document)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.entries: list[QueueEntry] = []
        self.rows: dict[str, int] = {}  # doc id -> position in entries
        self.shown: list[QueueEntry] = []
        self.shown_rows: dict[str, int] = {}  # doc id -> table row
        self.facets: dict[str, DocumentFacets] = {}
        self.sort_key = "id"
        self.status = ALL
        self.split = ALL
        self.type = ALL
        self._id_keys: dict[str, tuple] = {}
        self._id_rank: dict[str, int] = {}  # doc id -> place in the id order
        # Mentions, reviewed mentions and finished documents over all rows, kept up to date row by row:
        # summing 20,000 rows after every decision cost ~25 ms.
        self.totals = (0, 0, 0)

    @staticmethod
    def _counts(entries: list[QueueEntry]) -> tuple[int, int, int]:
        return (
            sum(e.mentions for e in entries),
            sum(e.reviewed for e in entries),
            sum(e.status == "done" for e in entries),
        )

    def _key(self, entry: QueueEntry):
        id_key = self._id_keys.get(entry.doc_id)
        if id_key is None:
            id_key = self._id_keys[entry.doc_id] = natural_id_key(entry.doc_id)
        return id_key if self.sort_key == "id" else uncertainty_key(entry, id_key)

    def _ordered(self, entries: list[QueueEntry]) -> list[QueueEntry]:
        """All rows in the current order: ids ranked once, then one numpy lexsort (a Python key per row
        made a re-sort of 20,000 rows cost ~70 ms)."""
        if not entries:
            return []
        if any(entry.doc_id not in self._id_rank for entry in entries):  # new documents: rank ids again
            for entry in entries:
                if entry.doc_id not in self._id_keys:
                    self._id_keys[entry.doc_id] = natural_id_key(entry.doc_id)
            ranked = sorted(self._id_keys, key=self._id_keys.__getitem__)
            self._id_rank = {doc_id: rank for rank, doc_id in enumerate(ranked)}
        ranks = self._id_rank
        id_rank = np.fromiter((ranks[e.doc_id] for e in entries), dtype=np.int64, count=len(entries))
        if self.sort_key == "id":
            order = np.argsort(id_rank, kind="stable")
        else:  # as queue_order.uncertainty_key: shown margin, more unreviewed first, then id
            # Python's round, as the key bisection uses (numpy's can differ in the last place)
            margin = np.fromiter((round(e.margin, 2) for e in entries), dtype=np.float64, count=len(entries))
            open_mentions = np.fromiter(
                (e.mentions - e.reviewed for e in entries), dtype=np.int64, count=len(entries)
            )
            order = np.lexsort((id_rank, -open_mentions, margin))
        return [entries[i] for i in order.tolist()]

    def accepts(self, entry: QueueEntry) -> bool:
        """Status, split and mention type combined."""
        if self.status != ALL and entry.status != self.status:
            return False
        if self.split == ALL and self.type == ALL:
            return True
        facets = self.facets.get(entry.doc_id, _NO_FACETS)
        if self.split != ALL and (facets.split or NO_SPLIT) != self.split:
            return False
        return self.type == ALL or self.type in facets.types

    def _filtered(self, entries: list[QueueEntry]) -> list[QueueEntry]:
        if self.status == self.split == self.type == ALL:
            return list(entries)
        return [entry for entry in entries if self.accepts(entry)]

    def set_entries(self, entries: list[QueueEntry], facets: dict[str, DocumentFacets] | None = None) -> None:
        self.beginResetModel()
        if facets is not None:
            self.facets = dict(facets)
        self.entries = self._ordered(entries)
        self.rows = {entry.doc_id: row for row, entry in enumerate(self.entries)}
        self.totals = self._counts(self.entries)
        self.shown = self._filtered(self.entries)
        self.shown_rows = {entry.doc_id: row for row, entry in enumerate(self.shown)}
        self.endResetModel()

    def set_sort(self, key: str) -> None:
        if key not in SORTS:
            raise ValueError(f"unknown queue order {key!r}; use one of {SORTS}")
        self.sort_key = key
        self._relayout(self._ordered(self.entries))

    def set_filters(self, *, status: str | None = None, split: str | None = None, type: str | None = None):
        self.status = self.status if status is None else status
        self.split = self.split if split is None else split
        self.type = self.type if type is None else type
        self._relayout(self.entries)

    def _relayout(self, ordered: list[QueueEntry]) -> None:
        """Show `ordered` through the filters as a layout change: persistent indexes (the current row,
        the selection) follow their document, or become invalid when it is filtered out."""
        if ordered is not self.entries:
            self.entries = ordered
            self.rows = {entry.doc_id: row for row, entry in enumerate(ordered)}
        shown = self._filtered(ordered)
        if len(shown) == len(self.shown) and all(a is b for a, b in zip(shown, self.shown, strict=True)):
            return
        self.layoutAboutToBeChanged.emit()
        old = self.persistentIndexList()
        ids = [self.shown[index.row()].doc_id for index in old]
        self.shown = shown
        self.shown_rows = {entry.doc_id: row for row, entry in enumerate(shown)}
        self.changePersistentIndexList(
            old,
            [
                self.index(self.shown_rows[doc_id], index.column())
                if doc_id in self.shown_rows
                else QModelIndex()
                for doc_id, index in zip(ids, old, strict=True)
            ],
        )
        self.layoutChanged.emit()

    def update_entries(
        self, entries: list[QueueEntry], facets: dict[str, DocumentFacets] | None = None
    ) -> bool:
        """Replace these documents' rows in place; False (nothing changed) when one is not listed yet.
        A row that keeps its place and its visibility is repainted alone (no layout change); one that
        moves (uncertainty order) is taken out and put back by bisection, not by sorting all rows."""
        if any(entry.doc_id not in self.rows for entry in entries):
            return False
        self.facets.update(facets or {})
        before = self._counts([self.entries[self.rows[entry.doc_id]] for entry in entries])
        self.totals = tuple(
            t - b + a for t, b, a in zip(self.totals, before, self._counts(entries), strict=True)
        )
        for entry in entries:
            self.entries[self.rows[entry.doc_id]] = entry
        moved = self.sort_key != "id" and self._reordered({entry.doc_id for entry in entries})
        if moved is False and all((e.doc_id in self.shown_rows) == self.accepts(e) for e in entries):
            for entry in entries:
                row = self.shown_rows.get(entry.doc_id)
                if row is not None:
                    self.shown[row] = entry
                    self.dataChanged.emit(self.index(row, 0), self.index(row, len(_COLUMNS) - 1))
            return True
        self.shown = [self.entries[self.rows[e.doc_id]] if e.doc_id in self.rows else e for e in self.shown]
        self._relayout(moved or self.entries)
        for entry in entries:  # repainted even where the shown order stayed as it was
            row = self.shown_rows.get(entry.doc_id)
            if row is not None:
                self.dataChanged.emit(self.index(row, 0), self.index(row, len(_COLUMNS) - 1))
        return True

    def _reordered(self, changed: set[str]) -> list[QueueEntry] | bool:
        """The rows in order after `changed` took new values: False when every one keeps its place."""
        ordered = [entry for entry in self.entries if entry.doc_id not in changed]
        for doc_id in changed:
            entry = self.entries[self.rows[doc_id]]
            ordered.insert(bisect.bisect_left(ordered, self._key(entry), key=self._key), entry)
        if all(a is b for a, b in zip(ordered, self.entries, strict=True)):
            return False
        return ordered

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.shown)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return len(_COLUMNS)

    def headerData(self, section: int, orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return _COLUMNS[section]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole:
            return _HEADER_TIPS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        entry = self.shown[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return entry.doc_id
            if column == 1:
                return entry.title
            if column == 2:
                return f"{entry.reviewed}/{entry.mentions}"
            if column == 3:
                return "" if entry.margin >= 1.0 else f"{entry.margin:.2f}"
        if role == Qt.ItemDataRole.ToolTipRole:
            pending = f"; {entry.unsuggested} without suggestions yet" if entry.unsuggested else ""
            facets = self.facets.get(entry.doc_id)
            split = f"; split {facets.split or NO_SPLIT}" if facets is not None else ""
            return (
                f"{entry.doc_id}: {entry.title}\n{entry.status}, {entry.reviewed} of {entry.mentions} "
                f"reviewed{pending}{split}"
            )
        if role == Qt.ItemDataRole.ForegroundRole and column == 2:
            return QColor(_STATUS_COLOURS[entry.status])
        return None


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
        self.view = QTableView()
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

    def _sort(self, key: str) -> None:
        self._settle(lambda: self.model.set_sort(key))

    def _filter(self, **which: str) -> None:
        self._settle(lambda: self.model.set_filters(**which))

    def _settle(self, change) -> None:
        """Apply a filter or order change quietly, then keep the current document when it is still
        shown; when the filter hid it, open the row Qt moved the selection to (or the first), once."""
        previous = self.current_id()
        self._quiet = True
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
        self.viewChanged.emit()

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

    def take_changed(self) -> set[str]:
        """The documents whose rows were updated since the last call (a background re-read of the whole
        queue started before them must not undo them)."""
        changed, self._changed = self._changed, set()
        return changed

    def _summarise(self) -> None:
        total, reviewed, done = self.model.totals
        self.overall.setMaximum(max(total, 1))
        self.overall.setValue(reviewed)
        self.summary.setText(f"{done} of {len(self.model.entries)} documents done")

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
        return index.siblingAtColumn(0).data() if index.isValid() else None

    def select(self, doc_id: str, *, emit: bool = True) -> bool:
        if self.current_id() == doc_id:  # already there: moving the selection costs ~0.1 s at 20,000 rows
            return True
        row = self.model.shown_rows.get(doc_id)
        if row is None:  # not in the queue, or filtered out
            return False
        index = self.model.index(row, 0)
        quiet, self._quiet = self._quiet, not emit
        self.view.selectionModel().setCurrentIndex(
            index,
            QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
        )
        self.view.scrollTo(index)
        self._quiet = quiet
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
        if not self._quiet and current.isValid():
            self.documentActivated.emit(current.siblingAtColumn(0).data())
