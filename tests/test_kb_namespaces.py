"""Preferred id namespaces: MEDIC's OMIM-primary concepts are keyed by their MeSH id, found by any id."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from alembic import command

from core.documents import Candidate, Document, Mention, Passage
from core.kb import load_kb
from core.kb.concept import Concept
from core.kb.namespaces import parse_namespaces, preferred_id
from core.store import Project
from core.store.curation import curated_documents
from core.store.project import _alembic_config

MESH = re.compile(r"^[CD]\d{6}")


def _medic_slice(vocab_dir: Path, tmp_path: Path, count: int = 60) -> tuple[Path, dict[str, str]]:
    """OMIM-primary MEDIC lines (and Breast Neoplasms) written to a temporary file, with the id each
    should be keyed by, worked out from the raw line: the first MeSH-looking id, else the OMIM one."""
    lines, expected = [], {}
    for line in (vocab_dir / "medic_06Jul2012.txt").read_text(encoding="utf-8").splitlines():
        ids = line.split("||")[0].split("|")
        if not ids[0].isdigit():
            continue
        mesh = [i for i in ids if MESH.match(i)]
        if len(lines) < count or "Breast Neoplasms" in line:
            lines.append(line)
            expected[f"OMIM:{ids[0]}"] = mesh[0] if mesh else f"OMIM:{ids[0]}"
    path = tmp_path / "medic_slice.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, expected


def test_medic_omim_primary_concepts_are_keyed_by_mesh(vocab_dir, tmp_path):
    path, expected = _medic_slice(vocab_dir, tmp_path)
    assert any(v.startswith("OMIM:") for v in expected.values())  # the slice has both kinds
    assert any(not v.startswith("OMIM:") for v in expected.values())
    with Project.create(tmp_path / "p") as project:
        summary = project.kb.import_concepts(load_kb(path, "medic"))
        assert summary.rekeyed == sum(1 for omim, key in expected.items() if key != omim)
        stored = {c.concept_id for c in project.kb.knowledge_base()}
        assert stored == set(expected.values())
        breast = project.kb.concept("OMIM:114480")
        assert breast.concept_id == "D001943" and "OMIM:114480" in breast.alt_ids
        for spelling in ("OMIM:114480", "114480", "D001943", "MESH:D001943", "mesh:d001943"):
            assert project.kb.resolve_concept_id(spelling) == "D001943", spelling
            assert project.kb.search_names(spelling)[0][0] == "D001943", spelling
        kb = project.kb.knowledge_base()
        assert kb.resolve("OMIM:114480") == "D001943"


def test_changing_the_preference_rekeys_names_and_suggestions(tmp_path):
    concepts = [
        Concept("OMIM:114480", "MEDIC", "Breast Neoplasms", ("Breast Cancer",), alt_ids=("D001943",)),
        Concept("D009369", "MEDIC", "Neoplasms", parents=("OMIM:114480",)),
        Concept("D000001", "MEDIC", "Clash", alt_ids=("D009369",)),
    ]
    with Project.create(tmp_path / "p") as project:
        project.settings.set_setting("id_namespaces", ["UMLS"])  # nothing to prefer: ids stay as the file gave them
        assert project.kb.import_concepts(concepts).rekeyed == 0
        document = Document("1", (Passage(0, "breast cancer", "title"),), (Mention(0, 13, "breast cancer"),))
        project.documents.import_documents([document])
        mention_id = next(project.documents.documents_with_mention_ids())[1][0]
        project.curation.store_suggestions(
            {mention_id: [Candidate("OMIM:114480", "Breast Neoplasms")]},
            computed_for={mention_id: (0, 13, "")},
        )
        project.curation.record_decision(mention_id, "accept", concept_id="OMIM:114480")
        project.kb.add_names("OMIM:114480", ["mammary cancer"])

        assert project.kb.set_id_namespaces(["mesh", "omim"]) == 1  # D000001 keeps its id: D009369 is taken
        assert project.settings.id_namespaces() == ("MESH", "OMIM")
        breast = project.kb.concept("D001943")
        assert breast.alt_ids == ("OMIM:114480",)
        assert {"Breast Cancer", "mammary cancer"} <= set(breast.synonyms)
        assert [c.concept_id for c in project.curation.suggestions(mention_id)] == ["D001943"]
        assert project.kb.concept("D009369").parents == ("D001943",)
        assert project.kb.concept("D000001").concept_id == "D000001"
        decision = project.curation.current_decisions()[mention_id]
        assert decision.concept_id == "OMIM:114480"  # history is never rewritten
        assert project.kb.resolve_concept_id(decision.concept_id) == "D001943"
        exported = next(curated_documents(project)).mentions[0]
        assert exported.concept_id == "D001943"  # exports use the preferred namespace
        assert exported.infons["decided_id"] == "OMIM:114480"
        with sqlite3.connect(tmp_path / "p" / "curalink.db") as db:
            assert db.execute("PRAGMA foreign_key_check").fetchall() == []


def test_a_project_from_schema_0001_gains_the_id_table_and_mesh_keys(tmp_path):
    root = tmp_path / "old"
    Project.create(root).close()
    config = _alembic_config()
    project = Project.open(root)
    with project.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0001")
        connection.exec_driver_sql(
            "INSERT INTO concepts (id, vocabulary, preferred_name, semantic_types, definition, tree_numbers,"
            " parents, alt_ids) VALUES ('OMIM:114480', 'MEDIC', 'Breast Neoplasms', '', '', '', '', 'D001943')"
        )
        connection.exec_driver_sql(
            "INSERT INTO names (concept_id, name, normalized, preferred, source)"
            " VALUES ('OMIM:114480', 'Breast Neoplasms', 'breast neoplasms', 1, 'kb')"
        )
    project.close()
    with Project.open(root) as reopened:
        assert reopened.kb.resolve_concept_id("OMIM:114480") == "D001943"
        assert reopened.kb.search_names("OMIM:114480")[0][0] == "D001943"
        assert reopened.kb.concept("D001943").alt_ids == ("OMIM:114480",)
        assert reopened.kb.knowledge_base().get("D001943").preferred_name == "Breast Neoplasms"


def test_namespace_rules():
    assert parse_namespaces(["mesh,omim", "MSH", "umls"]) == ("MESH", "OMIM", "UMLS")
    assert preferred_id("OMIM:114480", ["D001943"], ("MESH", "OMIM")) == "D001943"
    assert preferred_id("D001943", ["OMIM:114480"], ("MESH", "OMIM")) == "D001943"
    assert preferred_id("D001943", ["OMIM:114480"], ("OMIM",)) == "OMIM:114480"
    assert preferred_id("MONDO:0007254", ["MESH:D001943"], ("MESH",)) == "D001943"
    assert preferred_id("HP:0001250", ["HP:0002197"], ("MESH",)) == "HP:0001250"  # unlisted: keep
    assert json.dumps(list(parse_namespaces([""]))) == "[]"


@pytest.mark.parametrize("bad", [[""], [" , "]])
def test_an_empty_preference_is_refused(tmp_path, bad):
    from core.errors import CuralinkError

    with Project.create(tmp_path / "p") as project, pytest.raises(CuralinkError, match="at least one"):
        project.kb.set_id_namespaces(bad)
