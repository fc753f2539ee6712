"""Project settings: small JSON values stored in the project database, so they move with the folder."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy.orm import Session

from core.errors import CuralinkError
from core.kb.namespaces import DEFAULT_NAMESPACES, SETTING_KEY
from core.store.access import StoreAccess
from core.store.schema import SettingRow


class SettingsStore:
    """Project settings as JSON values (`project.settings`)."""

    def __init__(self, store: StoreAccess):
        self._store = store

    def setting(self, key: str, default: Any = None) -> Any:
        with self._store.session() as session:
            row = session.get(SettingRow, key)
            return default if row is None else json.loads(row.value_json)

    def set_setting(self, key: str, value: Any) -> None:
        with self._store.session() as session:
            write_setting(session, key, value)

    def id_namespaces(self) -> tuple[str, ...]:
        """The preferred id namespaces, best first (default MeSH, then OMIM)."""
        value = self.setting(SETTING_KEY)
        if value is None:
            return DEFAULT_NAMESPACES
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise CuralinkError(
                f"project setting {SETTING_KEY!r} is not a list of namespace names: {value!r}"
            )
        return tuple(value)


def write_setting(session: Session, key: str, value: Any) -> None:
    """Insert or replace one setting inside the caller's transaction."""
    row = session.get(SettingRow, key)
    if row is None:
        session.add(SettingRow(key=key, value_json=json.dumps(value)))
    else:
        row.value_json = json.dumps(value)
