"""GUI fixtures: the demo project is built once per session (about a minute) and copied per test."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import pytest  # noqa: E402
from PySide6.QtCore import QSettings  # noqa: E402

from app.gui.settings import AppSettings  # noqa: E402


@pytest.fixture
def demo_project(demo_template: Path, tmp_path: Path):
    from core.store import Project

    copy = tmp_path / "demo"
    shutil.copytree(demo_template, copy, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
    project = Project.open(copy)
    yield project
    project.close()


@pytest.fixture
def app_settings(tmp_path: Path) -> AppSettings:
    settings = AppSettings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    settings.curator = "tester"
    return settings


@pytest.fixture
def window(qtbot, demo_project, app_settings):
    """The real main window on a copy of the demo project, shown and active (shortcuts need that)."""
    from app.gui.main_window import MainWindow

    win = MainWindow(demo_project, app_settings, background=False)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow, timeout=2000)
    yield win
    win.service.shutdown()
