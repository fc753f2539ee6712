"""Persisted preferences (QSettings): who curates, how many candidates, which device and models."""

from __future__ import annotations

import getpass
import json
from pathlib import Path

from PySide6.QtCore import QSettings

DEVICES = ("auto", "cpu", "cuda")
ZOOM_RANGE = (-6, 20)  # points below / above the abstract's base size


class AppSettings:
    """Typed access to QSettings, so a missing or garbled value falls back to a sane default."""

    def __init__(self, settings: QSettings | None = None):
        self._settings = settings or QSettings("Curalink", "Curalink")

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
        try:
            fallback = getpass.getuser()
        except (KeyError, OSError):
            fallback = "curator"
        return self._get("curator", fallback) or fallback

    @curator.setter
    def curator(self, value: str) -> None:
        self._settings.setValue("curator", value.strip())

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

    def view_state(self, project_key: str) -> dict:
        """The queue's filters, order and current document as last left in one project ({} if none or
        garbled). Keyed by the project's identity (core.store.desk_lookup.project_identity), not its
        path: the state follows a moved folder and stays each curator's own."""
        try:
            value = json.loads(self._get(f"desk_view/{project_key}", "{}"))
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def set_view_state(self, project_key: str, state: dict) -> None:
        self._settings.setValue(f"desk_view/{project_key}", json.dumps(state))

    def sync(self) -> None:
        self._settings.sync()
