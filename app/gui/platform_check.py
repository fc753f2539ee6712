"""Whether Qt's X11 (xcb) platform plugin can load here, and which system libraries it lacks.

Qt aborts the whole process ("could not load the Qt platform plugin xcb") when a library its xcb plugin
links against is missing, most often `libxcb-cursor0`, which PySide6 needs since Qt 6.5 and which many
Linux installs lack. The desk checks first, so that a missing package is one line naming it, and the
tests that need a real X server skip with the same reason instead of failing.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found", re.MULTILINE)


def _xcb_binaries() -> list[Path]:
    """The xcb plugin and the Qt library behind it, in a venv or the packaged app (empty if not found)."""
    try:
        import PySide6
    except ImportError:
        return []
    qt = Path(PySide6.__file__).resolve().parent / "Qt"
    found = [qt / "plugins" / "platforms" / "libqxcb.so", qt / "lib" / "libQt6XcbQpa.so.6"]
    return [path for path in found if path.is_file()]


def debian_package(soname: str) -> str:
    """Debian's package name for a shared library (its library packaging rule: libfoo.so.1 -> libfoo1,
    libfoo-x11.so.0 -> libfoo-x11-0)."""
    match = re.fullmatch(r"(.+)\.so\.(\d+)(?:\..*)?", soname)
    if not match:
        return soname
    base, major = match.group(1).lower(), match.group(2)
    return f"{base}-{major}" if base[-1].isdigit() else f"{base}{major}"


def missing_xcb_libraries() -> list[str]:
    """The shared libraries Qt's xcb plugin needs and the dynamic loader cannot find ([] when all are
    there, when this is not Linux, or when `ldd` or the plugin cannot be found: then Qt is left to try)."""
    if not sys.platform.startswith("linux") or shutil.which("ldd") is None:
        return []
    missing: dict[str, None] = {}
    for binary in _xcb_binaries():
        try:
            out = subprocess.run(
                ["ldd", str(binary)], capture_output=True, text=True, timeout=30, check=False
            ).stdout
        except (OSError, subprocess.SubprocessError):
            return []
        missing.update(dict.fromkeys(not_found(out)))
    return list(missing)


def not_found(ldd_output: str) -> list[str]:
    """The libraries `ldd` reports as not found, once each, in its order."""
    return list(dict.fromkeys(NOT_FOUND.findall(ldd_output)))


def xcb_problem() -> str | None:
    """One line saying why Qt cannot open an X11 window here, or None when nothing is known wrong."""
    missing = missing_xcb_libraries()
    if not missing:
        return None
    packages = " ".join(dict.fromkeys(debian_package(name) for name in missing))
    return (
        f"Qt's X11 platform plugin (xcb) cannot load: {', '.join(missing)} not installed; "
        f"on Debian or Ubuntu: sudo apt-get install {packages}"
    )
