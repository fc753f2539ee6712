"""The migrations build exactly the tables the ORM describes (a column or index added to one and not the
other would pass every other test on fresh projects and fail on upgraded ones)."""

from __future__ import annotations

from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from core.store import Project
from core.store.schema import Base


def test_migrated_schema_matches_the_orm(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p")
    with project.engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    project.close()
    assert differences == []
