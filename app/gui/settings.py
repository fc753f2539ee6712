"""Persisted preferences (QSettings): who curates, how many candidates, which device and models."""

from __future__ import annotations

import getpass
import json
import os
import tempfile
from pathlib import Path

from PySide6.QtCore import QByteArray, QObject, QSettings, QStandardPaths, Signal

from core.errors import CuralinkError

DEVICES = ("auto", "cpu", "cuda")
ZOOM_RANGE = (-6, 20)  # points below / above the abstract's base size
CURATOR_VARIABLE = "CURALINK_CURATOR"  # who curates, for headless runs and tests: the desk does not ask


class NoWritableHome(CuralinkError):
    """The desk has nowhere to keep its settings (or to build the demo project)."""


def require_writable(folder: Path | None, what: str) -> Path:
    """`folder`, created if need be, once a file could be made in it; else NoWritableHome in one line.

    Checked before the first window: without it Qt drops every setting silently, and a first start
    fails deep inside the demo build with a traceback."""
    home = os.environ.get("HOME") or "(unset)"
    remedy = "set HOME (or the XDG_* folders) to a writable folder"
    if folder is None:
        raise NoWritableHome(f"no folder for the {what} (HOME={home}); {remedy}")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise NoWritableHome(
            f"cannot write the {what} folder {folder}: {reason} (HOME={home}); {remedy}"
        ) from None
    return folder


def settings_folder() -> Path | None:
    """Where QSettings("Curalink", "Curalink") keeps its file on this system (None: Qt knows none)."""
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericConfigLocation)
    return Path(base) / "Curalink" if base else None


def login_name() -> str:
    """The name the first-start question offers (and the fallback when nobody answered it)."""
    try:
        return getpass.getuser() or "curator"
    except (KeyError, OSError):
        return "curator"


class SettingsSignals(QObject):
    curatorChanged = Signal(str)  # the new name, when another curator takes over


class AppSettings:
    """Typed access to QSettings, so a missing or garbled value falls back to a sane default."""

    def __init__(self, settings: QSettings | None = None):
        self._settings = settings or QSettings("Curalink", "Curalink")
        self._switched = ""  # a name set in this session wins over $CURALINK_CURATOR
        self.signals = SettingsSignals()

    def _get(self, key: str, default, kind=str):
        value = self._settings.value(key, default)
        try:
            if kind is bool and isinstance(value, str):
                return value.lower() in ("1", "true", "yes")
            return kind(value)
        except (TypeError, ValueError):
            return default

    @property
    def curator(self) -> str:
        """Who signs the decisions: the name switched to in this session, else $CURALINK_CURATOR, else
        the name given once at the first start, else the login name."""
        return (
            self._switched
            or os.environ.get(CURATOR_VARIABLE, "").strip()
            or self._get("curator", "")
            or login_name()
        )

    @curator.setter
    def curator(self, value: str) -> None:
        before = self.curator
        self._switched = value.strip()
        self._settings.setValue("curator", self._switched)
        if self.curator != before:
            self.signals.curatorChanged.emit(self.curator)

    @property
    def curator_chosen(self) -> bool:
        """Whether a name was given (stored, or $CURALINK_CURATOR): else the desk asks once at start."""
        return bool(
            self._switched or os.environ.get(CURATOR_VARIABLE, "").strip() or self._get("curator", "")
        )

    @property
    def candidates(self) -> int:
        return max(1, min(64, self._get("candidates", 16, int)))

    @candidates.setter
    def candidates(self, value: int) -> None:
        self._settings.setValue("candidates", int(value))

    @property
    def device(self) -> str:
        value = self._get("device", "auto")
        return value if value in DEVICES else "auto"

    @device.setter
    def device(self, value: str) -> None:
        self._settings.setValue("device", value)

    @property
    def use_reranker(self) -> bool:
        return self._get("use_reranker", True, bool)

    @use_reranker.setter
    def use_reranker(self, value: bool) -> None:
        self._settings.setValue("use_reranker", bool(value))

    @property
    def prefetch(self) -> int:
        """How many upcoming documents the worker links ahead of the curator."""
        return max(0, self._get("prefetch", 5, int))

    @prefetch.setter
    def prefetch(self, value: int) -> None:
        self._settings.setValue("prefetch", int(value))

    @property
    def last_project(self) -> Path | None:
        value = self._get("last_project", "")
        return Path(value) if value else None

    @last_project.setter
    def last_project(self, value: Path | None) -> None:
        """Absolute: the next start may run from another working directory."""
        self._settings.setValue("last_project", str(Path(value).absolute()) if value else "")

    @property
    def abstract_zoom(self) -> int:
        """Points added to the abstract's text size (Ctrl+= / Ctrl+- / Ctrl+0), for every project."""
        return max(ZOOM_RANGE[0], min(ZOOM_RANGE[1], self._get("abstract_zoom", 0, int)))

    @abstract_zoom.setter
    def abstract_zoom(self, value: int) -> None:
        self._settings.setValue("abstract_zoom", int(value))

    @property
    def ncbi_api_key(self) -> str:
        """The key for NCBI E-utilities (10 requests a second instead of 3); else $NCBI_API_KEY."""
        return self._get("ncbi_api_key", "") or os.environ.get("NCBI_API_KEY", "")

    @ncbi_api_key.setter
    def ncbi_api_key(self, value: str) -> None:
        self._settings.setValue("ncbi_api_key", value.strip())

    @property
    def eutils_url(self) -> str:
        """Where E-utilities answers (NCBI's server unless a mirror, or a test's local server, is set)."""
        from core.jobs.io.eutils import DEFAULT_BASE_URL

        return self._get("eutils_url", "") or DEFAULT_BASE_URL

    @eutils_url.setter
    def eutils_url(self, value: str) -> None:
        self._settings.setValue("eutils_url", value.strip())

    def view_state(self, project_key: str) -> dict:
        """The queue's filters, order and current document as last left in one project ({} if none or
        garbled). Keyed by the project's identity (`project.desk.project_identity`), not its
        path: the state follows a moved folder and stays each curator's own."""
        try:
            value = json.loads(self._get(f"desk_view/{project_key}", "{}"))
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def set_view_state(self, project_key: str, state: dict) -> None:
        self._settings.setValue(f"desk_view/{project_key}", json.dumps(state))

    def window_state(self) -> tuple[bytes, bytes]:
        """The desk window's geometry and its panes' splitter state as last closed (b"" when never)."""
        return tuple(self._bytes(f"window/{key}") for key in ("geometry", "panes"))  # type: ignore[return-value]

    def set_window_state(self, geometry: bytes, panes: bytes) -> None:
        self._settings.setValue("window/geometry", QByteArray(geometry))
        self._settings.setValue("window/panes", QByteArray(panes))

    def _bytes(self, key: str) -> bytes:
        value = self._settings.value(key, b"")
        return bytes(value.data()) if isinstance(value, QByteArray) else value if isinstance(value, bytes) else b""

    def sync(self) -> None:
        self._settings.sync()
