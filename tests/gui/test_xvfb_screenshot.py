"""Start the application in a real X server (Xvfb), grab the window, save docs/screenshot.png."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

REPO = Path(__file__).resolve().parents[2]
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


def _free_display() -> int:
    for number in range(90, 200):
        if not Path(f"/tmp/.X11-unix/X{number}").exists() and not Path(f"/tmp/.X{number}-lock").exists():
            return number
    pytest.skip("no free X display number")


@pytest.mark.xvfb
def test_app_in_real_x_server_screenshot(demo_project, tmp_path):
    xvfb = _xvfb()
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
        out = REPO / "docs" / "screenshot.png"
        env = {
            **os.environ,
            "DISPLAY": f":{display}",
            "QT_QPA_PLATFORM": "xcb",
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_RUNTIME_DIR": str(tmp_path / "runtime"),
        }
        (tmp_path / "runtime").mkdir(mode=0o700)
        demo_project.close()
        result = subprocess.run(
            [sys.executable, "-m", "app.gui.screenshot", str(demo_project.path), str(out)],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr[-3000:]
    finally:
        server.terminate()
        server.wait(timeout=10)
    image = QImage(str(out))
    assert image.width() >= 1000 and image.height() >= 600
    colours = {image.pixel(x, y) for x in range(0, image.width(), 7) for y in range(0, image.height(), 7)}
    assert len(colours) > 200, f"only {len(colours)} distinct colours: blank window?"
