"""Where the bundled resources live: next to the source tree, or inside a one-folder build."""

from __future__ import annotations

import sys
from pathlib import Path


def resources_dir() -> Path:
    frozen_root = getattr(sys, "_MEIPASS", None)
    if frozen_root:
        return Path(frozen_root) / "resources"
    return Path(__file__).resolve().parents[1] / "resources"


def demo_dir() -> Path:
    return resources_dir() / "demo"
