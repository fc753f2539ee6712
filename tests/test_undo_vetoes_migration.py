"""Migration 0006 carries the undo histories and the learnt-synonym vetoes out of the settings JSON into their
own tables (issue 34 item 2), checked on a project made by commit 3a10820 (schema 0004; made by
tests/fixtures/projects/make_landed_0004_history.py with that commit's code): after the migration the new
code undoes and redoes the old history exactly as 3a10820's own code did on a copy of the same project (its
replay, recorded in the fixture's JSON), and the veto stays in force."""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path

import pytest

from core.jobs.curation.operations import history_of, redo, undo
from core.learn.synonyms import curated_synonyms
from core.learn.teaching import vetoed
from core.store import Project


@pytest.fixture
def landed(tmp_path: Path, fixtures_dir: Path) -> tuple[Path, dict]:
    root = tmp_path / "landed"
    root.mkdir()
    with gzip.open(fixtures_dir / "projects" / "landed-0004-history.db.gz") as packed:
        (root / "curalink.db").write_bytes(packed.read())
    expected = json.loads((fixtures_dir / "projects" / "landed-0004-history.json").read_text(encoding="utf-8"))
    return root, expected


def _sql(root: Path, query: str) -> list[list]:
    with sqlite3.connect(root / "curalink.db") as db:
        return [list(row) for row in db.execute(query)]


def _state(project: Project) -> list:
    """What undo and redo change, read as the fixture's generator read it with 3a10820's code."""
    root = project.path
    return [
        _sql(root, "SELECT mention_id, action, concept_id, curator FROM mention_state ORDER BY 1"),
        _sql(root, "SELECT id, type, removed FROM mentions ORDER BY id"),
        _sql(root, "SELECT mention_id, kind, value FROM curation_marks ORDER BY id"),
        sorted(list(pair) for pair in vetoed(project)),
    ]


def test_the_old_settings_rows_become_tables(landed) -> None:
    root, expected = landed
    assert _sql(root, "SELECT version_num FROM alembic_version") == [["0004"]]
    old_keys = [key for key in expected["settings"] if key.startswith(("undo.", "learn.vetoed"))]
    assert old_keys, "the fixture holds the old JSON"
    project = Project.open(root)
    assert _sql(root, "SELECT version_num FROM alembic_version")[0][0] >= "0006"
    remaining = {key for (key,) in _sql(root, "SELECT key FROM settings")}
    assert remaining == set(expected["settings"]) - set(old_keys)
    ana = json.loads(expected["settings"]["undo.ana"])
    assert _sql(root, "SELECT first, done FROM undo_histories WHERE curator = 'ana'") == [[ana["first"], ana["done"]]]
    steps = _sql(root, "SELECT number, kind, label, document, mention_id, data_json FROM undo_steps WHERE curator = 'ana'")
    assert len(steps) == len(ana["labels"])
    for number, kind, label, document, mention_id, data_json in steps:
        old = json.loads(expected["settings"][f"undo.ana.{number}"])
        assert [kind, label, document, mention_id, json.loads(data_json)] == [
            old["kind"], old["label"], old["document"], old["mention"], old["data"]
        ]  # fmt: skip
    assert _sql(root, "SELECT concept_id, string, vetoed FROM synonym_vetoes") == [
        [c, s, 1] for c, s in json.loads(expected["settings"]["learn.vetoed"])
    ]
    for curator, (labels, done) in expected["history"].items():
        now = history_of(project, curator)
        assert (list(now.labels), now.done) == (labels, done), curator
    project.close()


def test_the_veto_stays_in_force(landed) -> None:
    root, expected = landed
    project = Project.open(root)
    assert sorted(list(pair) for pair in vetoed(project)) == expected["vetoed"] == [["D006816", "hd"]]
    # standing accepts of the text "HD" for D006816 exist (read with plain SQL), yet teach nothing
    taught = _sql(
        root,
        "SELECT count(*) FROM mention_state s JOIN mentions m ON m.id = s.mention_id "
        "WHERE m.text = 'HD' AND s.action = 'accept' AND s.concept_id = 'D006816'",
    )[0][0]
    assert taught >= 1
    synonyms = curated_synonyms(project, project.kb.knowledge_base())
    assert "HD" not in synonyms.get("D006816", [])
    project.close()


def test_the_old_history_undoes_and_redoes_as_3a10820_did(landed) -> None:
    root, expected = landed
    project = Project.open(root)
    replay = []
    for verb in (undo, redo):
        while True:
            changes = verb(project, "ana")
            if not changes.label:
                break
            replay.append([changes.label, history_of(project, "ana").done, _state(project)])
    assert replay == expected["replay"]
    assert len(replay) == 2 * len(expected["history"]["ana"][0]) - 1  # five undone, then all six redone
    project.close()


def test_a_new_project_keeps_its_history_and_vetoes_out_of_the_settings(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p")
    project.vetoes.set_veto("D1", "hd", True)
    project.vetoes.set_veto("D1", "hd", False)
    project.vetoes.set_veto("D2", "x", True)
    assert project.vetoes.vetoed() == {("D2", "x")} and project.vetoes.changes() == 3
    assert _sql(tmp_path / "p", "SELECT count(*) FROM settings WHERE key LIKE 'undo.%' OR key LIKE 'learn.veto%'") == [[0]]
    project.close()


def test_downgrading_writes_the_settings_rows_back(landed) -> None:
    from alembic import command
    from sqlalchemy import create_engine

    from core.store.schema_check import alembic_config

    root, expected = landed
    Project.open(root).close()
    engine = create_engine(f"sqlite:///{root / 'curalink.db'}")
    with engine.begin() as connection:
        config = alembic_config()
        config.attributes["connection"] = connection
        command.downgrade(config, "0005")
    engine.dispose()
    back = {key: json.loads(value) for key, value in _sql(root, "SELECT key, value_json FROM settings")}
    old = {key: json.loads(value) for key, value in expected["settings"].items()}
    assert back.pop("learn.veto_changes") == 1
    assert back == old
