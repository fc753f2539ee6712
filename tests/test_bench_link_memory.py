"""`bench link-memory` measures a copy: the project's database (a consistent SQLite copy, written
while the project is open) and models, without its name index, and the project itself untouched."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from app.cli import main
from bench.link_memory import copy_without_index
from core.store import Project


def _count(database: Path, table: str) -> int:
    with sqlite3.connect(database) as connection:
        return connection.execute(f"select count(*) from {table}").fetchone()[0]


def test_the_copy_has_the_database_and_models_but_no_index(fixtures_dir: Path, tmp_path: Path) -> None:
    project = tmp_path / "P"
    assert main(["init", str(project)]) == 0
    kb = fixtures_dir / "kb" / "mesh_terms_sample.tsv"
    assert main(["-p", str(project), "kb", "import", str(kb), "--format", "tsv"]) == 0
    (project / "index" / "stale.faiss").write_bytes(b"x")
    (project / "models" / "retriever").mkdir(parents=True, exist_ok=True)
    (project / "models" / "retriever" / "config.json").write_text("{}", encoding="utf-8")
    (tmp_path / "into").mkdir()
    with Project.open(project):  # open, as a desk would hold it
        copy = copy_without_index(project, tmp_path / "into")
    assert _count(copy / "curalink.db", "concepts") == _count(project / "curalink.db", "concepts") > 0
    assert (copy / "models" / "retriever" / "config.json").is_file()
    assert not (copy / "index").exists()
    assert (project / "index" / "stale.faiss").is_file()
