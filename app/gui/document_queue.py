"""The document queue: which abstracts are left, how far each is, and the most uncertain first."""

from __future__ import annotations

from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
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

from core.store.project import QueueEntry

FILTERS = ("all", "unreviewed", "in progress", "done")
SORTS = ("id", "uncertainty")
_COLUMNS = ("Document", "Title", "Rev.", "Margin")
_HEADER_TIPS = (
    "document id (PMID)",
    "title (hover a row for all of it)",
    "mentions reviewed / mentions",
    "smallest top-two score margin among unreviewed mentions: low means uncertain",
)
_STATUS_COLOURS = {"done": "#2e8b3a", "in progress": "#d9780f", "unreviewed": "#707070"}

_Index = QModelIndex | QPersistentModelIndex


class QueueModel(QAbstractTableModel):
    SORT_ROLE = Qt.ItemDataRole.UserRole + 1

    def __init__(self, parent=None):
        super().__init__(parent)
        self.entries: list[QueueEntry] = []
        self.rows: dict[str, int] = {}  # doc id -> row

    def set_entries(self, entries: list[QueueEntry]) -> None:
        self.beginResetModel()
        self.entries = list(entries)
        self.rows = {entry.doc_id: row for row, entry in enumerate(self.entries)}
        self.endResetModel()

    def update_entries(self, entries: list[QueueEntry]) -> bool:
        """Replace these documents' rows in place; False (nothing changed) when one is not listed yet."""
        if any(entry.doc_id not in self.rows for entry in entries):
            return False
        for entry in entries:
            row = self.rows[entry.doc_id]
            self.entries[row] = entry
            self.dataChanged.emit(self.index(row, 0), self.index(row, len(_COLUMNS) - 1))
        return True

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.entries)

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
        entry = self.entries[index.row()]
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
        if role == self.SORT_ROLE:
            return (entry.margin, entry.doc_id) if column == 3 else entry.doc_id
        if role == Qt.ItemDataRole.ToolTipRole:
            pending = f"; {entry.unsuggested} without suggestions yet" if entry.unsuggested else ""
            return f"{entry.doc_id}: {entry.title}\n{entry.status}, {entry.reviewed} of {entry.mentions} reviewed{pending}"
        if role == Qt.ItemDataRole.ForegroundRole and column == 2:
            return QColor(_STATUS_COLOURS[entry.status])
        return None


