"""Dialogs: readable errors (also logged to the project), import / export, settings, progress with
cancel, and the key-binding overlay (bulk accept's is app/gui/bulk_accept_dialog.py)."""

from __future__ import annotations

import logging
import traceback
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QKeyEvent, QPainter
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QProgressDialog,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.gui.settings import DEVICES, AppSettings
from app.gui.workers import Job
from core.errors import CuralinkError, InputError, ModelError, ProjectError
from core.store.write_faults import StoreWriteError, WriteFault

log = logging.getLogger(__name__)


def explain(exc: BaseException) -> tuple[str, str]:
    """A title and a plain-language explanation for the errors a curator can meet."""
    text = str(exc) or exc.__class__.__name__
    if isinstance(exc, InputError):
        return "The file could not be read", text
    if isinstance(exc, StoreWriteError):
        titles = {
            WriteFault.FULL: "The disk is full",
            WriteFault.IO: "The disk failed",
            WriteFault.GONE: "The project cannot be reached",
        }
        return titles.get(exc.fault, "The project is busy"), (
            f"{text}.\nThe change waits in the red bar above the abstract: press Retry once the "
            "problem is solved, or Discard to drop it."
        )
    if isinstance(exc, ProjectError) and "locked" in text:
        return "The project is busy", f"{text}.\nClose the other program using it and try again."
    if isinstance(exc, ProjectError):
        return "Cannot open the project", text
    if isinstance(exc, ModelError):
        return "A model is missing or unusable", text
    if "CUDA" in text or "cuda" in text:
        return "GPU failure", f"{text}\nSwitch the device to CPU in Settings and try again."
    if isinstance(exc, CuralinkError):
        return "Curalink", text
    if isinstance(exc, OSError):
        return "File error", text
    return "Unexpected error", f"{exc.__class__.__name__}: {text}"


def show_error(parent: QWidget | None, exc: BaseException, *, context: str = "") -> QMessageBox:
    """Log the error (the project's logs/ folder has a handler) and show it without blocking workers."""
    title, message = explain(exc)
    log.error("%s%s", f"{context}: " if context else "", message)
    box = QMessageBox(QMessageBox.Icon.Warning, title, message, QMessageBox.StandardButton.Ok, parent)
    if context:
        box.setInformativeText(context)
    if not isinstance(exc, CuralinkError):
        box.setDetailedText("".join(traceback.format_exception(exc)))
    box.setWindowModality(Qt.WindowModality.WindowModal)
    box.open()
    return box


def ok_cancel(dialog: QDialog) -> QDialogButtonBox:
    """OK / Cancel, wired to the dialog's accept and reject."""
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
    buttons.accepted.connect(dialog.accept)
    buttons.rejected.connect(dialog.reject)
    return buttons


def path_row(dialog: QDialog, edit: QLineEdit, title: str, *, save: bool = False) -> QHBoxLayout:
    """A path field with its Browse… button (import, export, PubMed by PMID); the file chosen in the
    file dialog (`title`, a save dialog with `save`) goes into `edit`."""
    browse = QPushButton("Browse…")

    def choose() -> None:
        pick = QFileDialog.getSaveFileName if save else QFileDialog.getOpenFileName
        path, _ = pick(dialog, title)
        if path:
            edit.setText(path)

    browse.clicked.connect(choose)
    row = QHBoxLayout()
    row.addWidget(edit, 1)
    row.addWidget(browse)
    return row


def lay_out_form_dialog(
    dialog: QDialog, form: QFormLayout, count: QLabel, hint: str, *, wrap: bool = True
) -> QDialogButtonBox:
    """The desk's counted-action dialogs (every occurrence, identical mentions, PubMed by PMID): the
    form, the live count, a hint line and OK / Cancel, laid out alike; returns the buttons."""
    note = QLabel(hint)
    note.setObjectName("hint")
    note.setWordWrap(wrap)
    buttons = ok_cancel(dialog)
    layout = QVBoxLayout(dialog)
    layout.addLayout(form)
    layout.addWidget(count)
    layout.addWidget(note)
    layout.addWidget(buttons)
    return buttons


