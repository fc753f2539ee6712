"""Start the desk: `curalink` with no subcommand lands here. First start builds the demo project in a
background worker behind a progress dialog, then opens it."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from PySide6.QtCore import QCoreApplication  # noqa: E402
from PySide6.QtGui import QIcon  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.resources import resources_dir  # noqa: E402

log = logging.getLogger(__name__)


def application() -> QApplication:
    """The one QApplication, with Curalink's names, icon and style sheet."""
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    # The linking worker runs Python between native calls; a 1 ms GIL switch interval (default 5 ms)
    # hands the UI thread the interpreter sooner, which shortens event-loop stalls while it links.
    sys.setswitchinterval(0.001)
    QCoreApplication.setOrganizationName("Curalink")
    QCoreApplication.setApplicationName("Curalink")
    app.setApplicationDisplayName("Curalink")
    app.setDesktopFileName("curalink")
    icon = resources_dir() / "icons" / "curalink.svg"
    if icon.is_file():
        app.setWindowIcon(QIcon(str(icon)))
    style = resources_dir() / "style.qss"
    if style.is_file():
        app.setStyleSheet(style.read_text(encoding="utf-8"))
    return app


def open_project_window(project_path: Path, settings=None):
    """Open a project (log to its logs/ folder) in a new main window."""
    from app.console import log_to_project
    from app.gui.main_window import MainWindow
    from app.gui.settings import AppSettings
    from core.store import Project

    settings = settings or AppSettings()
    project = Project.open(project_path)
    log_to_project(project.path)
    settings.last_project = project.path
    window = MainWindow(project, settings)
    window.show()
    return window


def start_with_demo(settings=None) -> None:
    """Build (or reopen) the demo project off the UI thread, then open it."""
    from app.demo import build_demo_project, default_demo_path
    from app.gui.dialogs import progress_for, show_error
    from app.gui.workers import run_in_thread

    path = default_demo_path()

    def work(progress, cancel):
        build_demo_project(path, progress=progress, cancel=cancel).close()
        return path

    job = run_in_thread(work, "building the demo project")
    dialog = progress_for(None, job, "Preparing the demo project (about a minute, first start only)")
    job.signals.finished.connect(lambda built: open_project_window(built, settings))
    job.signals.failed.connect(lambda exc: show_error(None, exc, context="building the demo project"))
    job.signals.cancelled.connect(QApplication.quit)
    dialog.show()
    start_with_demo.job = job  # keep the job (and its signals) alive until it finishes


def launch_gui(project_path: Path | None) -> int:
    """Run the application until its last window closes; the exit status for the CLI."""
    from app.gui.dialogs import show_error
    from app.gui.settings import AppSettings

    app = application()
    settings = AppSettings()
    target = project_path or settings.last_project
    try:
        if target is not None and (Path(target) / "curalink.db").is_file():
            open_project_window(Path(target), settings)
        elif project_path is not None:
            from core.errors import ProjectError

            raise ProjectError(f"{project_path}: not a Curalink project (no curalink.db)")
        else:
            start_with_demo(settings)
    except Exception as exc:  # noqa: BLE001 - the curator sees a dialog, the log gets the trace
        log.exception("could not start")
        box = show_error(None, exc, context="starting Curalink")
        box.finished.connect(app.quit)
    return app.exec()
