"""GUI fixtures: the demo project is built once per session (about a minute) and copied per test."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import pytest  # noqa: E402
from PySide6.QtCore import QSettings  # noqa: E402

from app.gui.settings import AppSettings  # noqa: E402


@pytest.fixture
def demo_project(demo):
    """An open copy of the demo project (tests/conftest.py's `demo`), under the name GUI tests use."""
    return demo


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


PACKAGES = [
    "xvfb",
    "libxcb-icccm4",
    "libxcb-keysyms1",
    "libxkbcommon-x11-0",
    "libxcb-cursor0",
    "libxcb-image0",
    "libxcb-render-util0",
    "libxcb-shape0",
    "libxcb-xinerama0",
    "libxcb-randr0",
]


def _xvfb() -> str:
    found = shutil.which("Xvfb")
    if found:
        return found
    allowed = os.environ.get("CURALINK_INSTALL_XVFB") == "1" or os.environ.get("CI") == "true"
    if allowed and hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=False, env=env, timeout=300)
        subprocess.run(["apt-get", "install", "-y", "-qq", *PACKAGES], check=False, env=env, timeout=600)
        found = shutil.which("Xvfb")
    if not found:
        pytest.skip("Xvfb is not installed (set CURALINK_INSTALL_XVFB=1 as root to install it)")
    return found


def _require_xcb_plugin() -> None:
    """Skip, naming the missing libraries, where Qt's xcb plugin cannot load (Qt would abort the test's
    process with "could not load the Qt platform plugin xcb" instead)."""
    from app.gui.platform_check import xcb_problem

    problem = xcb_problem()
    if problem is not None:
        pytest.skip(problem)


def _free_display() -> int:
    for number in range(90, 200):
        if not Path(f"/tmp/.X11-unix/X{number}").exists() and not Path(f"/tmp/.X{number}-lock").exists():
            return number
    pytest.skip("no free X display number")


@pytest.fixture
def xserver(tmp_path):
    """A private Xvfb display and the environment that points Qt (and QSettings) at it."""
    xvfb = _xvfb()
    _require_xcb_plugin()
    display = _free_display()
    server = subprocess.Popen(
        [xvfb, f":{display}", "-screen", "0", "1600x960x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while not Path(f"/tmp/.X11-unix/X{display}").exists():
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.skip("Xvfb did not start")
            time.sleep(0.1)
        (tmp_path / "runtime").mkdir(mode=0o700)
        yield {
            **os.environ,
            "DISPLAY": f":{display}",
            "QT_QPA_PLATFORM": "xcb",
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_RUNTIME_DIR": str(tmp_path / "runtime"),
        }
    finally:
        server.terminate()
        server.wait(timeout=10)
