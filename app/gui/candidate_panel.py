"""Ranked candidates for the selected mention, retriever and reranker scores side by side."""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QTableView, QVBoxLayout, QWidget

from core.documents import Candidate
from core.kb.concept import Concept

COLUMNS = ("#", "ID", "Preferred name", "Matched synonym", "Tree / type", "Retriever", "Reranker")
NOT_TRAINED = "not trained"
_Index = QModelIndex | QPersistentModelIndex


class CandidateModel(QAbstractTableModel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.candidates: list[Candidate] = []
        self.concepts: dict[str, Concept] = {}
        self.chosen = ""
        self.reranker_trained = False

    def set_candidates(
        self, candidates: list[Candidate], concepts: dict[str, Concept], chosen: str, reranker_trained: bool
    ) -> None:
        self.beginResetModel()
        self.candidates = candidates
        self.concepts = concepts
        self.chosen = chosen
        self.reranker_trained = reranker_trained
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.candidates)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return len(COLUMNS)

    def headerData(self, section: int, orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        candidate = self.candidates[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            concept = self.concepts.get(candidate.concept_id)
            if column == 0:
                return str(index.row() + 1)
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
        if role == Qt.ItemDataRole.FontRole and candidate.concept_id == self.chosen:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.BackgroundRole and candidate.concept_id == self.chosen:
            return QColor("#c8efc9")
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"press {index.row() + 1} to accept" if index.row() < 9 else None
        return None


class CandidatePanel(QWidget):
    candidateActivated = Signal(int)
    candidateSelected = Signal(int)

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
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        for column, width in ((3, 150), (4, 90)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(column, width)
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
        self.view.doubleClicked.connect(lambda index: self.candidateActivated.emit(index.row()))
        self.view.selectionModel().currentRowChanged.connect(
            lambda current, _previous: (
                self.candidateSelected.emit(current.row()) if current.isValid() else None
            )
        )

    def show_candidates(
        self,
        mention_html: str,
        candidates: list[Candidate],
        concepts: dict[str, Concept],
        chosen: str,
        reranker_trained: bool,
    ) -> None:
        self.mention_label.setText(mention_html)
        self.model.set_candidates(candidates, concepts, chosen, reranker_trained)
        if candidates:
            self.view.selectRow(0)

    def clear(self, message: str) -> None:
        self.mention_label.setText(message)
        self.model.set_candidates([], {}, "", self.model.reranker_trained)
