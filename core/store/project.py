"""A Curalink project: a folder with `curalink.db` (SQLite, WAL) and its models, indexes and logs.

Imports are atomic per file: a bad line, a cancel or a crash rolls the whole file back, so the project
is exactly as it was before the import began (nothing already stored is lost or half-written).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.exc import DatabaseError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

import core.store.migrations as migrations_package
from core.errors import ProjectError
from core.store.curation_log import DECISION_ACTIONS, CurationLog, NewDecision
from core.store.desk_queries import DeskQueries, QueueEntry
from core.store.documents_store import DUPLICATE_POLICIES, DocumentStore, ImportSummary
from core.store.kb_store import KnowledgeBaseStore
from core.store.model_registry import ModelRegistry
from core.store.settings_store import SettingsStore
from core.store.write_faults import StoreWriteError, WriteFault, apply_lock_wait, write_fault

log = logging.getLogger(__name__)

DB_NAME = "curalink.db"
SUBFOLDERS = ("models", "index", "logs")

__all__ = [
    "DB_NAME",
    "DECISION_ACTIONS",
    "DUPLICATE_POLICIES",
    "ImportSummary",
    "NewDecision",
    "Project",
    "QueueEntry",
]


def _alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(Path(migrations_package.__file__).parent))
    return config


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.close()


def _engine(db_path: Path) -> Engine:
    engine = create_engine(f"sqlite:///{db_path}")
    event.listen(engine, "connect", _sqlite_pragmas)
    event.listen(engine, "checkout", apply_lock_wait)  # write_faults.lock_wait: per-thread lock waits
    return engine


class Project(DocumentStore, KnowledgeBaseStore, CurationLog, ModelRegistry, DeskQueries, SettingsStore):
    """Open with `Project.open(path)` or `Project.create(path)`; close when done (or use `with`).

    A thin facade: each base class is one service over the same database (documents, knowledge base,
    curation log, model registry, desk queries, settings); this class owns the folder, the engine and sessions.
    """

    def __init__(self, path: Path, engine: Engine):
        self.path = path
        self.engine = engine
        self._sessions = sessionmaker(engine, expire_on_commit=False)

    # --- lifecycle -------------------------------------------------------------------------------

    @classmethod
    def create(cls, path: str | Path) -> Project:
        root = Path(path)
        if (root / DB_NAME).exists():
            raise ProjectError(f"{root}: a Curalink project already exists here")
        if root.exists() and not root.is_dir():
            raise ProjectError(f"{root}: exists and is not a folder")
        root.mkdir(parents=True, exist_ok=True)
        for sub in SUBFOLDERS:
            (root / sub).mkdir(exist_ok=True)
        engine = _engine(root / DB_NAME)
        config = _alembic_config()
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
        log.info("created project %s", root)
        return cls(root, engine)

    @classmethod
    def open(cls, path: str | Path, *, upgrade: bool = True) -> Project:
        root = Path(path)
        db_path = root / DB_NAME
        if not root.is_dir():
            raise ProjectError(f"{root}: no such project folder (create one with `curalink init {root}`)")
        if not db_path.is_file():
            raise ProjectError(
                f"{root}: not a Curalink project (no {DB_NAME}; create one with `curalink init`)"
            )
        engine = _engine(db_path)
        script = ScriptDirectory.from_config(_alembic_config())
        known = {rev.revision for rev in script.walk_revisions()}
        try:
            with engine.connect() as connection:
                current = MigrationContext.configure(connection).get_current_revision()
        except DatabaseError as exc:
            engine.dispose()
            if write_fault(exc) in (WriteFault.FULL, WriteFault.IO):  # opening a WAL database writes
                raise ProjectError(
                    f"{db_path}: cannot open the project: the disk is full or failing ({exc.orig}); "
                    "free some space, then try again"
                ) from exc
            raise ProjectError(f"{db_path}: not a readable SQLite database ({exc.orig})") from exc
        if current is None:
            engine.dispose()
            raise ProjectError(f"{db_path}: not a Curalink project database (no schema version)")
        if current not in known:
            engine.dispose()
            raise ProjectError(
                f"{db_path}: schema version {current} is newer than this Curalink understands; "
                "upgrade Curalink to open it"
            )
        if upgrade and current != script.get_current_head():
            config = _alembic_config()
            with engine.begin() as connection:
                config.attributes["connection"] = connection
                command.upgrade(config, "head")
            log.info("upgraded %s from schema %s", db_path, current)
        for sub in SUBFOLDERS:
            (root / sub).mkdir(exist_ok=True)
        project = cls(root, engine)
        if upgrade:
            project.relocate_models()
        return project

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Project:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    @property
    def models_dir(self) -> Path:
        return self.path / "models"

    @property
    def index_dir(self) -> Path:
        return self.path / "index"

    @property
    def logs_dir(self) -> Path:
        return self.path / "logs"

    @contextmanager
    def session(self) -> Iterator[Session]:
        """One transaction: committed on success, rolled back on any error (a cancel included)."""
        session = self._sessions()
        try:
            yield session
            session.commit()
        except OperationalError as exc:
            session.rollback()
            fault = write_fault(exc)
            if fault is WriteFault.BUSY:
                raise ProjectError(
                    f"{self.path / DB_NAME}: the database is locked by another program"
                ) from exc
            if fault is not None:  # a full or failing disk: a clear error, not the SQL of the statement
                raise StoreWriteError(fault, self.path / DB_NAME) from exc
            raise
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()
