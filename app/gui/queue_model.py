"""The queue's rows as a Qt table model that filters and sorts itself (app/gui/document_queue.py shows it)."""

from __future__ import annotations

import bisect

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont

from app.gui.queue_order import SORTS, natural_id_key, uncertainty_key
from core.store.desk_queries import DocumentFacets
from core.store.project import QueueEntry

ALL = "all"
MARKED = "flagged or noted"  # documents with a flag or a note, on themselves or on a mention
FILTERS = (ALL, "unreviewed", "in progress", "done", MARKED)
NO_SPLIT = "none"
NO_TYPE = "(untyped)"
_COLUMNS = ("Document", "Title", "Rev.", "Margin")
_HEADER_TIPS = (
    "document id (PMID)",
    "title (hover a row for all of it)",
    "mentions reviewed / mentions",
    "smallest top-two score margin among unreviewed mentions: low means uncertain",
)
DONE_SIGN = "\u2714"  # ✔, as the desk's marks strip shows it
_STATUS_COLOURS = {"done": "#2e8b3a", "in progress": "#d9780f", "unreviewed": "#707070"}

_Index = QModelIndex | QPersistentModelIndex
_NO_FACETS = DocumentFacets("", frozenset())


class QueueModel(QAbstractTableModel):
    """The queue's rows: `entries` holds every document in display order (the model sorts itself, see
    app/gui/queue_order.py), `shown` the ones the filters let through, which are the table's rows.

    No QSortFilterProxyModel: each order or filter change made it call `filterAcceptsRow` in Python for
    every row, and a sort made it filter every row again (a sort took 117 ms p95 at 20,000 documents in
    `curalink bench desk`). Here a filter
    is one list comprehension and a change of order or filter one layout change (the selection follows
    its document).

    The open document is `held`: seen by the order and the filters as it was when the curator opened it
    (or last changed the order or a filter), and always shown. A decision that makes it "done" or no longer
    "unreviewed" or least uncertain therefore neither hides it nor moves it under the curator's fingers;
    the next and previous documents are those around it in the order on screen (issue 31)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.entries: list[QueueEntry] = []
        self.rows: dict[str, int] = {}  # doc id -> position in entries
        self.shown: list[QueueEntry] = []
        self.shown_rows: dict[str, int] = {}  # doc id -> table row
        self.facets: dict[str, DocumentFacets] = {}
        self.marked: set[str] = set()  # documents with a note or a flag (the MARKED filter)
        self.sort_key = "id"
        self.status = ALL
        self.split = ALL
        self.type = ALL
        self._id_keys: dict[str, tuple] = {}
        self._id_rank: dict[str, int] = {}  # doc id -> place in the id order
        # Mentions, reviewed mentions and finished documents over all rows, kept up to date row by row:
        # summing 20,000 rows after every decision was a quarter of a key press's time in a profile.
        self.totals = (0, 0, 0)
        self.shown_totals = (0, 0, 0)  # the same over the rows the filters let through
        self.held: QueueEntry | None = None  # the open document, as it was when the curator opened it

    def filtered(self) -> bool:
        return not self.status == self.split == self.type == ALL

    @staticmethod
    def _counts(entries: list[QueueEntry]) -> tuple[int, int, int]:
        return (
            sum(e.mentions for e in entries),
            sum(e.reviewed for e in entries),
            sum(e.status == "done" for e in entries),
        )

    def _basis(self, entry: QueueEntry) -> QueueEntry:
        """What the order sees of a row: the open document as it was when held, any other as it is."""
        held = self.held
        return held if held is not None and entry.doc_id == held.doc_id else entry

    def _key(self, entry: QueueEntry):
        entry = self._basis(entry)
        id_key = self._id_keys.get(entry.doc_id)
        if id_key is None:
            id_key = self._id_keys[entry.doc_id] = natural_id_key(entry.doc_id)
        return id_key if self.sort_key == "id" else uncertainty_key(entry, id_key)

    def _ordered(self, entries: list[QueueEntry]) -> list[QueueEntry]:
        """All rows in the current order: ids ranked once, then one numpy lexsort (a Python key per row
        made the sort most of a re-sort's time in a profile)."""
        if not entries:
            return []
        if any(entry.doc_id not in self._id_rank for entry in entries):  # new documents: rank ids again
            for entry in entries:
                if entry.doc_id not in self._id_keys:
                    self._id_keys[entry.doc_id] = natural_id_key(entry.doc_id)
            ranked = sorted(self._id_keys, key=self._id_keys.__getitem__)
            self._id_rank = {doc_id: rank for rank, doc_id in enumerate(ranked)}
        ranks = self._id_rank
        basis = entries if self.held is None else [self._basis(e) for e in entries]
        id_rank = np.fromiter((ranks[e.doc_id] for e in entries), dtype=np.int64, count=len(entries))
        if self.sort_key == "id":
            order = np.argsort(id_rank, kind="stable")
        else:  # as queue_order.uncertainty_key: shown margin, more unreviewed first, then id
            # Python's round, as the key bisection uses (numpy's can differ in the last place)
            margin = np.fromiter((round(e.margin, 2) for e in basis), dtype=np.float64, count=len(entries))
            open_mentions = np.fromiter(
                (e.mentions - e.reviewed for e in basis), dtype=np.int64, count=len(entries)
            )
            order = np.lexsort((id_rank, -open_mentions, margin))
        return [entries[i] for i in order.tolist()]

    def accepts(self, entry: QueueEntry) -> bool:
        """Whether the row is shown: the open document always, any other when it `passes` the filters."""
        held = self.held
        return (held is not None and entry.doc_id == held.doc_id) or self.passes(entry)

    def passes(self, entry: QueueEntry) -> bool:
        """Status, split and mention type combined."""
        if self.status == MARKED:
            if entry.doc_id not in self.marked:
                return False
        elif self.status != ALL and entry.status != self.status:
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
        self.shown_totals = self._counts(self.shown)
        self.endResetModel()

    def hold(self, doc_id: str | None) -> None:
        """Hold `doc_id` (the document just opened; None: no document is open) as it is now; the one held
        before takes its own place in the order and the filters again."""
        before = self.held.doc_id if self.held is not None else None
        row = self.rows.get(doc_id) if doc_id is not None else None
        self.held = self.entries[row] if row is not None else None
        changed = {d for d in (before, doc_id) if d is not None and d in self.rows}
        if not changed:
            return
        moved = self.sort_key != "id" and self._reordered(changed)
        entries = [self.entries[self.rows[d]] for d in changed]
        if moved is False and all((e.doc_id in self.shown_rows) == self.accepts(e) for e in entries):
            return
        self._relayout(moved or self.entries)

    def set_sort(self, key: str) -> None:
        if key not in SORTS:
            raise ValueError(f"unknown queue order {key!r}; use one of {SORTS}")
        self.sort_key = key
        self._relayout(self._ordered(self.entries))

    def set_marked(self, marked: set[str], documents: set[str] | None = None) -> None:
        """The documents with a note or flag (all of them, or what changed among `documents`); shown
        again through the filters when the MARKED filter is on."""
        if documents is None:
            self.marked = set(marked)
        else:
            self.marked = (self.marked - documents) | (set(marked) & documents)
        if self.status == MARKED:
            self._relayout(self.entries)

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
        self.shown_totals = self._counts(shown)
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
        held = self.held.doc_id if self.held is not None else None
        moving = {entry.doc_id for entry in entries if entry.doc_id != held}  # the open one stays put
        moved = self.sort_key != "id" and bool(moving) and self._reordered(moving)
        if moved is False and all((e.doc_id in self.shown_rows) == self.accepts(e) for e in entries):
            for entry in entries:
                row = self.shown_rows.get(entry.doc_id)
                if row is not None:
                    self.shown_totals = tuple(
                        t - b + a
                        for t, b, a in zip(
                            self.shown_totals,
                            self._counts([self.shown[row]]),
                            self._counts([entry]),
                            strict=True,
                        )
                    )
                    self.shown[row] = entry
                    self.dataChanged.emit(self.index(row, 0), self.index(row, len(_COLUMNS) - 1))
            return True
        self.shown = [self.entries[self.rows[e.doc_id]] if e.doc_id in self.rows else e for e in self.shown]
        self._relayout(moved or self.entries)
        self.shown_totals = self._counts(self.shown)
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
                return f"{DONE_SIGN} {entry.doc_id}" if entry.marked_done else entry.doc_id
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
            marked = f"\n{DONE_SIGN} marked done by a curator" if entry.marked_done else ""
            kept = "\nshown while it is open: the filters hide it" if self._kept_for_open(entry) else ""
            return (
                f"{entry.doc_id}: {entry.title}\n{entry.status}, {entry.reviewed} of {entry.mentions} "
                f"reviewed{pending}{split}{marked}{kept}"
            )
        if role == Qt.ItemDataRole.FontRole and self._kept_for_open(entry):
            font = QFont()
            font.setItalic(True)
            return font
        if role == Qt.ItemDataRole.ForegroundRole and column == 2:
            return QColor(_STATUS_COLOURS[entry.status])
        if role == Qt.ItemDataRole.ForegroundRole and column == 0 and entry.marked_done:
            return QColor(_STATUS_COLOURS["done"])
        return None

    def _kept_for_open(self, entry: QueueEntry) -> bool:
        """The open document's row, shown only because it is open (italic, and said in its tooltip)."""
        return self.held is not None and entry.doc_id == self.held.doc_id and not self.passes(entry)
