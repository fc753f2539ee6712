"""Ranked candidates for the selected mention, retriever and reranker scores side by side.

Every concept the mention is linked to is highlighted (several for a composite mention), and the check
box in the first column marks candidates for one link naming several concepts (Ctrl+1-9 does the same).
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QTableView, QVBoxLayout, QWidget

from app.gui.states import fill, muted
from core.documents import Candidate
from core.kb.concept import Concept

COLUMNS = ("#", "ID", "Preferred name", "Synonym", "Tree/type", "Retr.", "Rerank")
HEADER_TIPS = {
    3: "the synonym the retriever matched, when it is not the preferred name",
    4: "MeSH tree numbers or UMLS semantic types",
    5: "retriever score (ResCNN, cosine)",
    6: "reranker score (cross-encoder)",
}
NOT_TRAINED = "not trained"
# Columns that take a fixed width from their content sample; the name stretches, text columns elide.
_SAMPLES = {0: "☐ ✓99", 1: "D0000000", 5: "0.000", 6: NOT_TRAINED}
_TEXT_WIDTHS = {3: 0.30, 4: 0.18}  # shares of the width the fixed columns leave
_Index = QModelIndex | QPersistentModelIndex


class CandidateModel(QAbstractTableModel):
    markToggled = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.candidates: list[Candidate] = []
        self.concepts: dict[str, Concept] = {}
        self.linked: set[str] = set()
        self.marked: set[str] = set()
        self.reranker_trained = False

    def set_candidates(
        self,
        candidates: list[Candidate],
        concepts: dict[str, Concept],
        linked: list[str],
        reranker_trained: bool,
        marked: list[str] | None = None,
    ) -> None:
        self.beginResetModel()
        self.candidates = candidates
        self.concepts = concepts
        self.linked = set(linked)
        self.marked = set(marked or [])
        self.reranker_trained = reranker_trained
        self.endResetModel()

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
            full = self.data(index, Qt.ItemDataRole.DisplayRole) if column in (1, 2, 3, 4) else ""
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
            concept = self.concepts.get(candidate.concept_id)
            if column == 0:
                return f"{'✓' if candidate.concept_id in self.linked else ''}{index.row() + 1}"
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
            if column == 5:
                return f"{candidate.retriever_score:.3f}"
            if column == 6:
                if candidate.reranker_score is not None:
                    return f"{candidate.reranker_score:.3f}"
                return "" if self.reranker_trained else NOT_TRAINED
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (0, 5, 6):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and column == 6 and candidate.reranker_score is None:
            return QColor("#8a8a8a")
        if role == Qt.ItemDataRole.ForegroundRole and column in (3, 4):
            return QColor(muted())
        if role == Qt.ItemDataRole.FontRole and candidate.concept_id in self.linked:
            font = QFont()
            font.setBold(True)
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
        self.view.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        header = self.view.horizontalHeader()
        header.setMinimumSectionSize(20)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        for column in _TEXT_WIDTHS:
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
        self._fit_columns()
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
        """Numeric and id columns as wide as their longest value; synonym and tree / type a share of
        what is left, so the preferred name always gets the most room and nothing scrolls sideways."""
        header = self.view.horizontalHeader()
        bold = QFont(self.view.font())
        bold.setBold(True)  # headers and the chosen row are bold
        metrics = QFontMetrics(bold)
        padding = 14
        fixed = 0
        for column, sample in _SAMPLES.items():
            width = max(metrics.horizontalAdvance(sample), metrics.horizontalAdvance(COLUMNS[column]))
            header.resizeSection(column, width + padding)
            fixed += width + padding
        available = max(0, self.view.viewport().width() - fixed)
        for column, share in _TEXT_WIDTHS.items():
            minimum = metrics.horizontalAdvance(COLUMNS[column]) + padding
            header.resizeSection(column, max(minimum, int(available * share)))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_columns()

    def show_candidates(
        self,
        mention_html: str,
        candidates: list[Candidate],
        concepts: dict[str, Concept],
        linked: list[str],
        reranker_trained: bool,
        marked: list[str] | None = None,
    ) -> None:
        """`linked`: the concepts the mention is linked to now; `marked`: those ticked for one link."""
        self.mention_label.setText(mention_html)
        self.model.set_candidates(candidates, concepts, linked, reranker_trained, marked)
        if candidates:
            self.view.selectRow(0)

    def set_marked(self, marked: list[str]) -> None:
        self.model.set_marked(marked)

    def clear(self, message: str) -> None:
        self.mention_label.setText(message)
        self.model.set_candidates([], {}, [], self.model.reranker_trained)
