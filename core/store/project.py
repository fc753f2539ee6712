"""A Curalink project: a folder with `curalink.db` (SQLite, WAL) and its models, indexes and logs.

Imports are atomic per file: a bad line, a cancel or a crash rolls the whole file back, so the project
is exactly as it was before the import began (nothing already stored is lost or half-written).
"""

from __future__ import annotations

import logging
import os
from contextlib import AbstractContextManager
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.exc import DatabaseError
from sqlalchemy.orm import Session

from core.errors import ProjectError
from core.housekeeping import tidy_project
from core.locations import inside_project
from core.store.access import DB_NAME, StoreAccess
from core.store.change_marks import ChangeWatch
from core.store.curation_log import DECISION_ACTIONS, CurationLog, NewDecision
from core.store.curation_marks import CurationMarks
from core.store.desk_queries import DeskQueries, QueueEntry
from core.store.documents_store import DUPLICATE_POLICIES, DocumentStore, ImportSummary
from core.store.identical_mentions import IdenticalMentionsStore
from core.store.kb_store import KnowledgeBaseStore
from core.store.mention_state import ensure_current, rebuilt_objects
from core.store.model_registry import ModelRegistry
from core.store.schema_check import alembic_config, check_schema
from core.store.settings_store import SettingsStore
from core.store.synonym_vetoes import SynonymVetoes
from core.store.undo_history import UndoHistoryStore
from core.store.write_faults import WriteFault, apply_lock_wait, write_fault

log = logging.getLogger(__name__)

SUBFOLDERS = ("models", "index", "logs")
LOG_FILE = "logs/curalink.log"
JOURNAL_SUFFIXES = ("-wal", "-shm", "-journal")

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
    return alembic_config()


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


def _upgrade_in_one_transaction(db_path: Path) -> None:
    """Run the migrations inside one SQLite transaction, DDL included, so a step that fails (tables that
    do not match the recorded version) rolls every earlier step back. pysqlite commits DDL on its own
    unless it is left to SQLite: autocommit at the driver, an explicit BEGIN (SQLAlchemy's recipe)."""
    engine = _engine(db_path)

    @event.listens_for(engine, "connect")
    def _driver_autocommit(dbapi_connection, _record) -> None:
        dbapi_connection.isolation_level = None

    @event.listens_for(engine, "begin")
    def _begin(connection) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    config = _alembic_config()
    try:
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
    finally:
        engine.dispose()


def check_project_paths(root: Path) -> None:
    """The database (and its journal files), the subfolders and the log stay inside the project: a
    symbolic link leading elsewhere, or a device or pipe in their place, is refused before anything is
    opened (SQLite, logging and FAISS would otherwise read and write wherever it leads)."""
    names = [DB_NAME, *(DB_NAME + suffix for suffix in JOURNAL_SUFFIXES), *SUBFOLDERS, LOG_FILE]
    for name in names:
        path = root / name
        if not os.path.lexists(path):
            continue
        inside_project(root, path, "the database" if name.startswith(DB_NAME) else f"the project's {name}")
        is_folder = name in SUBFOLDERS
        if path.exists() and not (path.is_dir() if is_folder else path.is_file()):
            kind = "a folder" if is_folder else "a regular file"
            raise ProjectError(f"{path}: is not {kind}; the project folder is damaged or was tampered with")


def _schema_version(engine: Engine, db_path: Path) -> tuple[str, str]:
    """(version recorded in alembic_version, newest this Curalink knows), or a ProjectError saying what is
    wrong with the recorded one: missing, several, not one Curalink ever wrote, or newer."""
    script = ScriptDirectory.from_config(_alembic_config())
    known = {rev.revision for rev in script.walk_revisions()}
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection)
            heads = context.get_current_heads()
    except DatabaseError as exc:
        if write_fault(exc) in (WriteFault.FULL, WriteFault.IO):  # opening a WAL database writes
            raise ProjectError(
                f"{db_path}: cannot open the project: the disk is full or failing ({exc.orig}); "
                "free some space, then try again"
            ) from exc
        raise ProjectError(f"{db_path}: not a readable SQLite database ({exc.orig})") from exc
    except CommandError as exc:
        raise ProjectError(f"{db_path}: the alembic_version table is damaged ({exc})") from exc
    if not heads:
        raise ProjectError(
            f"{db_path}: not a Curalink project database (no schema version: the alembic_version table "
            "is missing or empty)"
        )
    if len(heads) > 1:
        shown = ", ".join(repr(h) for h in heads)
        raise ProjectError(f"{db_path}: the alembic_version table is damaged (several versions: {shown})")
    current = heads[0]
    if current not in known:
        newest = max(int(rev[:4]) for rev in known)
        if isinstance(current, str) and current[:4].isdigit() and int(current[:4]) > newest:
            raise ProjectError(
                f"{db_path}: schema version {current} is newer than this Curalink understands; "
                "upgrade Curalink to open it"
            )
        raise ProjectError(
            f"{db_path}: the alembic_version table is damaged (version {current!r} is not one Curalink "
            f"ever wrote; known: {', '.join(sorted(known))})"
        )
    return current, script.get_current_head()


