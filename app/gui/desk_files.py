"""The desk's File and Edit menus: import, export, settings, new / open project. Long work runs in a
background job behind a progress dialog with a cancel button.

Corpus import and export are core.jobs.io.corpus's, as the CLI's are: an import whose file has bad items
stores nothing and offers to import the rest ("Skip and report", the CLI's `--on-invalid skip`), which
writes the same report of skipped items in the project's logs; what an import skipped and what an
export's format could not keep are shown, line for line as the CLI prints them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from app.gui.desk_host import DeskHost
from app.gui.desk_linking import BackgroundLinking
from app.gui.desk_model import DeskModel
from app.gui.dialogs import (
    ExportDialog,
    ImportCorpusDialog,
    ImportKbDialog,
    SettingsDialog,
    progress_for,
    show_error,
)
from app.gui.settings import AppSettings
from app.gui.workers import MODELS_NOT_LOADED, Job, LinkService, run_in_thread

if TYPE_CHECKING:
    from core.store.project import Project


class FilesHost(DeskHost, Protocol):
    """The window as the File menu sees it: it also closes, and keeps the last menu job."""

    menu_job: Job | None
    report_dialog: QWidget | None

    def close(self) -> bool: ...


class ProjectFiles:
    """The File menu and the settings of the window (`host`): import, export, new and open project; a
    new or opened project gets a new window from `open_window`, so this never imports the window."""

    def __init__(
        self,
        host: FilesHost,
        model: DeskModel,
        settings: AppSettings,
        service: LinkService,
        links: BackgroundLinking,
        open_window: Callable[[object], QWidget],
    ):
        self.host, self.model, self.settings, self.service, self.links = host, model, settings, service, links
        self.project = model.project
        self.open_window = open_window

    def run_dialog_job(self, title: str, work, on_done, on_error=None) -> Job:
        job = run_in_thread(work, title)
        dialog = progress_for(self.host, job, title)
        job.signals.returned.connect(on_done)
        job.signals.errored.connect(on_error or (lambda exc: show_error(self.host, exc, context=title)))
        dialog.show()
        self.host.menu_job = job  # kept alive (and visible to tests) until the next menu job
        return job

    def build_menu(self, file_menu) -> None:
        file_menu.addAction(self.host.key_action("New project…", ["Ctrl+N"], self.new_project))
        file_menu.addAction(self.host.key_action("Open project…", ["Ctrl+O"], self.open_project))
        file_menu.addSeparator()
        self.act_import_corpus = self.host.key_action("Import corpus…", ["Ctrl+I"], self.import_corpus)
        self.act_import_kb = self.host.key_action("Import knowledge base…", ["Ctrl+Shift+I"], self.import_kb)
        self.act_export = self.host.key_action("Export…", ["Ctrl+E"], self.export)
        self.act_export_kb = self.host.key_action("Export knowledge base…", [], self.export_knowledge_base)
        file_menu.addActions(
            [self.act_import_corpus, self.act_import_kb, self.act_export, self.act_export_kb]
        )
        file_menu.addSeparator()
        file_menu.addAction(self.host.key_action("Quit", ["Ctrl+Q"], self.host.close))

    def import_corpus(self) -> ImportCorpusDialog:
        """File > Import corpus: the dialog asks for the file, `import_corpus_from` does the work."""
        dialog = ImportCorpusDialog(self.host)
        dialog.accepted.connect(
            lambda: self.import_corpus_from(dialog.path, dialog.fmt, dialog.split_box.currentText())
        )
        self.host.menu_dialog = dialog
        dialog.open()
        return dialog

    def import_corpus_from(self, path: Path, fmt: str, split: str = "", on_invalid: str = "error") -> Job:
        """Import through core.jobs.io.corpus; bad items under "error" open `offer_skip` (nothing stored)."""
        title = f"importing {path.name}"

        def work(progress, cancel):
            from core.jobs.io.corpus import import_corpus

            return import_corpus(
                self.project, path, fmt, split=split, on_invalid=on_invalid, progress=progress, cancel=cancel
            )

        def done(result) -> None:
            summary = result.summary
            self.host.statusBar().showMessage(
                f"{path.name}: {summary.added} documents added, {summary.skipped} skipped"
                + (
                    f", {result.report.problem_count} invalid items skipped"
                    if result.report.problem_count
                    else ""
                )
            )
            if result.report_file is not None or result.report.losses:
                self.host.report_dialog = _report_box(self.host, "Import", result.lines())
            self.host.document.reload_queue()
            self.links.prefetch()

        def failed(exc: BaseException) -> None:
            from core.formats import InvalidItemsError

            if isinstance(exc, InvalidItemsError) and on_invalid == "error":
                self.offer_skip(path, fmt, split, exc)
            else:
                show_error(self.host, exc, context=title)

        return self.run_dialog_job(title, work, done, failed)

    def offer_skip(self, path: Path, fmt: str, split: str, exc: BaseException) -> QMessageBox:
        """The file has bad items and nothing was stored: list them, and offer to import the rest with a
        report of each skipped item (the CLI's --on-invalid skip)."""
        report = exc.report  # type: ignore[attr-defined]
        noun = "item" if report.problem_count == 1 else "items"
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "Bad items in the file",
            f"{path.name}: {report.problem_count} {noun} cannot be read; nothing was imported.",
            QMessageBox.StandardButton.Cancel,
            self.host,
        )
        box.setInformativeText(
            "Skip and report imports the rest and writes each skipped item to a report in the project's "
            "logs folder."
        )
        box.setDetailedText("\n".join(str(problem) for problem in report.problems))
        skip = box.addButton("Skip and report", QMessageBox.ButtonRole.AcceptRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)

        def clicked(button) -> None:
            if button is skip:
                self.import_corpus_from(path, fmt, split, "skip")

        box.buttonClicked.connect(clicked)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.open()
        self.host.report_dialog = box
        return box

    def import_kb(self) -> ImportKbDialog:
        dialog = ImportKbDialog(self.host)
        dialog.accepted.connect(
            lambda: self.import_kb_from(dialog.path, dialog.fmt, names_only=dialog.names_only.isChecked())
        )
        self.host.menu_dialog = dialog
        dialog.open()
        return dialog

    def import_kb_from(self, path: Path, fmt: str, *, names_only: bool = False) -> Job:
        """Import through core.jobs.io.kb_import as `curalink kb import` does; its warnings (an OBO
        `import:` not followed, how mesh-tsv records were typed) are shown as the CLI prints them."""

        def work(progress, cancel):
            from core.jobs.io.kb_import import import_kb

            return import_kb(self.project, path, fmt, names_only=names_only, progress=progress, cancel=cancel)

        def done(report) -> None:
            self.host.statusBar().showMessage(
                f"{path.name}: {report.names} names added to {report.present} concepts"
                if names_only
                else f"{path.name}: {report.added} concepts, {report.names} names added"
            )
            if report.warnings:
                self.host.report_dialog = _report_box(self.host, "Import knowledge base", report.lines())
            self.service.reset()
            self.links.device_label.setText(MODELS_NOT_LOADED)
            self.model.concepts.clear()
            self.links.update_models_label()

        return self.run_dialog_job(f"importing {path.name}", work, done)

    def export(self) -> ExportDialog:
        dialog = ExportDialog(self.host, splits=self.project.documents.splits())
        dialog.accepted.connect(
            lambda: self.export_to(
                dialog.path,
                dialog.fmt,
                accepted_only=dialog.accepted_only.isChecked(),
                curated_only=dialog.curated_only.isChecked(),
                split=dialog.split,
            )
        )
        self.host.menu_dialog = dialog
        dialog.open()
        return dialog

    def export_to(
        self,
        path: Path,
        fmt: str,
        *,
        accepted_only: bool = False,
        curated_only: bool = False,
        split: str | None = None,
    ) -> Job:
        """Write the corpus with the same filters as `curalink export` (see `curated_documents`)."""

        def work(progress, cancel):
            from core.jobs.io.corpus import export_corpus

            return export_corpus(
                self.project,
                path,
                fmt,
                accepted_only=accepted_only,
                curated_only=curated_only,
                split=split or None,
            )

        def done(result) -> None:
            self.host.statusBar().showMessage(f"exported {result.count} documents to {path}", 6000)
            if result.report.losses:  # what the format could not keep, as `curalink export` prints it
                self.host.report_dialog = _report_box(self.host, "Export", result.lines())

        return self.run_dialog_job(f"exporting {path.name}", work, done)

    KB_EXPORT_FILTERS = {
        "TSV, every field (*.tsv)": "tsv",
        "OBO (*.obo)": "obo",
        "MEDIC / DNorm (*.txt)": "medic",
    }

    def export_knowledge_base(self) -> QFileDialog:
        """File > Export knowledge base: the KB with the curators' synonyms, as `curalink kb export
        --with-curator-synonyms` writes it; the format follows the chosen file type."""
        dialog = QFileDialog(self.host, "Export knowledge base")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
        dialog.setNameFilters(list(self.KB_EXPORT_FILTERS))
        dialog.setDefaultSuffix("tsv")
        dialog.filterSelected.connect(lambda f: dialog.setDefaultSuffix(f.rsplit("*.", 1)[-1].rstrip(")")))
        dialog.fileSelected.connect(
            lambda path: self.export_knowledge_base_to(
                Path(path), self.KB_EXPORT_FILTERS.get(dialog.selectedNameFilter(), "tsv")
            )
        )
        self.host.menu_dialog = dialog
        dialog.open()
        return dialog

    def export_knowledge_base_to(self, path: Path, fmt: str, *, with_curator_synonyms: bool = True) -> Job:
        def work(progress, cancel):
            from core.jobs.io.kb_export import export_kb

            return export_kb(
                self.project,
                path,
                fmt=fmt,
                with_curator_synonyms=with_curator_synonyms,
                progress=progress,
                cancel=cancel,
            )

        return self.run_dialog_job(
            f"exporting {path.name}",
            work,
            lambda count: self.host.statusBar().showMessage(f"exported {count} concepts to {path}", 6000),
        )

    def open_settings(self) -> SettingsDialog:
        dialog = SettingsDialog(self.settings, self.host)
        dialog.accepted.connect(lambda: self.apply_settings(dialog))
        self.host.menu_dialog = dialog
        dialog.open()
        return dialog

    def apply_settings(self, dialog: SettingsDialog) -> None:
        """Persist the dialog's values and reconfigure the linker (models reload on next use)."""
        dialog.save()
        before = (self.service.device, self.service.candidates, self.service.use_reranker)
        self.service.configure(
            device=self.settings.device,
            candidates=self.settings.candidates,
            use_reranker=self.settings.use_reranker,
        )
        if before != (self.service.device, self.service.candidates, self.service.use_reranker):
            self.links.device_label.setText(MODELS_NOT_LOADED)
        self.host.document.refresh()

    def new_project(self) -> None:
        self._choose_project("Folder for the new project", "new project", create=True)

    def open_project(self) -> None:
        self._choose_project("Open a Curalink project", "open project", create=False)

    def _choose_project(self, title: str, context: str, *, create: bool) -> None:
        """A folder chosen, the project made (`create`) or opened there, and a window on it instead."""
        folder = QFileDialog.getExistingDirectory(self.host, title)
        if folder:
            from core.store import Project

            try:
                self.switch_project((Project.create if create else Project.open)(Path(folder)))
            except Exception as exc:  # noqa: BLE001 - shown to the curator
                show_error(self.host, exc, context=context)

    def switch_project(self, project: Project):
        from app.console import log_to_project

        log_to_project(project.path)
        self.settings.last_project = project.path
        window = self.open_window(project)
        window.show()
        self.host.close()
        return window


def _report_box(parent, title: str, lines: list[str]) -> QMessageBox:
    """A window-modal message with an import's or an export's summary lines, not blocking the desk."""
    box = QMessageBox(QMessageBox.Icon.Information, title, lines[0], QMessageBox.StandardButton.Ok, parent)
    box.setInformativeText("\n".join(line.strip() for line in lines[1:]))
    box.setWindowModality(Qt.WindowModality.WindowModal)
    box.open()
    return box
