"""Ranked candidates for the selected mention, retriever and final scores side by side.

Every concept the mention is linked to is highlighted (several for a composite mention), and the check
box in the first column marks candidates for one link naming several concepts (Ctrl+1-9 does the same).
The last column is the score the list is ordered by, named for what produced it (the ranker's calibrated
probability, or the cross-encoder's score), so a curator can see why a row stands where it does.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QAbstractTableModel, QEvent, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QTableView, QVBoxLayout, QWidget

from app.gui.elide import DistinguishingElide
from app.gui.states import fill, muted
from core.documents import Candidate
from core.kb.concept import Concept

COLUMNS = ("#", "ID", "Preferred name", "Matched synonym", "Tree / type", "Retriever", "Final")
HEADER_TIPS = {
    1: "concept id",
    2: "the concept's preferred name",
    3: "the synonym the retriever matched, when it is not the preferred name",
    4: "MeSH tree numbers or UMLS semantic types",
    5: "retriever score (ResCNN, cosine); — : not among the retriever's candidates (added by character "
    "n-gram TF-IDF or by what curators linked this string to before)",
}
FINAL_COLUMN = 6
RETRIEVER_COLUMN = 5
OPTIONAL_COLUMNS = (3, 4)  # hidden while no shown candidate has anything in them
NAME_COLUMNS = (2, 3)  # elided keeping the words that tell the rows apart
ORDER_SOURCES = {
    # what the final score column holds, by the model that produced the stored order
    "ranker": (
        "P(right) ▼",
        "the ranker's calibrated probability that this concept is right; the list is "
        "ordered by it, and bulk accept thresholds it",
    ),
    "cross-encoder": ("Cross-enc. ▼", "the cross-encoder's score; the list is ordered by it"),
    "retriever": ("Final", "no ranker or cross-encoder in force: the list is ordered by the retriever score"),
}
NOT_FROM_RETRIEVER = "—"
# Columns that take a fixed width from their content sample; the name stretches, text columns elide.
_SAMPLES = {0: "☐ ✓99", 1: "D0000000", RETRIEVER_COLUMN: "Retriever", FINAL_COLUMN: "Cross-enc. ▼"}
_TEXT_WIDTHS = {3: 0.6, 4: 0.4}  # synonym and tree / type: their shares of what the name leaves
USEFUL_WIDTH = 140  # px: below this a synonym or tree column is hidden while the pane is this narrow
TEXT_MINIMUM = 56  # px: a synonym or tree column narrower than this shows nothing useful
NAME_SHARE = 0.6  # the preferred name's room at least, of what the fixed columns leave (if it needs it)
_Index = QModelIndex | QPersistentModelIndex


def order_source(ranker_active: bool, reranker_active: bool) -> str:
    """Which model's score orders the stored suggestions: the ranker when one is in force (its probability
    is what the store keeps as the final score), else the cross-encoder, else the retriever alone."""
    if ranker_active:
        return "ranker"
    return "cross-encoder" if reranker_active else "retriever"


@dataclass(frozen=True)
class CandidateListing:
    """What the table shows for one mention: its candidates in order, their concepts, the concepts it is
    linked to now, those ticked for one link, and the model whose score orders the list."""

    candidates: list[Candidate]
    concepts: dict[str, Concept]
    linked: list[str]
    source: str
    marked: list[str] | None = None


class CandidateModel(QAbstractTableModel):
    markToggled = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.candidates: list[Candidate] = []
        self.concepts: dict[str, Concept] = {}
        self.linked: set[str] = set()
        self.marked: set[str] = set()
        self.source = "retriever"

    def set_candidates(self, listing: CandidateListing) -> None:
        self.beginResetModel()
        self.candidates = listing.candidates
        self.concepts = listing.concepts
        self.linked = set(listing.linked)
        self.marked = set(listing.marked or [])
        self.source = listing.source
        self.endResetModel()
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, FINAL_COLUMN, FINAL_COLUMN)

    def column_is_empty(self, column: int) -> bool:
        return not any(self.text(row, column) for row in range(len(self.candidates)))

    def text(self, row: int, column: int) -> str:
        """The full text of a cell (the table may elide it; the tooltip shows all of it)."""
        candidate = self.candidates[row]
        concept = self.concepts.get(candidate.concept_id)
        if column == 0:
            return f"{'✓' if candidate.concept_id in self.linked else ''}{row + 1}"
        if column == 1:
            return candidate.concept_id
        if column == 2:
            return candidate.name or (concept.preferred_name if concept else "")
        if column == 3:
            return "" if candidate.matched_name == candidate.name else candidate.matched_name
        if column == 4:
            if concept is None:
                return ""
            return ", ".join(concept.tree_numbers[:3] or concept.semantic_types[:3])
        if column == RETRIEVER_COLUMN:
            if candidate.retriever_score == 0.0 and candidate.reranker_score is not None:
                return NOT_FROM_RETRIEVER
            return f"{candidate.retriever_score:.3f}"
        if column == FINAL_COLUMN:
            return "" if candidate.reranker_score is None else f"{candidate.reranker_score:.3f}"
        return ""

    def set_marked(self, marked: list[str]) -> None:
        self.marked = set(marked)
        if self.candidates:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self.candidates) - 1, 0))

    def flags(self, index: _Index) -> Qt.ItemFlag:
        flags = super().flags(index)
        return flags | Qt.ItemFlag.ItemIsUserCheckable if index.isValid() and index.column() == 0 else flags

    def setData(self, index: _Index, value, role: int = Qt.ItemDataRole.EditRole) -> bool:
        """A click on a check box asks the window to (un)mark that candidate."""
        if index.isValid() and index.column() == 0 and role == Qt.ItemDataRole.CheckStateRole:
            self.markToggled.emit(index.row())
            return True
        return False

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.candidates)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return len(COLUMNS)

    def headerData(self, section: int, orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal:
            return None
        if section == FINAL_COLUMN and role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            title, tip = ORDER_SOURCES[self.source]
            return title if role == Qt.ItemDataRole.DisplayRole else tip
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return HEADER_TIPS.get(section, COLUMNS[section])
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        candidate = self.candidates[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.ToolTipRole:
            # Long names are elided in the table; the tooltip has the whole text and the key to press.
            full = self.text(index.row(), column) if column in (1, 2, 3, 4) else ""
            if column == RETRIEVER_COLUMN and self.text(index.row(), column) == NOT_FROM_RETRIEVER:
                full = HEADER_TIPS[RETRIEVER_COLUMN].split("; ", 1)[1]
            n = index.row() + 1
            key = (
                f"press {n} to accept, Ctrl+{n} to mark it for a link to several concepts"
                if n <= 9
                else "double-click to accept, tick to mark"
            )
            if candidate.concept_id in self.linked:
                key = f"linked to this mention\n{key}"
            return f"{full}\n{key}" if full else key
        if role == Qt.ItemDataRole.CheckStateRole and column == 0:
            marked = candidate.concept_id in self.marked
            return Qt.CheckState.Checked if marked else Qt.CheckState.Unchecked
        if role == Qt.ItemDataRole.DisplayRole:
            return self.text(index.row(), column)
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (0, RETRIEVER_COLUMN, FINAL_COLUMN):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and column in (3, 4, RETRIEVER_COLUMN):
            return QColor(muted())
        if role == Qt.ItemDataRole.FontRole and (
            candidate.concept_id in self.linked or column == FINAL_COLUMN
        ):
            font = QFont()
            font.setBold(True)  # the chosen row, and the score the order follows
            return font
        if role == Qt.ItemDataRole.BackgroundRole and candidate.concept_id in self.linked:
            return fill("accepted")
        if role == Qt.ItemDataRole.BackgroundRole and candidate.concept_id in self.marked:
            return fill("ambiguous")
        return None


class CandidatePanel(QWidget):
    candidateActivated = Signal(int)
    candidateSelected = Signal(int)
    markToggled = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = CandidateModel(self)
        self.view = QTableView()
        self.view.setModel(self.model)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.view.verticalHeader().hide()
        self.view.setAlternatingRowColors(True)
        self.view.setWordWrap(False)
        # Ids differ at their ends ("OMIM:613…"): keep both ends in view. Names keep the words that tell
        # them from the other rows' ("Complement Factor H / I / D Deficiency", app/gui/elide.py).
        self.view.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.names_elide = DistinguishingElide(self.view)
        for column in NAME_COLUMNS:
            self.view.setItemDelegateForColumn(column, self.names_elide)
        self.view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        header = self.view.horizontalHeader()
        header.setMinimumSectionSize(20)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)  # every column can be dragged wider
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        header.sectionResized.connect(self._on_section_resized)
        self._resized_by_user: set[int] = set()
        self._squeezed: set[int] = set()  # text columns hidden for want of room (shown again when it grows)
        self._fitting = False
        self._fit_columns()
        # The viewport narrows when the scroll bar appears after the rows are in: fit again then, or
        # the name (the stretching column) alone pays for the scroll bar.
        self.view.viewport().installEventFilter(self)
        self.heading = QLabel("Candidates")
        self.heading.setObjectName("paneTitle")
        self.mention_label = QLabel("Select a mention (Tab / J / K)")
        self.mention_label.setObjectName("mentionLabel")
        self.mention_label.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.heading)
        layout.addWidget(self.mention_label)
        layout.addWidget(self.view, 1)
        self.model.markToggled.connect(self.markToggled.emit)
        self.view.doubleClicked.connect(lambda index: self.candidateActivated.emit(index.row()))
        self.view.selectionModel().currentRowChanged.connect(
            lambda current, _previous: (
                self.candidateSelected.emit(current.row()) if current.isValid() else None
            )
        )

    def _fit_columns(self) -> None:
        """Numeric and id columns as wide as their longest value; the preferred name first takes what its
        longest shown name needs (up to `NAME_SHARE` of the room left, or all of the room the other text
        columns' headings do not need), and synonym and tree / type share the rest: so the name is read
        first and nothing scrolls sideways. (Fixed shares of 30 % and 18 % left a MeSH project's names 3-4
        characters at the default width, issue 31.)"""
        header = self.view.horizontalHeader()
        bold = QFont(self.view.font())
        bold.setBold(True)  # headers and the chosen row are bold
        metrics = QFontMetrics(bold)
        padding = 14
        self._fitting = True
        try:
            fixed = 0
            for column, sample in _SAMPLES.items():
                width = max(metrics.horizontalAdvance(sample), metrics.horizontalAdvance(COLUMNS[column]))
                if column == 1:  # ids: as wide as the longest shown, within reason
                    ids = [c.concept_id for c in self.model.candidates]
                    width = max([width, *(min(metrics.horizontalAdvance(i), 160) for i in ids)])
                if column not in self._resized_by_user:
                    header.resizeSection(column, width + padding)
                fixed += header.sectionSize(column) if not self.view.isColumnHidden(column) else 0
            available = max(0, self.view.viewport().width() - fixed)
            for column in self._squeezed:  # room may have grown: offer them again
                self.view.setColumnHidden(column, self.model.column_is_empty(column))
            self._squeezed.clear()
            shown = [c for c in _TEXT_WIDTHS if not self.view.isColumnHidden(c)]
            # narrow, a text column's heading is elided (its tooltip says it): the name comes first
            minimum = {c: min(TEXT_MINIMUM, metrics.horizontalAdvance(COLUMNS[c]) + padding) for c in shown}
            names = [self.model.text(row, 2) for row in range(len(self.model.candidates))]
            name_need = max((metrics.horizontalAdvance(n) for n in names), default=0) + padding
            name = min(name_need, max(int(available * NAME_SHARE), available - sum(minimum.values())))
            rest = max(0, available - name)
            # Too narrow to read, tree / type then the synonym give their room to the name (the concept
            # pane shows both for the highlighted row): "C…10" told the curator nothing.
            for column in (4, 3):
                if column in shown and column not in self._resized_by_user and rest < USEFUL_WIDTH * len(shown):
                    self.view.setColumnHidden(column, True)
                    self._squeezed.add(column)
                    shown.remove(column)
            total_share = sum(_TEXT_WIDTHS[c] for c in shown) or 1.0
            for column in shown:
                if column in self._resized_by_user:
                    continue
                # never wider than the name: room beyond that is the name's (the stretching column)
                width = min(int(rest * _TEXT_WIDTHS[column] / total_share), name)
                header.resizeSection(column, max(minimum[column], width))
        finally:
            self._fitting = False

    def _on_section_resized(self, column: int, old: int, new: int) -> None:
        """A width the curator dragged is kept: fitting to the window leaves that column alone. A column
        hidden or shown (a width from or to 0, which Qt may report later) is not a drag."""
        if not self._fitting and column != 2 and old and new:
            self._resized_by_user.add(column)

    def _hide_empty_columns(self) -> None:
        """MEDIC has no tree numbers, and most rows match the preferred name: an empty column is room lost."""
        self._squeezed.clear()
        self._fitting = True  # hiding or showing a column resizes it: that is not the curator's drag
        try:
            for column in OPTIONAL_COLUMNS:
                self.view.setColumnHidden(column, self.model.column_is_empty(column))
            self.view.setColumnHidden(FINAL_COLUMN, self.model.column_is_empty(FINAL_COLUMN))
        finally:
            self._fitting = False

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_columns()

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Resize and watched is self.view.viewport() and not self._fitting:
            self._fit_columns()
        return super().eventFilter(watched, event)

    def show_candidates(
        self,
        mention_html: str,
        candidates: list[Candidate],
        concepts: dict[str, Concept],
        linked: list[str],
        source: str,
        marked: list[str] | None = None,
    ) -> None:
        """`linked`: the concepts the mention is linked to now; `marked`: those ticked for one link;
        `source`: the model whose score orders the list (see `order_source`)."""
        self.mention_label.setText(mention_html)
        self.names_elide.forget()
        self.model.set_candidates(CandidateListing(candidates, concepts, linked, source, marked))
        self._hide_empty_columns()
        self._fit_columns()
        if candidates:
            # the row the mention is linked to (candidate 3 picked: the concept pane shows candidate 3)
            rows = [i for i, c in enumerate(candidates) if c.concept_id in self.model.linked]
            self.view.selectRow(rows[0] if rows else 0)

    def set_marked(self, marked: list[str]) -> None:
        self.model.set_marked(marked)

    def clear(self, message: str) -> None:
        self.mention_label.setText(message)
        self.model.set_candidates(CandidateListing([], {}, [], self.model.source))
