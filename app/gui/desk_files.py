"""The desk's File and Edit menus: import, export, settings, new / open project. Long work runs in a
background job behind a progress dialog with a cancel button."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog

from app.gui.dialogs import (
    ExportDialog,
    ImportCorpusDialog,
    ImportKbDialog,
    SettingsDialog,
    progress_for,
    show_error,
)
from app.gui.workers import MODELS_NOT_LOADED, Job, run_in_thread


class ProjectFilesMixin:
    """Mixed into `MainWindow`: needs its project, settings, status bar, link service and labels."""

    def _run_dialog_job(self, title: str, work, on_done) -> Job:
        job = run_in_thread(work, title)
        dialog = progress_for(self, job, title)
        job.signals.returned.connect(on_done)
        job.signals.errored.connect(lambda exc: show_error(self, exc, context=title))
        dialog.show()
        self.menu_job = job  # kept alive (and visible to tests) until the next menu job
        return job

    def _build_file_menu(self, file_menu) -> None:
        file_menu.addAction(self._action("New project…", ["Ctrl+N"], self.new_project))
        file_menu.addAction(self._action("Open project…", ["Ctrl+O"], self.open_project))
        file_menu.addSeparator()
        self.act_import_corpus = self._action("Import corpus…", ["Ctrl+I"], self.import_corpus)
        self.act_import_kb = self._action("Import knowledge base…", ["Ctrl+Shift+I"], self.import_kb)
        self.act_export = self._action("Export…", ["Ctrl+E"], self.export)
        self.act_export_kb = self._action("Export knowledge base…", [], self.export_knowledge_base)
        file_menu.addActions(
            [self.act_import_corpus, self.act_import_kb, self.act_export, self.act_export_kb]
        )
        file_menu.addSeparator()
        file_menu.addAction(self._action("Quit", ["Ctrl+Q"], self.close))

    def import_corpus(self) -> ImportCorpusDialog:
        """File > Import corpus: the dialog asks for the file, `import_corpus_from` does the work."""
        dialog = ImportCorpusDialog(self)
        dialog.accepted.connect(
            lambda: self.import_corpus_from(dialog.path, dialog.fmt, dialog.split_box.currentText())
        )
        self.menu_dialog = dialog
        dialog.open()
        return dialog

    def import_corpus_from(self, path: Path, fmt: str, split: str = "") -> Job:
        def work(progress, cancel):
            from core.formats import read_corpus

            return self.project.import_documents(
                read_corpus(path, fmt),
                source=str(path),
                fmt=fmt,
                split=split,
                progress=progress,
                cancel=cancel,
            )

        def done(summary) -> None:
            self.statusBar().showMessage(
                f"{path.name}: {summary.added} documents added, {summary.skipped} skipped"
            )
            self.reload_queue()
            self.prefetch()

        return self._run_dialog_job(f"importing {path.name}", work, done)

    def import_kb(self) -> ImportKbDialog:
        dialog = ImportKbDialog(self)
        dialog.accepted.connect(lambda: self.import_kb_from(dialog.path, dialog.fmt))
        self.menu_dialog = dialog
        dialog.open()
        return dialog

    def import_kb_from(self, path: Path, fmt: str) -> Job:
        def work(progress, cancel):
            from core.kb import load_kb

            concepts = load_kb(path, fmt, progress=progress, cancel=cancel)
            return self.project.import_concepts(
                concepts, source=str(path), fmt=fmt, progress=progress, cancel=cancel
            )

        def done(summary) -> None:
            self.statusBar().showMessage(
                f"{path.name}: {summary.added} concepts, {summary.names} names added"
            )
            self.service.reset()
            self.device_label.setText(MODELS_NOT_LOADED)
            self.concepts.clear()
            self._update_models_label()

        return self._run_dialog_job(f"importing {path.name}", work, done)

    def export(self) -> ExportDialog:
        dialog = ExportDialog(self, splits=self.project.splits())
        dialog.accepted.connect(
            lambda: self.export_to(
                dialog.path,
                dialog.fmt,
                accepted_only=dialog.accepted_only.isChecked(),
                curated_only=dialog.curated_only.isChecked(),
                split=dialog.split,
            )
        )
        self.menu_dialog = dialog
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
            from core.formats import write_corpus
            from core.store.curation import curated_documents

            documents = curated_documents(
                self.project, accepted_only=accepted_only, curated_only=curated_only, split=split or None
            )
            return write_corpus(documents, path, fmt)

        return self._run_dialog_job(
            f"exporting {path.name}",
            work,
            lambda count: self.statusBar().showMessage(f"exported {count} documents to {path}", 6000),
        )

    KB_EXPORT_FILTERS = {
        "TSV, every field (*.tsv)": "tsv",
        "OBO (*.obo)": "obo",
        "MEDIC / DNorm (*.txt)": "medic",
    }

    def export_knowledge_base(self) -> QFileDialog:
        """File > Export knowledge base: the KB with the curators' synonyms, as `curalink kb export
        --with-curator-synonyms` writes it; the format follows the chosen file type."""
        dialog = QFileDialog(self, "Export knowledge base")
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
        self.menu_dialog = dialog
        dialog.open()
        return dialog

    def export_knowledge_base_to(self, path: Path, fmt: str, *, with_curator_synonyms: bool = True) -> Job:
        def work(progress, cancel):
            from core.jobs.kb_export import export_kb

            return export_kb(
                self.project,
                path,
                fmt=fmt,
                with_curator_synonyms=with_curator_synonyms,
                progress=progress,
                cancel=cancel,
            )

        return self._run_dialog_job(
            f"exporting {path.name}",
            work,
            lambda count: self.statusBar().showMessage(f"exported {count} concepts to {path}", 6000),
        )

    def open_settings(self) -> SettingsDialog:
        dialog = SettingsDialog(self.settings, self)
        dialog.accepted.connect(lambda: self.apply_settings(dialog))
        self.menu_dialog = dialog
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
            self.device_label.setText(MODELS_NOT_LOADED)
        self.refresh()

    def new_project(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Folder for the new project")
        if folder:
            from core.store import Project

            try:
                self.switch_project(Project.create(Path(folder)))
            except Exception as exc:  # noqa: BLE001 - shown to the curator
                show_error(self, exc, context="new project")

    def open_project(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Open a Curalink project")
        if folder:
            from core.store import Project

            try:
                self.switch_project(Project.open(Path(folder)))
            except Exception as exc:  # noqa: BLE001 - shown to the curator
                show_error(self, exc, context="open project")

    def switch_project(self, project):
        from app.console import log_to_project
        from app.gui.main_window import MainWindow

        log_to_project(project.path)
        self.settings.last_project = project.path
        window = MainWindow(project, self.settings, background=self.background)
        window.show()
        self.close()
        return window
