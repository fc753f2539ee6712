"""Issue 24, item 8: a project's database cannot rewrite decisions. A trigger, view, index or table
that Curalink's migrations do not make, or one changed, is refused on open by name before anything is
written; a project made by the migrations (fresh, or the landed 0002 one upgraded) opens as before."""

from __future__ import annotations

import gzip
import shutil
import sqlite3
from pathlib import Path

import pytest

from core.documents import Document, Mention, Passage
from core.errors import ProjectError
from core.store import Project


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    with Project.create(root) as project:
        text = "Breast cancer and colon cancer."
        mentions = (
            Mention(0, 13, "Breast cancer", "Disease", "D001943"),
            Mention(18, 30, "colon cancer", "Disease"),
        )
        project.documents.import_documents([Document("1", (Passage(0, text, "title"),), mentions)])
    return root


def _sql(root: Path, *statements: str) -> None:
    with sqlite3.connect(root / "curalink.db") as db:
        for statement in statements:
            db.execute(statement)


REWRITE = (
    "CREATE TRIGGER rewrite AFTER INSERT ON decisions BEGIN "
    "UPDATE decisions SET concept_id = 'D999999' WHERE id = NEW.id; END"
)


def test_a_trigger_that_rewrites_decisions_is_refused_by_name(project_dir: Path) -> None:
    with Project.open(project_dir) as project:  # what the trigger does when it runs: the accept changes
        _sql(project_dir, REWRITE)
        (_, (_, mention_id)), *_ = project.documents.documents_with_mention_ids(None)
        project.curation.record_decision(mention_id, "accept", concept_id="D003110")
    with sqlite3.connect(project_dir / "curalink.db") as db:
        assert db.execute("SELECT concept_id FROM decisions").fetchall() == [("D999999",)]
    before = (project_dir / "curalink.db").read_bytes()
    with pytest.raises(ProjectError) as raised:
        Project.open(project_dir)
    message = str(raised.value)
    assert message.startswith(
        f"{project_dir / 'curalink.db'}: the database holds a trigger 'rewrite' on table decisions"
    )
    assert "that Curalink's migrations never make" in message and "\n" not in message
    assert (project_dir / "curalink.db").read_bytes() == before


@pytest.mark.parametrize(
    ("statements", "named"),
    [
        (("CREATE VIEW accepted AS SELECT * FROM decisions",), "holds a view 'accepted' on table accepted"),
        (("CREATE INDEX ix_sneaky ON decisions (curator)",), "holds an index 'ix_sneaky' on table decisions"),
        (("CREATE TABLE extra (x)",), "holds a table 'extra' that"),
        (("DROP INDEX ix_decisions_mention_id",), "the index 'ix_decisions_mention_id' that schema version"),
        (
            (
                "CREATE TABLE settings2 (key VARCHAR NOT NULL, value_json TEXT NOT NULL CHECK (key != 'x'), PRIMARY KEY (key))",
                "INSERT INTO settings2 SELECT * FROM settings",
                "DROP TABLE settings",
                "ALTER TABLE settings2 RENAME TO settings",
            ),
            "the table 'settings' is not as Curalink's migrations make it",
        ),
    ],
)
def test_other_schema_objects_not_made_by_the_migrations_are_named(
    project_dir: Path, statements: tuple[str, ...], named: str
) -> None:
    _sql(project_dir, *statements)
    with pytest.raises(ProjectError) as raised:
        Project.open(project_dir)
    assert named in str(raised.value)


def test_statistics_from_analyze_are_not_a_schema_change(project_dir: Path) -> None:
    _sql(project_dir, "ANALYZE")
    Project.open(project_dir).close()


def test_the_landed_0002_project_opens_and_upgrades(fixtures_dir: Path, tmp_path: Path) -> None:
    root = tmp_path / "landed"
    root.mkdir()
    with (
        gzip.open(fixtures_dir / "projects" / "landed-0002.db.gz") as packed,
        (root / "curalink.db").open("wb") as out,
    ):
        shutil.copyfileobj(packed, out)
    Project.open(root).close()
    Project.open(root).close()  # and again at the head version
    _sql(root, REWRITE)
    with pytest.raises(ProjectError, match="trigger 'rewrite'"):
        Project.open(root)