class Project:
    """Open with `Project.open(path)` or `Project.create(path)`; close when done (or use `with`).

    A thin facade: this class owns the folder, the engine, the sessions and the lifecycle; the store's
    work is done by its services, one attribute each, all sharing one `StoreAccess`:
    `documents` (corpus and mentions), `kb` (knowledge base), `curation` (suggestions and the decision
    log), `marks` (notes and review marks), `models` (model registry), `desk` (queue and stats),
    `settings`, `changes` (change marks for the desk's watch), `undo` (the curators' undo histories),
    `vetoes` (learnt synonyms the curators removed), `identical` (mentions identical to one, and its
    decision copied to them).
    """

    def __init__(self, path: Path, engine: Engine):
        self._store = StoreAccess(path, engine)
        self.settings = SettingsStore(self._store)
        self.documents = DocumentStore(self._store)
        self.kb = KnowledgeBaseStore(self._store, self.settings)
        self.curation = CurationLog(self._store)
        self.marks = CurationMarks(self._store)
        self.models = ModelRegistry(self._store)
        self.desk = DeskQueries(self._store, self.models)
        self.changes = ChangeWatch(self._store)
        self.identical = IdenticalMentionsStore(self._store, self.curation)
        self.undo = UndoHistoryStore(self._store)
        self.vetoes = SynonymVetoes(self._store)

    @property
    def path(self) -> Path:
        return self._store.path

    @property
    def engine(self) -> Engine:
        return self._store.engine

    # --- lifecycle -------------------------------------------------------------------------------

    @classmethod
    def create(cls, path: str | Path) -> Project:
        root = Path(path)
        if (root / DB_NAME).exists():
            raise ProjectError(f"{root}: a Curalink project already exists here")
        if root.exists() and not root.is_dir():
            raise ProjectError(f"{root}: exists and is not a folder")
        root.mkdir(parents=True, exist_ok=True)
        check_project_paths(root)
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
        check_project_paths(root)
        engine = _engine(db_path)
        try:
            current, head = _schema_version(engine, db_path)
            with engine.connect() as connection:  # before anything is written: a trigger would run
                check_schema(connection, db_path, current, rebuilt_objects())
            if upgrade and current != head:
                try:
                    _upgrade_in_one_transaction(db_path)
                except (DatabaseError, CommandError) as exc:
                    reason = getattr(exc, "orig", None) or exc
                    raise ProjectError(
                        f"{db_path}: upgrading the schema from version {current} failed ({reason}); the "
                        "tables do not match the version recorded in alembic_version. Nothing was changed"
                    ) from exc
                log.info("upgraded %s from schema %s", db_path, current)
        except BaseException:
            engine.dispose()
            raise
        for sub in SUBFOLDERS:
            (root / sub).mkdir(exist_ok=True)
        project = cls(root, engine)
        if upgrade:
            with project.session() as session:
                ensure_current(session, db_path)
            project.models.relocate_models()
            tidy_project(root)
        return project

    def close(self) -> None:
        self.engine.dispose()

    def reopen_at(self, path: str | Path) -> None:
        """Go on with this project where its folder is now (moved, renamed, mounted elsewhere): the database
        there is opened and checked as `open` does, then this object's connections move to it, so whoever
        holds it (the desk's writer, its link service) reads and writes there from now on."""
        moved = type(self).open(path)
        self.engine.dispose()
        self._store.move_to(moved.path, moved.engine)

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

    def transaction(self) -> AbstractContextManager[Session]:
        """One transaction around several store calls (see `StoreAccess.transaction`)."""
        return self._store.transaction()

    def session(self) -> AbstractContextManager[Session]:
        """One transaction: committed on success, rolled back on any error (see `StoreAccess.session`)."""
        return self._store.session()
