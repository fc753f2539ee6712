"""Start the application in a real X server (Xvfb) and grab the window.

The grab goes to a temporary folder; `CURALINK_UPDATE_SCREENSHOT=1` writes it to docs/screenshot.png,
the README's picture, so a test run does not rewrite a tracked file.
"""

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


@pytest.mark.xvfb
def test_app_in_real_x_server_screenshot(demo_project, xserver, tmp_path):
    update = os.environ.get("CURALINK_UPDATE_SCREENSHOT") == "1"
    out = REPO / "docs" / "screenshot.png" if update else tmp_path / "screenshot.png"
    demo_project.close()
    result = subprocess.run(
        [sys.executable, "-m", "bench.gui.screenshot", str(demo_project.path), str(out)],
        cwd=REPO,
        env=xserver,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    image = QImage(str(out))
    assert image.width() >= 1000 and image.height() >= 600
    colours = {image.pixel(x, y) for x in range(0, image.width(), 7) for y in range(0, image.height(), 7)}
    assert len(colours) > 200, f"only {len(colours)} distinct colours: blank window?"


@pytest.mark.xvfb
def test_curalink_without_subcommand_opens_the_window(demo_project, xserver):
    """`curalink -p DIR` (no subcommand) maps the main window on the X server, titled after the project."""
    xwininfo = shutil.which("xwininfo")
    if xwininfo is None:
        pytest.skip("xwininfo (x11-utils) is not installed")
    curalink = Path(sys.executable).with_name("curalink")
    command = [str(curalink)] if curalink.is_file() else [sys.executable, "-m", "app.cli"]
    demo_project.close()
    app = subprocess.Popen(
        [*command, "-p", str(demo_project.path)],
        cwd=REPO,
        env=xserver,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    title = f"Curalink — {demo_project.path.name}"
    try:
        deadline = time.monotonic() + 60
        tree = ""
        while title not in tree:
            assert app.poll() is None, app.stderr.read()[-3000:] if app.stderr else "curalink exited"
            assert time.monotonic() < deadline, f"no window titled {title!r}:\n{tree[-2000:]}"
            time.sleep(0.5)
            tree = subprocess.run(
                [xwininfo, "-root", "-tree"], env=xserver, capture_output=True, text=True, timeout=10
            ).stdout
        line = next(line for line in tree.splitlines() if title in line)
        shown_title = line.split('"')[1]
        assert shown_title.count("Curalink") == 1, line  # the title names the application once
        width, height = (int(v) for v in line.split()[-2].split("+")[0].split("x"))
        assert width >= 1000 and height >= 600, line
    finally:
        app.terminate()
        app.wait(timeout=20)
