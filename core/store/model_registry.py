"""The model registry: versions of each kind, which one is in force, promotion.

A row stores its folder relative to the project (`models/<kind>/<version>`, core.locations), and rows
come back with `path` resolved against where the project is now, so callers can open `row.path` as is.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import select, update
from sqlalchemy.exc import OperationalError

from core.errors import CuralinkError, ProjectError
from core.locations import relative_to_project, resolve_model_folder, upgrade_base_model_reference
from core.store.access import StoreAccess
from core.store.schema import (
    ModelVersionRow,
)

log = logging.getLogger(__name__)

_MODEL_CONFIGS = ("config.json", "reranker.json")


@dataclass(frozen=True)
class ModelVersion:
    """A registered model version, detached from the database, with `path` resolved in this project now."""

    id: int
    kind: str
    version: str
    path: str
    status: str
    metrics_json: str
    kb_fingerprint: str
    data_fingerprint: str
    parent_version: str
    created_at: datetime


class ModelRegistry:
    """The model versions of the project and which one is active per kind (`project.models`)."""

    def __init__(self, store: StoreAccess):
        self._store = store

    def register_model(
        self,
        kind: str,
        version: str,
        path: Path,
        *,
        metrics: dict | None = None,
        kb_fingerprint: str = "",
        data_fingerprint: str = "",
        parent_version: str = "",
        status: str = "candidate",
    ) -> None:
        """`path` (absolute or relative to the working directory) must lie inside the project."""
        with self._store.session() as session:
            session.add(
                ModelVersionRow(
                    kind=kind,
                    version=version,
                    path=relative_to_project(self._store.path, path),
                    status=status,
                    metrics_json=json.dumps(metrics or {}),
                    kb_fingerprint=kb_fingerprint,
                    data_fingerprint=data_fingerprint,
                    parent_version=parent_version,
                )
            )

    def promote_model(self, kind: str, version: str) -> None:
        """Make one version the active one of its kind; the previous active one is retired, not deleted."""
        with self._store.session() as session:
            target = session.scalar(
                select(ModelVersionRow).where(
                    ModelVersionRow.kind == kind, ModelVersionRow.version == version
                )
            )
            if target is None:
                raise CuralinkError(f"no {kind} model version {version!r}")
            session.execute(
                update(ModelVersionRow)
                .where(ModelVersionRow.kind == kind, ModelVersionRow.status == "active")
                .values(status="retired")
            )
            target.status = "active"

    def active_model(self, kind: str) -> ModelVersion | None:
        with self._store.session() as session:
            row = session.scalar(
                select(ModelVersionRow)
                .where(ModelVersionRow.kind == kind, ModelVersionRow.status == "active")
                .order_by(ModelVersionRow.id.desc())
            )
        return self._located(row) if row is not None else None

    def model_versions(self, kind: str | None = None) -> list[ModelVersion]:
        with self._store.session() as session:
            query = select(ModelVersionRow).order_by(ModelVersionRow.id)
            if kind:
                query = query.where(ModelVersionRow.kind == kind)
            rows = list(session.scalars(query))
        return [self._located(row) for row in rows]

    def _located(self, row: ModelVersionRow) -> ModelVersion:
        """The row as a value, with `path` resolved to the version's folder in this project, now."""
        return ModelVersion(
            row.id,
            row.kind,
            row.version,
            str(resolve_model_folder(self._store.path, row.path, row.kind, row.version)),
            row.status,
            row.metrics_json,
            row.kb_fingerprint,
            row.data_fingerprint,
            row.parent_version,
            row.created_at,
        )

    def relocate_models(self) -> int:
        """Store every model path relative to the project, and base models by reference; returns rows fixed.

        Rows written before projects could move hold the path as it was given (absolute, relative to an
        old working directory, or into another copy of the project); they are found by the
        models/<kind>/<version> layout and rewritten. No schema change: the column holds a path either way.
        """
        fixed = 0
        try:
            with self._store.session() as session:
                for row in session.scalars(select(ModelVersionRow)):
                    try:
                        folder = resolve_model_folder(self._store.path, row.path, row.kind, row.version)
                    except ProjectError as exc:  # leads outside the project: never touched, refused on load
                        log.warning("%s", exc)
                        continue
                    for name in _MODEL_CONFIGS:
                        if (folder / name).is_file() and upgrade_base_model_reference(folder / name):
                            log.info("%s: base model recorded by name", folder / name)
                    if not folder.is_dir():
                        continue  # missing everywhere: keep what was stored, the loader names it
                    try:
                        relative = relative_to_project(self._store.path, folder)
                    except CuralinkError:
                        continue  # an old row pointing outside the project, which still exists there
                    if relative != row.path:
                        log.info(
                            "%s %s: model path %s stored as %s", row.kind, row.version, row.path, relative
                        )
                        row.path = relative
                        fixed += 1
        except (OperationalError, ProjectError) as exc:  # read-only or locked: rows still resolve on read
            log.warning("%s: could not rewrite model paths (%s)", self._store.path, exc)
            return 0
        return fixed
