"""Two small dialogs for moving around a large queue: go to a document by id, and search the documents'
text. Both only ask and show; the window does the opening (app/gui/desk_view.py)."""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
)

from core.store.desk_queries import TextHit

HIT_ROLE = Qt.ItemDataRole.UserRole + 1


class GoToDialog(QDialog):
    """An id field; Enter asks `go(doc_id)`, which opens the document or returns why it cannot (shown
    in the dialog, which stays open so the id can be corrected)."""

    def __init__(self, go: Callable[[str], str | None], parent=None):
        super().__init__(parent)
        self.setWindowTitle("Go to document")
        self.go = go
        self.field = QLineEdit()
        self.field.setPlaceholderText("document id, e.g. a PMID")
        self.message = QLabel()
        self.message.setObjectName("hint")
        self.message.setWordWrap(True)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.submit)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Document id:"))
        layout.addWidget(self.field)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        self.setMinimumWidth(380)

    def submit(self) -> None:
        doc_id = self.field.text().strip()
        problem = "Type a document id." if not doc_id else self.go(doc_id)
        if problem:
            self.message.setText(f"<span style='color:#c8382c'>{html.escape(problem)}</span>")
            self.field.selectAll()
            self.field.setFocus()
            return
        self.accept()


class TextSearchDialog(QDialog):
    """A query field over a result list. Enter in the field searches (`search(query)` gives the hits);
    Enter again, or on a result (the list's own activation), opens it at its first match
    (`open_hit(hit)`). Down moves into the list to pick another result."""

    def __init__(
        self, search: Callable[[str], list[TextHit]], open_hit: Callable[[TextHit], None], parent=None
    ):
        super().__init__(parent)
        self.setWindowTitle("Search the documents' text")
        self.search = search
        self.open_hit = open_hit
        self.searched: str | None = None
        self.field = QLineEdit()
        self.field.setPlaceholderText("words in titles and abstracts")
        self.results = QListWidget()
        self.results.setWordWrap(True)
        self.results.setAlternatingRowColors(True)
        self.message = QLabel("Enter searches; Enter again (or on a result) opens it at the first match.")
        self.message.setObjectName("hint")
        self.message.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(self.field)
        layout.addWidget(self.message)
        layout.addWidget(self.results, 1)
        self.field.returnPressed.connect(self.submit)
        self.results.itemActivated.connect(lambda item: self._open(item.data(HIT_ROLE)))
        self.field.installEventFilter(self)
        self.resize(620, 460)

    def eventFilter(self, watched, event) -> bool:
        """Down in the field moves to the results, so the keyboard reaches them."""
        if watched is self.field and event.type() == event.Type.KeyPress and event.key() == Qt.Key.Key_Down:
            if self.results.count():
                self.results.setFocus()
                return True
        return super().eventFilter(watched, event)

    def submit(self) -> None:
        query = self.field.text().strip()
        if query and query == self.searched and self.results.currentItem() is not None:
            self._open(self.results.currentItem().data(HIT_ROLE))
            return
        self.run(query)

    def run(self, query: str) -> list[TextHit]:
        self.results.clear()
        self.searched = query
        hits = self.search(query) if query else []
        for hit in hits:
            item = QListWidgetItem(f"{hit.doc_id}  ·  {hit.title}\n{hit.snippet}")
            item.setData(HIT_ROLE, hit)
            item.setToolTip(hit.title)
            self.results.addItem(item)
        if hits:
            self.results.setCurrentRow(0)
            self.message.setText(f"{len(hits)} document(s); Enter opens the selected one at its first match.")
        else:
            self.message.setText(f"No document contains “{query}”." if query else "Type words to search for.")
        return hits

    def _open(self, hit: TextHit | None) -> None:
        if hit is not None:
            self.open_hit(hit)
            self.accept()