class QueueFilter(QSortFilterProxyModel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.status = "all"
        self.setSortRole(QueueModel.SORT_ROLE)

    def set_status(self, status: str) -> None:
        self.status = status
        self.invalidateFilter()  # deprecated in Qt 6.12 for begin/endFilterChange; kept for 6.6+

    def filterAcceptsRow(self, source_row: int, source_parent: _Index) -> bool:
        if self.status == "all":
            return True
        model = self.sourceModel()
        assert isinstance(model, QueueModel)
        return model.entries[source_row].status == self.status

    def lessThan(self, left: _Index, right: _Index) -> bool:
        return self.sourceModel().data(left, self.sortRole()) < self.sourceModel().data(
            right, self.sortRole()
        )


class DocumentQueue(QWidget):
    """Filter and sort on top, the table, and the overall progress below."""

    documentActivated = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = QueueModel(self)
        self.proxy = QueueFilter(self)
        self.proxy.setSourceModel(self.model)
        self.filter_box = QComboBox()
        self.filter_box.addItems(FILTERS)
        self.sort_box = QComboBox()
        self.sort_box.addItems(["by id", "by uncertainty"])
        self.view = QTableView()
        self.view.setModel(self.proxy)
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
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.overall = QProgressBar()
        self.overall.setFormat("%v of %m mentions reviewed")
        self.summary = QLabel()
        self.summary.setObjectName("queueSummary")

        controls = QHBoxLayout()
        controls.addWidget(QLabel("Show"))
        controls.addWidget(self.filter_box, 1)
        controls.addWidget(QLabel("Sort"))
        controls.addWidget(self.sort_box, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        title = QLabel("Documents")
        title.setObjectName("paneTitle")
        layout.addWidget(title)
        layout.addLayout(controls)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.overall)
        layout.addWidget(self.summary)

        self.filter_box.currentTextChanged.connect(self.proxy.set_status)
        self.sort_box.currentIndexChanged.connect(self._sort)
        self.view.selectionModel().currentRowChanged.connect(self._row_changed)
        self._sort(0)
        self._quiet = False

    def _sort(self, which: int) -> None:
        self.proxy.sort(3 if which == 1 else 0, Qt.SortOrder.AscendingOrder)

    def set_sort(self, key: str) -> None:
        self.sort_box.setCurrentIndex(SORTS.index(key))

    def set_filter(self, status: str) -> None:
        self.filter_box.setCurrentText(status)

    def set_entries(self, entries: list[QueueEntry]) -> None:
        """Refresh counts without moving the curator: the current document stays selected."""
        current = self.current_id()
        self._quiet = True
        self.model.set_entries(entries)
        if current:
            self.select(current, emit=False)
        self._quiet = False
        self._summarise()

    def update_entries(self, entries: list[QueueEntry]) -> bool:
        """Refresh the rows of a few documents (what one decision changes); False when one is new to the
        queue (the caller then reloads it whole)."""
        current = self.current_id()
        self._quiet = True
        updated = self.model.update_entries(entries)
        if updated and current:
            self.select(current, emit=False)
        self._quiet = False
        if updated:
            self._summarise()
        return updated

    def _summarise(self) -> None:
        entries = self.model.entries
        total = sum(e.mentions for e in entries)
        reviewed = sum(e.reviewed for e in entries)
        done = sum(e.status == "done" for e in entries)
        self.overall.setMaximum(max(total, 1))
        self.overall.setValue(reviewed)
        self.summary.setText(f"{done} of {len(entries)} documents done")

    def entry(self, doc_id: str) -> QueueEntry | None:
        row = self.model.rows.get(doc_id)
        return None if row is None else self.model.entries[row]

    def visible_ids(self) -> list[str]:
        return [self.proxy.index(row, 0).data() for row in range(self.proxy.rowCount())]

    def visible_row(self, doc_id: str | None) -> int | None:
        """Where a document is in the visible order (None when it is not shown)."""
        row = self.model.rows.get(doc_id) if doc_id is not None else None
        index = self.proxy.mapFromSource(self.model.index(row, 0)) if row is not None else QModelIndex()
        return index.row() if index.isValid() else None

    def visible_from(self, doc_id: str | None, count: int) -> list[str]:
        """Up to `count` visible ids from `doc_id` on (from the top when it is not shown): what comes next
        without reading all 20,000 rows."""
        start = self.visible_row(doc_id) or 0
        end = min(start + count, self.proxy.rowCount())
        return [self.proxy.index(row, 0).data() for row in range(start, end)]

    def current_id(self) -> str | None:
        index = self.view.currentIndex()
        return index.siblingAtColumn(0).data() if index.isValid() else None

    def select(self, doc_id: str, *, emit: bool = True) -> bool:
        if self.current_id() == doc_id:  # already there: moving the selection costs ~0.1 s at 20,000 rows
            return True
        row = self.model.rows.get(doc_id)
        index = self.proxy.mapFromSource(self.model.index(row, 0)) if row is not None else QModelIndex()
        if not index.isValid():  # not in the queue, or filtered out
            return False
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
        if not self.proxy.rowCount():
            return None
        row = self.visible_row(self.current_id())
        position = row + offset if row is not None else 0
        if not 0 <= position < self.proxy.rowCount():
            return None
        return self.proxy.index(position, 0).data()

    def _row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not self._quiet and current.isValid():
            self.documentActivated.emit(current.siblingAtColumn(0).data())