class ScopedCountDialog(QDialog):
    """A confirm dialog that counts what it would touch in a scope: "this document" or a wider one
    (`wider`), the count (`count`, named `count_name` for the style sheet) kept up to date by
    `recount`, and OK enabled only while it finds something (Ctrl+D, Ctrl+Shift+A)."""

    def __init__(self, parent, title: str, wider: str, count_name: str):
        super().__init__(parent)
        self.setWindowTitle(title)
        self.scope = QComboBox()
        self.scope.addItems(["this document", wider])
        self.count = QLabel()
        self.count.setObjectName(count_name)

    @property
    def wide(self) -> bool:
        """The wider scope is chosen."""
        return self.scope.currentIndex() == 1

    def lay_out(self, form: QFormLayout, hint: str, *, wrap: bool = True) -> None:
        self.buttons = lay_out_form_dialog(self, form, self.count, hint, wrap=wrap)
        self.scope.currentIndexChanged.connect(self.recount)

    def show_count(self, text: str, *, found: bool) -> None:
        self.count.setText(text)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(found)

    def recount(self) -> None:
        raise NotImplementedError


def progress_for(parent: QWidget | None, job: Job, title: str) -> QProgressDialog:
    """A modal-looking progress dialog that never blocks the event loop; Cancel sets the job's token."""
    dialog = QProgressDialog(title, "Cancel", 0, 0, parent)
    dialog.setWindowTitle("Curalink")
    dialog.setMinimumDuration(300)
    dialog.setWindowModality(Qt.WindowModality.WindowModal)
    dialog.setAutoClose(False)
    dialog.setAutoReset(False)

    def on_progress(done: int, total: int, message: str) -> None:
        dialog.setMaximum(max(total, 0))
        dialog.setValue(done if total > 0 else 0)
        if message:
            dialog.setLabelText(f"{title}\n{message}")

    job.signals.progress.connect(on_progress)
    dialog.canceled.connect(job.cancel)
    job.signals.finished.connect(dialog.close)  # superqt's: after a result, an error or a cancel
    return dialog


class _FileForm(QDialog):
    """A file (or folder) field plus a format choice; shared by the import and export dialogs."""

    def __init__(self, title: str, formats: list[str], parent=None, *, save: bool = False):
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setMinimumWidth(560)
        self.save = save
        self.path_edit = QLineEdit()
        self.format_box = QComboBox()
        self.format_box.addItems(formats)
        self.form = QFormLayout()
        self.form.addRow("File", path_row(self, self.path_edit, title, save=save))
        self.form.addRow("Format", self.format_box)
        layout = QVBoxLayout(self)
        layout.addLayout(self.form)
        layout.addWidget(ok_cancel(self))

    @property
    def path(self) -> Path:
        return Path(self.path_edit.text().strip())

    @property
    def fmt(self) -> str:
        return self.format_box.currentText()


class ImportCorpusDialog(_FileForm):
    def __init__(self, parent=None):
        from core.formats import FORMATS

        super().__init__("Import corpus", list(FORMATS), parent)
        self.split_box = QComboBox()
        self.split_box.addItems(["", "train", "dev", "test"])
        self.form.addRow("Split", self.split_box)


class ImportKbDialog(_FileForm):
    def __init__(self, parent=None):
        from core.kb import KB_FORMATS

        super().__init__("Import knowledge base", list(KB_FORMATS), parent)
        self.names_only = QCheckBox("only add names to concepts the project has (matched by id; no new concept)")
        self.form.addRow("Names", self.names_only)


