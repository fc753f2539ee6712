"""Issue 11, item 6: a full disk during an import is a one-line error naming the database, with the
project unchanged, not a SQLAlchemy traceback with the SQL statement and its parameters.

The disk is made "full" with SQLite's own `max_page_count`: SQLite then fails a write with the very
error (SQLITE_FULL, "database or disk is full") it gives when the disk has no room left."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import core.store.project as project_module
from app.cli import EXIT_ERROR, main
from app.resources import demo_dir
from core.errors import ProjectError
from core.formats import read_corpus
from core.kb import load_kb
from core.store import Project

DEMO = demo_dir()
NCBI_LIKE = "".join(
    f"{n}|t|Title {n:04d} about breast cancer\n{n}|a|{'An abstract about colon cancer. ' * 40}\n"
    f"{n}\t17\t30\tbreast cancer\tDisease\tD001943\n\n"
    for n in range(1, 400)
)


@pytest.fixture
def fill_disk(monkeypatch):
    """Call it to let every connection opened from then on grow the database by at most `pages` pages."""
    pragmas = project_module._sqlite_pragmas

    def fill(pages: int = 2) -> None:
        def capped(dbapi_connection, record) -> None:
            pragmas(dbapi_connection, record)
            count = dbapi_connection.execute("PRAGMA page_count").fetchone()[0]
            dbapi_connection.execute(f"PRAGMA max_page_count = {count + pages}")

        monkeypatch.setattr(project_module, "_sqlite_pragmas", capped)

    return fill


def _snapshot(path: Path) -> dict:
    with Project.open(path) as project:
        return project.desk.stats() | {"ids": project.documents.document_ids()}


def test_a_full_disk_during_a_corpus_import_is_one_line_and_stores_nothing(tmp_path: Path, fill_disk) -> None:
    corpus = tmp_path / "corpus.pubtator"
    corpus.write_text(NCBI_LIKE)
    with Project.create(tmp_path / "p") as project:
        project.documents.import_documents(read_corpus(DEMO / "abstracts.pubtator", "pubtator"), source="demo")
    before = _snapshot(tmp_path / "p")
    fill_disk()
    with Project.open(tmp_path / "p") as project, pytest.raises(ProjectError) as raised:
        project.documents.import_documents(read_corpus(corpus, "pubtator"), source=str(corpus))
    message = str(raised.value)
    assert message.startswith(f"{tmp_path / 'p' / 'curalink.db'}: the disk is full")
    assert "\n" not in message and "INSERT" not in message and "parameters" not in message
    assert _snapshot(tmp_path / "p") == before
    assert before["documents"] > 0


def test_a_full_disk_during_a_kb_import_from_the_cli(tmp_path: Path, capsys, monkeypatch, fill_disk) -> None:
    assert main(["init", str(tmp_path / "p")]) == 0
    pragmas = project_module._sqlite_pragmas
    fill_disk(20)
    vocabulary = tmp_path / "big.tsv"
    vocabulary.write_text("".join(f"X:{n}\tconcept number {n} of a big vocabulary\n" for n in range(20_000)))
    capsys.readouterr()
    assert main(["-p", str(tmp_path / "p"), "kb", "import", str(vocabulary), "--format", "tsv"]) == EXIT_ERROR
    error = capsys.readouterr().err.strip()
    assert "the disk is full" in error and "curalink.db" in error
    assert (
        "Traceback" not in error and "INSERT" not in error and len(error.splitlines()) <= 2
    )  # rich may wrap
    monkeypatch.setattr(project_module, "_sqlite_pragmas", pragmas)
    with Project.open(tmp_path / "p") as project:
        assert project.desk.stats()["concepts"] == 0
        assert list(load_kb(vocabulary, "tsv"))  # the file itself is fine
    assert json.loads(json.dumps(_snapshot(tmp_path / "p")))["ids"] == []
