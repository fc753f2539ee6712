"""The model registry: versions of each kind, which one is in force, promotion."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import select, update

from core.errors import CuralinkError
from core.store.schema import (
    ModelVersionRow,
)


class ModelRegistry:
    """Mixed into `Project`: needs `self.session()`."""

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
        with self.session() as session:
            session.add(
                ModelVersionRow(
                    kind=kind,
                    version=version,
                    path=str(path),
                    status=status,
                    metrics_json=json.dumps(metrics or {}),
                    kb_fingerprint=kb_fingerprint,
                    data_fingerprint=data_fingerprint,
                    parent_version=parent_version,
                )
            )

    def promote_model(self, kind: str, version: str) -> None:
        """Make one version the active one of its kind; the previous active one is retired, not deleted."""
        with self.session() as session:
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

    def active_model(self, kind: str) -> ModelVersionRow | None:
        with self.session() as session:
            return session.scalar(
                select(ModelVersionRow)
                .where(ModelVersionRow.kind == kind, ModelVersionRow.status == "active")
                .order_by(ModelVersionRow.id.desc())
            )

    def model_versions(self, kind: str | None = None) -> list[ModelVersionRow]:
        with self.session() as session:
            query = select(ModelVersionRow).order_by(ModelVersionRow.id)
            if kind:
                query = query.where(ModelVersionRow.kind == kind)
            return list(session.scalars(query))
