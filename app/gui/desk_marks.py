"""Notes, "flag for later" and "document done" at the desk (INCEpTION's and TeamTat's curator notes).

E writes a note on the mention (Shift+E on the document), F flags the mention for later (Shift+F the
document), D marks the document done. Each is an undoable write of an append-only mark
(core.store.curation_marks). The strip under the legend shows the document's marks and the selected
mention's; a flagged mention is overlined in the abstract and its note is in its tooltip.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QDialog, QInputDialog, QLabel, QPlainTextEdit, QSizePolicy

from app.gui.desk_host import DeskHost
from app.gui.desk_model import DeskModel
from app.gui.desk_saving import DeskSaving
from core.store.curation_marks import DONE, FLAG, NOTE, SET, Mark

FLAG_SIGN = "\u2691"  # ⚑
DONE_SIGN = "\u2714"  # ✔


def _who(mark: Mark) -> str:
    when = mark.created_at.strftime("%Y-%m-%d %H:%M") if mark.created_at else ""
    return html.escape(" ".join(part for part in (mark.curator, when) if part))


def marks_html(marks: dict[str, Mark], what: str) -> str:
    """One line: the flag, the done mark and the note of a mention or document (empty when none)."""
    parts = []
    if DONE in marks:
        parts.append(f"<span style='color:#2e7d32'><b>{DONE_SIGN} done</b></span> ({_who(marks[DONE])})")
    if FLAG in marks:
        parts.append(f"<span style='color:#c62828'><b>{FLAG_SIGN} flagged for later</b></span>")
    if NOTE in marks:
        parts.append(
            f"<b>note:</b> {html.escape(marks[NOTE].value)} <span style='color:#5f6b7a'>"
            f"({_who(marks[NOTE])})</span>"
        )
    return f"<b>{what}</b> " + " · ".join(parts) if parts else ""


class _SubmitOnCtrlEnter(QObject):
    """Ctrl+Enter in a multi-line editor accepts its dialog (a shortcut never sees the key: the editor
    takes it as a line break)."""

    def __init__(self, dialog: QDialog):
        super().__init__(dialog)
        self.dialog = dialog

    def eventFilter(self, watched, event) -> bool:
        if (
            event.type() == QEvent.Type.KeyPress
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            and event.modifiers() & Qt.KeyboardModifier.ControlModifier
        ):
            self.dialog.accept()
            return True
        return False


class CurationMarks:
    """Notes, flags and done marks for the window (`host`, which runs the writes) on the open document
    of `model`, and the strip that shows them."""

    def __init__(self, host: DeskHost, model: DeskModel, saving: DeskSaving):
        self.host, self.model, self.project, self.saving = host, model, model.project, saving
        self.marks_strip = QLabel()
        self.marks_strip.setObjectName("marksStrip")
        self.marks_strip.setWordWrap(True)
        self.marks_strip.setTextFormat(Qt.TextFormat.RichText)
        self.marks_strip.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.marks_strip.hide()
        self.mention_marks: dict = {}
        self.document_marks: dict = {}

    def put_on(self, marks: list, *, reread: bool = True) -> list:
        """Read the document's marks (`reread`: once per refresh; a decision changes none) and put the
        flags and notes on its highlights."""
        if reread:
            self.mention_marks = self.project.marks.mention_marks(self.model.mention_ids) if self.model.doc else {}
            found = self.project.marks.document_marks([self.model.doc.doc_id]) if self.model.doc else {}
            self.document_marks = found.get(self.model.doc.doc_id, {}) if self.model.doc else {}
        for mark, mention_id in zip(marks, self.model.mention_ids, strict=True):
            mine = self.mention_marks.get(mention_id, {})
            mark.flagged = FLAG in mine
            mark.note = mine[NOTE].value if NOTE in mine else ""
        self.show_strip()  # the document's at once (a document without mentions selects none)
        return marks

    def show_strip(self) -> None:
        """The strip: the document's marks, then the selected mention's; hidden when there are none."""
        lines = [marks_html(self.document_marks, "Document:")]
        mention_id = self.model.current_mention_id()
        if mention_id is not None:
            lines.append(marks_html(self.mention_marks.get(mention_id, {}), "Mention:"))
        text = "<br>".join(line for line in lines if line)
        self.marks_strip.setText(text)
        self.marks_strip.setVisible(bool(text))

    # --- the keys ---------------------------------------------------------------------------------

    def _mark_target(self, on_document: bool) -> tuple[dict, int | None] | None:
        if self.model.doc is None:
            return None
        if on_document:
            return self.document_marks, None
        mention_id = self.model.current_mention_id()
        if mention_id is None:
            self.host.statusBar().showMessage("select a mention first", 3000)
            return None
        return self.mention_marks.get(mention_id, {}), mention_id

    def write_mark(self, kind: str, value: str, *, on_document: bool = False) -> bool:
        """Write a mark (an empty value clears it) as an undoable step."""
        target = self._mark_target(on_document)
        if target is None:
            return False
        current, mention_id = target
        old = current[kind].value if kind in current else ""
        if old == value or self.saving.waiting_for_writes(f"a {kind}"):
            return False
        where = "document" if mention_id is None else f"“{self.model.doc.mentions[self.model.current].text}”"
        verb = {NOTE: "note on", FLAG: "flag", DONE: "mark done"}[kind]
        label = f"{verb} {where}" if value else f"clear {kind} on {where}"
        op = self.model.set_mark(kind, value, label, mention_id=mention_id)
        if self.saving.perform(op.label, op.run) == "refused":
            return False
        self.host.statusBar().showMessage(f"saved: {label}", 4000)
        return True

    def toggle_flag(self, on_document: bool = False) -> bool:
        target = self._mark_target(on_document)
        return target is not None and self.write_mark(
            FLAG, "" if FLAG in target[0] else SET, on_document=on_document
        )

    def toggle_done(self) -> bool:
        return self.model.doc is not None and self.write_mark(
            DONE, "" if DONE in self.document_marks else SET, on_document=True
        )

    def edit_note(self, on_document: bool = False) -> QInputDialog | None:
        """E / Shift+E: a note editor (empty text clears the note); not modal, so workers keep running."""
        target = self._mark_target(on_document)
        if target is None:
            return None
        current, mention_id = target
        dialog = QInputDialog(self.host)
        dialog.setWindowTitle("Note")
        what = (
            "this document" if mention_id is None else f"“{self.model.doc.mentions[self.model.current].text}”"
        )
        dialog.setLabelText(f"Note on {what} (empty to clear)")
        dialog.setOption(QInputDialog.InputDialogOption.UsePlainTextEditForTextInput)
        dialog.setTextValue(current[NOTE].value if NOTE in current else "")
        # Room for a real note, wrapped as typed; Ctrl+Enter saves (Enter is a new line).
        dialog.resize(560, 320)
        for editor in dialog.findChildren(QPlainTextEdit):
            editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
            editor.installEventFilter(_SubmitOnCtrlEnter(dialog))
        doc_id = self.model.doc.doc_id
        dialog.textValueSelected.connect(lambda text: self._note_written(doc_id, mention_id, text.strip()))
        dialog.finished.connect(lambda _result: self.host.activateWindow())
        self.host.menu_dialog = dialog
        dialog.open()
        return dialog

    def _note_written(self, doc_id: str, mention_id: int | None, text: str) -> None:
        if self.model.doc is None or self.model.doc.doc_id != doc_id:
            self.host.document.open_document(doc_id, mention_id=mention_id)
        if mention_id is not None:
            if mention_id not in self.model.mention_ids:
                return
            self.model.current = self.model.mention_ids.index(mention_id)
        self.write_mark(NOTE, text, on_document=mention_id is None)
