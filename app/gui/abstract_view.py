"""The abstract with every mention highlighted by state; nested and overlapping mentions stay legible.

Passages are shown as separate paragraphs (the title bold) without moving a single offset: the one
gap character before each passage becomes the paragraph break, and a QTextDocument paragraph break is
one position, exactly like the space it replaces. So a position in the view is an offset in
`Document.text`, for highlights, clicks and selections alike.

Char formats are laid down once per document (and again only after a decision changes a state); moving
between mentions only swaps an extra selection, so navigation costs nothing on long texts.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QRect, Qt, Signal
from PySide6.QtGui import QColor, QFont, QTextBlockFormat, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QTextEdit, QToolTip

from app.gui.settings import ZOOM_RANGE
from app.gui.states import STATE_LABELS, fill, is_dark, muted, strong, uncertain_span
from app.gui.type_colours import type_colour
from core.documents import Document


@dataclass
class MentionMark:
    start: int
    end: int
    text: str
    type: str
    state: str
    concept: str = ""
    layer: int = 0
    flagged: bool = False  # a curator's "flag for later" (overlined)
    note: str = ""  # a curator's note (in the tooltip)
    probability: float | None = None  # a detected span's probability, while no decision is taken on it


TITLE_KINDS = ("title", "t", "front")
FLAG_COLOUR = QColor("#b71c1c")


def display_text(document: Document) -> tuple[str, list[tuple[int, int]]]:
    """The text to show (same length as `Document.text`) and the title passages' spans.

    The last gap character before each later passage becomes a newline (one QTextDocument paragraph
    break); passages that touch or overlap their predecessor stay in the same paragraph.
    """
    text = document.text
    chars = list(text)
    titles: list[tuple[int, int]] = []
    ordered = sorted(document.passages, key=lambda p: p.offset)
    previous_end = 0
    for index, passage in enumerate(ordered):
        if passage.kind in TITLE_KINDS and passage.text:
            titles.append((passage.offset, min(passage.end, len(text))))
        gap = passage.offset - 1
        if index and passage.offset > previous_end and 0 <= gap < len(text) and text[gap].isspace():
            chars[gap] = "\n"
        previous_end = max(previous_end, passage.end)
    return "".join(chars), titles


def assign_layers(spans: list[tuple[int, int]]) -> list[int]:
    """Greedy interval layering: an outer mention gets layer 0, a nested or overlapping one the next free."""
    order = sorted(range(len(spans)), key=lambda i: (spans[i][0], -spans[i][1]))
    layer_ends: list[int] = []
    layers = [0] * len(spans)
    for i in order:
        start, end = spans[i]
        for layer, last_end in enumerate(layer_ends):
            if last_end <= start:
                layer_ends[layer] = end
                layers[i] = layer
                break
        else:
            layers[i] = len(layer_ends)
            layer_ends.append(end)
    return layers


class AbstractView(QTextEdit):
    mentionClicked = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setReadOnly(True)
        self.setObjectName("abstract")
        # Mouse-only selection: the keyboard belongs to the curator's shortcuts, not the text cursor.
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.viewport().setMouseTracking(True)
        self.marks: list[MentionMark] = []
        # Colour by type (a palette slot per type, app/gui/type_colours.py) instead of by state; and the
        # types drawn plain (hidden). None: colour by state, the desk's default.
        self.type_slots: dict[str, int] | None = None
        self.hidden_types: set[str] = set()
        self.titles: list[tuple[int, int]] = []
        self.selected: int | None = None
        font = QFont(self.font())
        font.setPointSizeF(max(font.pointSizeF(), 10.0) * 1.25)
        self.document().setDefaultFont(font)
        self.document().setDocumentMargin(14)
        self.base_size = font.pointSizeF()  # the size zoom 0 shows (the style sheet's, once it applies)
        self.zoom = 0

    # --- zoom ------------------------------------------------------------------------------------

    def set_zoom(self, points: int) -> int:
        """Show the text `points` larger (negative: smaller) than the base size, kept in ZOOM_RANGE;
        returns the zoom set. Only the document's font changes, so the style sheet's size stays the
        base and a theme switch (which re-polishes the widget) keeps the zoom."""
        self.zoom = max(ZOOM_RANGE[0], min(ZOOM_RANGE[1], int(points)))
        self._apply_zoom()
        return self.zoom

    def text_size(self) -> float:
        return self.document().defaultFont().pointSizeF()

    def _apply_zoom(self) -> None:
        font = QFont(self.document().defaultFont())
        font.setPointSizeF(max(4.0, self.base_size + self.zoom))
        self.document().setDefaultFont(font)
        self._paint_formats()  # the title's size is relative to the default font

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)  # a font change resets the document's font to the widget's
        if event.type() == QEvent.Type.FontChange and hasattr(self, "zoom"):
            self.base_size = self.font().pointSizeF()
            self._apply_zoom()

    def set_type_view(self, slots: dict[str, int] | None, hidden: set[str]) -> None:
        """Colour the mentions by type (`slots`; None: by state) and leave `hidden` types undrawn."""
        self.type_slots, self.hidden_types = slots, set(hidden)
        self.repaint_marks()

    def repaint_marks(self) -> None:
        """Lay the state colours down again (after a theme switch changed them)."""
        self._paint_formats()
        self._paint_selection()

    # --- content ---------------------------------------------------------------------------------

    def set_document(self, document: Document, marks: list[MentionMark]) -> None:
        text, self.titles = display_text(document)
        self.setPlainText(text)
        cursor = QTextCursor(self.document())
        cursor.select(QTextCursor.SelectionType.Document)
        spacing = QTextBlockFormat()
        spacing.setBottomMargin(10)
        cursor.mergeBlockFormat(spacing)
        self.selected = None
        self.set_marks(marks)

    def set_marks(self, marks: list[MentionMark]) -> None:
        layers = assign_layers([(m.start, m.end) for m in marks])
        for mark, layer in zip(marks, layers, strict=True):
            mark.layer = layer
        self.marks = marks
        self._paint_formats()
        self._paint_selection()

    def _paint_formats(self) -> None:
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()
        cursor.select(QTextCursor.SelectionType.Document)
        cursor.setCharFormat(QTextCharFormat())
        length = self.document().characterCount() - 1
        bold = QTextCharFormat()
        bold.setFontWeight(QFont.Weight.Bold)
        size = self.document().defaultFont().pointSizeF()
        if size > 0:
            bold.setFontPointSize(size * 1.1)
        for start, end in self.titles:
            cursor.setPosition(min(start, length))
            cursor.setPosition(min(end, length), QTextCursor.MoveMode.KeepAnchor)
            cursor.mergeCharFormat(bold)
        for mark in sorted(self.marks, key=lambda m: m.layer):
            start, end = max(0, mark.start), min(mark.end, length)
            if start >= end:
                continue
            fmt = QTextCharFormat()
            if self.type_slots is not None:
                if mark.type in self.hidden_types:
                    continue  # a hidden type is plain text (still a mention: clicks and keys reach it)
                self._type_format(fmt, mark)
            elif mark.layer == 0:
                fmt.setBackground(fill(mark.state))
            else:
                # Nested or overlapping: an underline in the state's colour under the outer fill,
                # a wave from the third layer on, so each level is told apart.
                style = (
                    QTextCharFormat.UnderlineStyle.SingleUnderline
                    if mark.layer == 1
                    else QTextCharFormat.UnderlineStyle.WaveUnderline
                )
                fmt.setUnderlineStyle(style)
                fmt.setUnderlineColor(strong(mark.state))
                fmt.setFontWeight(QFont.Weight.DemiBold)
            if uncertain_span(mark.probability):
                # A span the detector was unsure of: dotted underline, italic, until a curator decides.
                fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.DotLine)
                fmt.setUnderlineColor(strong(mark.state))
                fmt.setFontItalic(True)
            if mark.flagged:  # a curator's "flag for later": overlined, in red
                fmt.setFontOverline(True)
                fmt.setForeground(FLAG_COLOUR)
                fmt.setFontWeight(QFont.Weight.DemiBold)
            cursor.setPosition(start)
            cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            cursor.mergeCharFormat(fmt)
        cursor.endEditBlock()

    def _type_format(self, fmt: QTextCharFormat, mark: MentionMark) -> None:
        """The type's fill (an inner mention: its type's colour on the text), the state by weight and
        lines: accepted bold, corrected bold and underlined, rejected struck out, not in the KB a wavy
        line, ambiguous a dashed one, no suggestions yet grey (type_colours.STATE_MARKS, the legend)."""
        fill_colour, strong_colour = type_colour(self.type_slots.get(mark.type, 0), is_dark())
        if mark.layer == 0:
            fmt.setBackground(QColor(fill_colour))
        else:
            fmt.setForeground(QColor(strong_colour))
        line = {
            "corrected": QTextCharFormat.UnderlineStyle.SingleUnderline,
            "nil": QTextCharFormat.UnderlineStyle.WaveUnderline,
            "ambiguous": QTextCharFormat.UnderlineStyle.DashUnderline,
        }.get(mark.state)
        if line is not None:
            fmt.setUnderlineStyle(line)
            fmt.setUnderlineColor(strong(mark.state))
        if mark.state in ("accepted", "corrected"):
            fmt.setFontWeight(QFont.Weight.Bold)
        elif mark.layer:
            fmt.setFontWeight(QFont.Weight.DemiBold)
        if mark.state == "rejected":
            fmt.setFontStrikeOut(True)
        if mark.state == "unsuggested":
            fmt.setForeground(QColor(muted()))

    def select_mention(self, index: int | None) -> None:
        self.selected = index
        self._paint_selection()

    def _paint_selection(self) -> None:
        if self.selected is None or not 0 <= self.selected < len(self.marks):
            self.setExtraSelections([])
            return
        mark = self.marks[self.selected]
        selection = QTextEdit.ExtraSelection()
        fmt = QTextCharFormat()
        if self.type_slots is not None:
            fmt.setBackground(QColor(type_colour(self.type_slots.get(mark.type, 0), is_dark())[1]))
        else:
            fmt.setBackground(strong(mark.state))
        fmt.setForeground(QColor("white"))
        fmt.setFontWeight(QFont.Weight.Bold)
        selection.format = fmt
        cursor = QTextCursor(self.document())
        cursor.setPosition(mark.start)
        cursor.setPosition(mark.end, QTextCursor.MoveMode.KeepAnchor)
        selection.cursor = cursor
        self.setExtraSelections([selection])
        probe = QTextCursor(self.document())
        probe.setPosition(mark.start)
        if not self.textCursor().hasSelection():
            self.setTextCursor(probe)
            self.center_on(mark.start)

    def center_on(self, offset: int) -> None:
        """Bring a character to the middle third of the view: ensureCursorVisible only scrolls it to the
        edge, where the curator must look for it and the next mention is still out of view."""
        probe = QTextCursor(self.document())
        probe.setPosition(offset)
        rect = self.cursorRect(probe)
        height = self.viewport().height()
        if height / 3 <= rect.center().y() <= 2 * height / 3:
            return
        bar = self.verticalScrollBar()
        bar.setValue(bar.value() + rect.center().y() - height // 2)

    # --- queries ---------------------------------------------------------------------------------

    def mention_rect(self, index: int) -> QRect:
        """The mention's lines across the view's width, in global coordinates (what a dialog must not
        cover while the curator links it)."""
        mark = self.marks[index]
        start, end = QTextCursor(self.document()), QTextCursor(self.document())
        start.setPosition(mark.start)
        end.setPosition(mark.end)
        top, bottom = self.cursorRect(start), self.cursorRect(end)
        viewport = self.viewport()
        rect = QRect(0, top.top(), viewport.width(), bottom.bottom() - top.top() + 1)
        return QRect(viewport.mapToGlobal(rect.topLeft()), rect.size())

    def mentions_at(self, offset: int) -> list[int]:
        """Indexes of mentions covering a character, innermost (shortest) first."""
        hits = [i for i, m in enumerate(self.marks) if m.start <= offset < m.end]
        return sorted(hits, key=lambda i: self.marks[i].end - self.marks[i].start)

    def selection_span(self) -> tuple[int, int] | None:
        cursor = self.textCursor()
        if not cursor.hasSelection():
            return None
        start, end = cursor.selectionStart(), cursor.selectionEnd()
        text = self.toPlainText()
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        return (start, end) if start < end else None

    def select_text(self, start: int, end: int) -> None:
        cursor = QTextCursor(self.document())
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        self.setTextCursor(cursor)

    # --- events ----------------------------------------------------------------------------------

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            offset = self.cursorForPosition(event.pos()).position()
            hits = self.mentions_at(offset)
            if hits:
                QToolTip.showText(event.globalPos(), self.tooltip_html(hits), self.viewport())
            else:
                QToolTip.hideText()
            return True
        return super().viewportEvent(event)

    def tooltip_html(self, hits: list[int]) -> str:
        rows = []
        for i in hits:
            mark = self.marks[i]
            rows.append(
                f"<b>{html.escape(mark.text)}</b> &nbsp;<i>{html.escape(mark.type or 'untyped')}</i><br>"
                f"<span style='color:{strong(mark.state).name()}'>&#9632;</span> {STATE_LABELS[mark.state]}"
                + (f" &middot; {html.escape(mark.concept)}" if mark.concept else "")
                + (
                    f"<br>detected span, probability {mark.probability:.2f}"
                    + (" (<b>uncertain</b>)" if uncertain_span(mark.probability) else "")
                    if mark.probability is not None
                    else ""
                )
                + ("<br>&#9873; <b>flagged for later</b>" if mark.flagged else "")
                + (f"<br><b>note:</b> {html.escape(mark.note)}" if mark.note else "")
            )
        return "<hr>".join(rows)

    def mouseReleaseEvent(self, event) -> None:
        super().mouseReleaseEvent(event)
        if event.button() == Qt.MouseButton.LeftButton and not self.textCursor().hasSelection():
            hits = self.mentions_at(self.cursorForPosition(event.position().toPoint()).position())
            if hits:
                self.mentionClicked.emit(hits[0])