class ExportDialog(_FileForm):
    """The filters of `curalink export`: accepted-only, curated-only and one split."""

    ALL_SPLITS = "all documents"

    def __init__(self, parent=None, *, splits: list[str] | None = None):
        from core.formats import WRITABLE_FORMATS

        super().__init__("Export curated corpus", list(WRITABLE_FORMATS), parent, save=True)
        self.split_box = QComboBox()
        self.split_box.addItems([self.ALL_SPLITS, *(splits or [])])
        self.form.addRow("Split", self.split_box)
        self.curated_only = QCheckBox("only documents with at least one decision")
        self.accepted_only = QCheckBox("only accepted and corrected mentions (and their documents)")
        self.form.addRow("Documents", self.curated_only)
        self.form.addRow("Mentions", self.accepted_only)
        note = QLabel(
            "Each decided mention carries its provenance: decision, curator, time, model version. "
            "Rejected and ambiguous mentions are written without an id (no link was confirmed); "
            "not-in-KB ones with -1; deleted mentions are left out."
        )
        note.setObjectName("hint")
        note.setWordWrap(True)
        self.form.addRow("", note)

    @property
    def split(self) -> str | None:
        text = self.split_box.currentText()
        return None if text == self.ALL_SPLITS else text


class SettingsDialog(QDialog):
    def __init__(self, settings: AppSettings, parent=None):
        super().__init__(parent)
        self.settings = settings
        self.setWindowTitle("Settings")
        self.curator = QLineEdit(settings.curator)
        self.candidates = QSpinBox()
        self.candidates.setRange(1, 64)
        self.candidates.setValue(settings.candidates)
        self.device = QComboBox()
        self.device.addItems(DEVICES)
        self.device.setCurrentText(settings.device)
        self.use_reranker = QCheckBox("rerank with the active cross-encoder (when one is trained)")
        self.use_reranker.setChecked(settings.use_reranker)
        self.prefetch = QSpinBox()
        self.prefetch.setRange(0, 50)
        self.prefetch.setValue(settings.prefetch)
        form = QFormLayout()
        form.addRow("Curator name", self.curator)
        form.addRow("Candidates per mention", self.candidates)
        form.addRow("Reranker device", self.device)
        form.addRow("Models", self.use_reranker)
        form.addRow("Link ahead (documents)", self.prefetch)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(buttons)

    def save(self) -> None:
        self.settings.curator = self.curator.text()
        self.settings.candidates = self.candidates.value()
        self.settings.device = self.device.currentText()
        self.settings.use_reranker = self.use_reranker.isChecked()
        self.settings.prefetch = self.prefetch.value()
        self.settings.sync()


# The F1 help's rows for the curator features (app/gui/desk_extras.py).
EXTRA_KEY_HELP = (
    ("Alt+Shift+← / →", "move the mention's end by a word (suggests again)"),
    ("Ctrl+Alt+← / →", "move the mention's start by a word (suggests again)"),
    ("Alt+Enter", "accept the top (or marked) candidates without teaching the linker the string"),
    ("Ctrl+D", "apply this mention's decision to identical unreviewed mentions"),
    ("Ctrl+Shift+A", "annotate every occurrence of the selection or mention, in the document or project"),
    ("E  /  Shift+E", "note on the mention / on the document"),
    ("F  /  Shift+F", "flag the mention / the document for later"),
    ("D", "mark the document done (again: not done)"),
    ("Ctrl+Shift+T", "today's statistics"),
)

