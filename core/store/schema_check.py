"""Refusing a project database whose schema objects are not the ones Curalink's migrations make.

A project can come from someone else, and SQLite runs what its schema says: a trigger `AFTER INSERT
ON decisions ... UPDATE decisions SET concept_id = ...` silently turns an accept into another
concept, a view or a changed table makes writes fail with raw SQL errors. So before anything is read
or written, every table, index, trigger and view of the database (sqlite_master) is compared with
those of a fresh in-memory database migrated to the same schema version: an object the migrations
do not make, one missing, or one whose SQL differs is refused by name. The expected set comes from
the migrations themselves (once per version and process), so it cannot drift from them.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, create_engine

import core.store.migrations as migrations_package
from core.errors import ProjectError

# statistics tables ANALYZE writes (a curator's SQLite browser may run it): data for the planner only
_HARMLESS = re.compile(r"^sqlite_stat\d$")
_SPACE = re.compile(r"\s+")
# SQLite quotes a name it rewrote (ALTER TABLE ... RENAME, as alembic's batch migrations do): "passages"
# and passages are the same object. Applied to both sides, so nothing the migrations do not make passes.
_QUOTED_NAME = re.compile(r'"(\w+)"')

SchemaObjects = dict[tuple[str, str], tuple[str, str]]  # (type, name) -> (table, normalised SQL)


def alembic_config() -> Config:
    """Curalink's migrations, run on a connection the caller passes in `attributes["connection"]`."""
    config = Config()
    config.set_main_option("script_location", str(Path(migrations_package.__file__).parent))
    return config


def schema_objects(connection: Connection) -> SchemaObjects:
    """Every table, index, trigger and view of the main database, with its SQL whitespace-normalised."""
    rows = connection.exec_driver_sql("SELECT type, name, tbl_name, sql FROM sqlite_master").all()
    return {
        (kind, name): (table, _QUOTED_NAME.sub(r"\1", _SPACE.sub(" ", sql or "")).strip())
        for kind, name, table, sql in rows
        if not _HARMLESS.match(name)
    }


@lru_cache(maxsize=8)
def expected_objects(version: str) -> SchemaObjects:
    """The schema objects of a fresh database migrated to `version` by Curalink's own migrations."""
    engine = create_engine("sqlite://")
    try:
        with engine.begin() as connection:
            config = alembic_config()
            config.attributes["connection"] = connection
            command.upgrade(config, version)
            return schema_objects(connection)
    finally:
        engine.dispose()


def check_schema(
    connection: Connection, db_path: Path, version: str, rebuilt: frozenset[tuple[str, str]] = frozenset()
) -> None:
    """A ProjectError naming the first object that is not as the migrations to `version` make it;
    `rebuilt` (type, name) may be missing: the open rebuilds them (core.store.mention_state)."""
    actual = schema_objects(connection)
    expected = expected_objects(version)
    advice = (
        "refused, since SQLite would run it on Curalink's reads and writes (a project edited outside "
        "Curalink, or from someone you should not trust?); nothing was changed"
    )
    for kind, name in sorted(actual.keys() - expected.keys()):
        table, sql = actual[(kind, name)]
        on = f" on table {table}" if kind != "table" else ""
        raise ProjectError(
            f"{db_path}: the database holds {'an' if kind == 'index' else 'a'} {kind} {name!r}{on} that Curalink's migrations never make "
            f"({sql[:120]}); {advice}"
        )
    for kind, name in sorted(expected.keys() - actual.keys() - rebuilt):
        raise ProjectError(
            f"{db_path}: the {kind} {name!r} that schema version {version} has is missing from the database; "
            "the project is damaged or was edited outside Curalink"
        )
    for key in sorted(actual.keys() & expected.keys()):
        if actual[key] != expected[key]:
            kind, name = key
            raise ProjectError(
                f"{db_path}: the {kind} {name!r} is not as Curalink's migrations make it "
                f"(found: {actual[key][1][:160]}); {advice}"
            )
