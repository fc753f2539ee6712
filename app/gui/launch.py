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
    # No application display name: Qt appends it to every window title ("Curalink — demo — Curalink").
    app.setDesktopFileName("curalink")
    icon = resources_dir() / "icons" / "curalink.svg"
    if icon.is_file():
        app.setWindowIcon(QIcon(str(icon)))
    from app.gui.theme import follow_system

    style = resources_dir() / "style.qss"
    follow_system(app, style.read_text(encoding="utf-8") if style.is_file() else "")
    return app


def open_project_window(project_path: Path, settings=None, *, ask_curator: bool = False):
    """Open a project (log to its logs/ folder) in a new main window; with `ask_curator` (the desk's own
    start, not a smoke run or a bench) ask who is curating when no name was ever given and
    $CURALINK_CURATOR gives none (app.gui.curator_identity)."""
    from app.console import log_to_project
    from app.gui.curator_identity import ask_curator_once
    from app.gui.main_window import MainWindow
    from app.gui.settings import AppSettings
    from core.store import Project

    settings = settings or AppSettings()
    project = Project.open(project_path)
    log_to_project(project.path)
    settings.last_project = project.path
    window = MainWindow(project, settings)
    window.show()
    if ask_curator:
        ask_curator_once(window)
    return window


def start_with_demo(
    settings=None, *, path: Path | None = None, train_seconds: float | None = None, ask_curator: bool = False
):
    """Build (or reopen) the demo project off the UI thread behind a progress dialog, then open it.

    The dialog is the only window while the demo builds, and Qt quits when the last window closes: so
    quitting on the last window is off until the main window is shown (it was the reason a first start
    ended with exit code 0 and no window). Returns the job (its `window` is set once open).
    """
    from app.demo import DEMO_TRAINING_SECONDS, build_demo_project, default_demo_path
    from app.gui.workers import run_in_thread

    app = application()
    path = path or default_demo_path()
    budget = DEMO_TRAINING_SECONDS if train_seconds is None else train_seconds

    def work(progress, cancel):
        build_demo_project(path, train_seconds=budget, progress=progress, cancel=cancel).close()
        return path

    app.setQuitOnLastWindowClosed(False)
    job = run_in_thread(work, "building the demo project")
    job.window = None
    dialog = _demo_progress(job, f"Preparing the demo project (first start only, about {budget + 15:.0f} s)")

    def opened(built: Path) -> None:
        try:
            job.window = open_project_window(built, settings, ask_curator=ask_curator)
        except Exception as exc:  # noqa: BLE001 - the curator sees a dialog, the log gets the trace
            log.exception("could not open the demo project")
            _fatal(exc, "opening the demo project")
        finally:
            app.setQuitOnLastWindowClosed(True)

    job.signals.returned.connect(opened)
    job.signals.errored.connect(lambda exc: _fatal(exc, "building the demo project"))
    job.signals.cancelled.connect(app.quit)
    dialog.show()
    start_with_demo.job = job  # keep the job (and its signals) alive until it finishes
    return job


def _demo_progress(job, title: str):
    """The progress dialog of the demo build: the current stage and the seconds gone, every second."""
    from PySide6.QtCore import QElapsedTimer, QTimer

    from app.gui.dialogs import progress_for

    dialog = progress_for(None, job, title)
    clock = QElapsedTimer()
    clock.start()
    stage = {"message": "starting"}
    job.signals.progress.connect(
        lambda _done, _total, message: stage.update(message=message or stage["message"])
    )

    def show() -> None:
        dialog.setLabelText(f"{title}\n{stage['message']}\n{clock.elapsed() // 1000} s")

    ticker = QTimer(dialog)
    ticker.setInterval(1000)
    ticker.timeout.connect(show)
    ticker.start()
    job.signals.progress.connect(lambda *_args: show())
    show()
    return dialog


def _fatal(exc: BaseException, context: str) -> None:
    """An error that leaves no window to work in: show it, then quit when it is closed."""
    from app.gui.dialogs import show_error

    box = show_error(None, exc, context=context)
    box.finished.connect(QApplication.quit)


def _require_window_system() -> None:
    """Refuse, in one line, a start whose X11 window Qt would abort on (a missing system library)."""
    from app.gui.platform_check import xcb_problem
    from core.errors import CuralinkError

    platform = os.environ.get("QT_QPA_PLATFORM", "")
    if (platform and not platform.startswith("xcb")) or (os.environ.get("WAYLAND_DISPLAY") and not platform):
        return  # another plugin (offscreen, Wayland) will be tried: nothing known to check
    problem = xcb_problem()
    if problem is not None:
        raise CuralinkError(f"the desk cannot open a window: {problem}")


def launch_gui(
    project_path: Path | None, *, demo_train_seconds: float | None = None, smoke_seconds: float | None = None
) -> int:
    """Run the application until its last window closes; the exit status for the CLI.

    Without a project (and no last one), the demo is built first with `demo_train_seconds` of
    retriever training (the demo's default when None). With `smoke_seconds`, quit once the desk is
    usable and print its start-up times (app.gui.smoke). No writable settings folder (or, for the demo,
    data folder) raises NoWritableHome before any window: the CLI prints it as one line."""
    from app.gui.dialogs import show_error
    from app.gui.settings import AppSettings, require_writable, settings_folder

    require_writable(settings_folder(), "settings")
    _require_window_system()
    settings = AppSettings()
    target = project_path or settings.last_project
    opening = target is not None and (Path(target) / "curalink.db").is_file()
    if not opening and project_path is None:
        from app.demo import default_demo_path

        require_writable(default_demo_path().parent, "demo project")
    app = application()
    watcher = None
    if smoke_seconds is not None:
        from app.gui.smoke import watch

        watcher = watch(app, smoke_seconds)
    try:
        if opening:
            open_project_window(Path(target), settings, ask_curator=smoke_seconds is None)
        elif project_path is not None:
            from core.errors import ProjectError

            raise ProjectError(f"{project_path}: not a Curalink project (no curalink.db)")
        else:
            start_with_demo(settings, train_seconds=demo_train_seconds, ask_curator=smoke_seconds is None)
    except Exception as exc:  # noqa: BLE001 - the curator sees a dialog, the log gets the trace
        log.exception("could not start")
        if watcher is not None:
            watcher.finish(1, f"could not start: {exc}")
            return 1
        box = show_error(None, exc, context="starting Curalink")
        box.finished.connect(app.quit)
    return app.exec()
