"""File ▸ Add PubMed abstracts by PMID: a list typed or pasted, or a file of PMIDs, fetched from NCBI
efetch in a background job (core.jobs.io.fetch_pubmed) behind the progress dialog with Cancel; the queue
is re-read when they are stored."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
)

from app.gui.dialogs import lay_out_form_dialog, path_row
from core.errors import InputError
from core.jobs.io.fetch_pubmed import PmidList, parse_pmids, read_pmid_file

TITLE = "Add PubMed abstracts by PMID"


class FetchPubmedDialog(QDialog):
    """PMIDs in a text box and / or a file; says as they are typed how many PMIDs there are and which
    items are not PMIDs (OK stays off until every item is one)."""

    def __init__(self, parent=None, *, api_key: str = ""):
        super().__init__(parent)
        self.setWindowTitle(TITLE)
        self.setMinimumWidth(560)
        self.pmids_edit = QPlainTextEdit()
        self.pmids_edit.setPlaceholderText("PMIDs, separated by spaces, commas or new lines")
        self.path_edit = QLineEdit()
        self.path_edit.setPlaceholderText("or a text file of PMIDs")
        row = path_row(self, self.path_edit, "File of PMIDs")
        self.api_key_edit = QLineEdit(api_key)
        self.api_key_edit.setEchoMode(QLineEdit.EchoMode.PasswordEchoOnEdit)
        self.api_key_edit.setPlaceholderText("optional: 10 requests a second instead of 3")
        self.count_label = QLabel()
        self.count_label.setWordWrap(True)
        form = QFormLayout()
        form.addRow("PMIDs", self.pmids_edit)
        form.addRow("File", row)
        form.addRow("NCBI API key", self.api_key_edit)
        self.buttons = lay_out_form_dialog(
            self,
            form,
            self.count_label,
            "Fetched from NCBI PubMed (needs the network); PMIDs already in the project are skipped. "
            "The abstracts come without mentions: Curate ▸ Find mentions adds them.",
        )
        self.pmids_edit.textChanged.connect(self._validate)
        self.path_edit.textChanged.connect(self._validate)
        self._validate()

    def pmid_list(self) -> PmidList:
        """The typed PMIDs, then the file's (repeats dropped); a file that cannot be read is a problem."""
        given = parse_pmids(self.pmids_edit.toPlainText(), "the PMID box")
        name = self.path_edit.text().strip()
        if name:
            try:
                listed = read_pmid_file(Path(name))
            except InputError as error:
                given.problems.append(error)
            else:
                given.problems += listed.problems
                given.pmids = list(dict.fromkeys(given.pmids + listed.pmids))
        return given

    def _validate(self) -> None:
        given = self.pmid_list()
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setEnabled(bool(given.pmids) and not given.problems)
        if given.problems:
            shown = "\n".join(str(p) for p in given.problems[:5])
            more = len(given.problems) - 5
            self.count_label.setText(shown + (f"\n… and {more} more" if more > 0 else ""))
        else:
            self.count_label.setText(f"{len(given.pmids)} PMID{'s' if len(given.pmids) != 1 else ''}")


def open_fetch_pubmed(window) -> FetchPubmedDialog:
    dialog = FetchPubmedDialog(window, api_key=window.settings.ncbi_api_key)

    def start() -> None:
        window.settings.ncbi_api_key = dialog.api_key_edit.text()
        fetch_pubmed_into(window, dialog.pmid_list().pmids, dialog.api_key_edit.text())

    dialog.accepted.connect(start)
    window.menu_dialog = dialog
    dialog.open()
    return dialog


def fetch_pubmed_into(window, pmids: list[str], api_key: str = ""):
    """Fetch and store in a worker (the window's menu job), then re-read the queue."""
    url = window.settings.eutils_url
    project = window.project

    def work(progress, cancel):
        from core.jobs.io.eutils import EutilsClient
        from core.jobs.io.fetch_pubmed import fetch_pubmed

        return fetch_pubmed(
            project, pmids, EutilsClient(url, api_key=api_key), progress=progress, cancel=cancel
        )

    def done(summary) -> None:
        window.statusBar().showMessage("; ".join(summary.lines()))
        window.document.reload_queue()
        window.links.prefetch()

    return window.files.run_dialog_job(f"fetching {len(pmids)} PubMed abstracts", work, done)


def install_fetch_pubmed(window, file_menu) -> QAction:
    """The File menu's action, placed after the imports (before Export when the menu has it)."""
    action = window.key_action(f"{TITLE}…", [], lambda: open_fetch_pubmed(window))
    anchor = window.files.act_export
    if anchor is not None and anchor in file_menu.actions():
        file_menu.insertAction(anchor, action)
    else:
        file_menu.addAction(action)
    return action