KEY_HELP = (
    ("Enter", "accept the top candidate, or every marked one as one link"),
    ("1 – 9", "accept the n-th candidate"),
    ("Ctrl+1 – 9", "mark / unmark candidate n (a mention naming several concepts)"),
    ("Esc", "clear the marks"),
    ("R", "reject the suggestions; on a detected span (not gold): not a mention, left out of exports"),
    ("N", "not in the knowledge base"),
    ("A", "ambiguous"),
    (
        "Ctrl+F  or  /",
        "search the KB by name or any id, typos and spellings forgiven: ↑/↓ show each concept, "
        "Enter links it, Ctrl+Enter adds it to the link being built (Enter stores the link)",
    ),
    ("M  or  Insert", "add a mention from the selected text"),
    ("Delete", "delete the mention"),
    ("Shift+← / →", "move the mention's end (suggests again)"),
    ("Ctrl+Shift+← / →", "move the mention's start (suggests again)"),
    ("T", "change the mention's type (suggests again)"),
    *EXTRA_KEY_HELP,
    ("Tab / Shift+Tab,  J / K", "next / previous mention"),
    ("Ctrl+↓ / ↑,  PgDown / PgUp", "next / previous document"),
    ("Ctrl+Z / Ctrl+Shift+Z  or  Ctrl+Y", "undo / redo"),
    ("Ctrl+B", "bulk-accept above a score"),
    ("Ctrl+L", "link (suggest for) the documents without suggestions, in the background"),
    (
        "Ctrl+Shift+M",
        "find mentions in this document's raw text (span model, else dictionary); dotted = uncertain span",
    ),
    ("Ctrl+G", "go to a document by id"),
    ("Ctrl+Shift+F", "search the documents' text: Enter lists, Enter again opens at the first match"),
    ("Alt+1,  Alt+2,  Alt+3", "next status / split / mention-type filter of the queue (they combine)"),
    ("Alt+4", "sort the queue by id / by uncertainty"),
    ("Alt+5", "colour mentions by type / by state; a click on a type in the legend hides or shows it"),
    ("Alt+0", "show every document (clear the queue's filters)"),
    ("Ctrl+=  /  Ctrl+-  /  Ctrl+0", "larger / smaller / default text in the abstract"),
    ("Ctrl+N  /  Ctrl+O", "new project / open a project"),
    ("Ctrl+I  /  Ctrl+Shift+I", "import a corpus / a knowledge base"),
    ("Ctrl+,", "settings"),
    ("Ctrl+Q", "quit (every decision is already saved)"),
    ("F1  or  ?", "show / hide this help"),
)


class KeyHelpOverlay(QWidget):
    """A translucent sheet over the window listing every key; any key or click closes it."""

    def __init__(self, parent: QWidget):
        super().__init__(parent)
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, False)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        # Two columns of keys: one column ran past the bottom of the window at its default height. The
        # descriptions wrap inside their cells (fixed shares of the sheet's width): unwrapped, the right
        # column ran past the window's edge at 1,500-1,600 px and only its keys showed (issue 31).
        half = (len(KEY_HELP) + 1) // 2
        cell = (
            "<td width='11%' style='padding:2px 10px 2px 0'><b>{}</b></td>"
            "<td width='39%' style='padding:2px 24px 2px 0'>{}</td>"
        )
        rows = "".join(
            "<tr>"
            + "".join(cell.format(key, what) for key, what in KEY_HELP[i : i + half * 2 : half])
            + "</tr>"
            for i in range(half)
        )
        self.label = QLabel(
            f"<h2 style='margin-bottom:8px'>Keyboard</h2><table width='100%'>{rows}</table>"
            "<p style='color:#bbb'>Every decision is saved the moment you make it.</p>"
        )
        self.label.setObjectName("keyHelp")
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        layout.addWidget(self.label, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addStretch(1)
        self.hide()

    def fit(self) -> None:
        """Cover the window; the sheet as wide as the window allows (up to a readable 1,700 px)."""
        self.setGeometry(self.parentWidget().rect())
        margins = self.layout().contentsMargins()
        self.label.setFixedWidth(max(300, min(1700, self.width() - margins.left() - margins.right() - 40)))

    def toggle(self) -> None:
        if self.isVisible():
            self.hide()
            return
        self.fit()
        self.show()
        self.raise_()
        self.setFocus()

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), QColor(20, 24, 32, 215))

    def keyPressEvent(self, event: QKeyEvent) -> None:
        self.hide()

    def mousePressEvent(self, event) -> None:
        self.hide()
