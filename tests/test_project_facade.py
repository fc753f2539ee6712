"""`Project` is a thin facade over composed services (issue 22 item 5), and each service does its job
through its attribute on a real project (a copy of the demo), checked against the database file read
with plain sqlite3 rather than through the store's own reads."""

from __future__ import annotations

import inspect
import shutil
import sqlite3
from pathlib import Path

import pytest

from core.errors import CuralinkError
from core.store import Project
from core.store.curation_log import NewDecision
from core.store.curation_marks import FLAG, SET
from core.store.kb_store import KnowledgeBaseStore
from core.store.project import DB_NAME
from core.store.settings_store import SettingsStore

SERVICES = (
    "documents", "kb", "curation", "marks", "models", "desk", "settings", "changes", "identical", "undo", "vetoes",
)  # fmt: skip


def _sql(project: Project, query: str, *params) -> list[tuple]:
    with sqlite3.connect(project.path / DB_NAME) as connection:
        return connection.execute(query, params).fetchall()


def test_project_inherits_nothing_and_keeps_a_small_surface_of_its_own():
    assert Project.__bases__ == (object,)
    own = {name for name in dir(Project) if not name.startswith("_")}
    assert own == {
        "create", "open", "close", "reopen_at", "session", "transaction",
        "path", "engine", "models_dir", "index_dir", "logs_dir",
    }  # fmt: skip


def test_each_service_is_its_own_object_over_one_shared_store(demo: Project):
    services = [getattr(demo, name) for name in SERVICES]
    assert len({type(s) for s in services}) == len(SERVICES), "one class per service"
    assert {id(s._store) for s in services} == {id(demo._store)}
    for old in ("import_documents", "decide", "queue", "knowledge_base", "set_mark", "active_model"):
        assert not hasattr(demo, old), f"Project.{old} is a service's method now"
    # No service reaches another through `self`: each takes only what it is given.
    for service in services:
        params = list(inspect.signature(type(service)).parameters)
        assert params[0] == "store" and len(params) <= 2, (type(service).__name__, params)


def test_documents_kb_curation_marks_desk_and_changes_through_their_attributes(demo: Project):
    doc_ids = demo.documents.document_ids()
    assert sorted(doc_ids) == sorted(row[0] for row in _sql(demo, "SELECT external_id FROM documents"))
    doc_id = doc_ids[0]
    text = demo.documents.document(doc_id).text
    before = demo.changes.marks()

    mention_id = demo.documents.add_mention(doc_id, 0, 5, type="Disease", curator="ann")
    assert _sql(demo, "SELECT start, end, text FROM mentions WHERE id = ?", mention_id) == [(0, 5, text[:5])]

    concept = next(iter(demo.kb.knowledge_base())).concept_id
    assert demo.kb.add_names(concept, ["zzfacade syndrome"]) == 1
    assert concept in [hit[0] for hit in demo.kb.search_names("zzfacade syndrome")]

    demo.curation.decide([NewDecision(mention_id, "accept", concept, curator="ann")])
    assert _sql(demo, "SELECT action, concept_id, curator FROM decisions WHERE mention_id = ?", mention_id)[
        -1
    ] == (
        "accept",
        concept,
        "ann",
    )
    assert demo.curation.current_decisions(mention_ids=[mention_id])[mention_id].concept_id == concept

    demo.marks.set_mark(FLAG, SET, mention_id=mention_id, curator="ann")
    assert _sql(demo, "SELECT kind, value FROM curation_marks WHERE mention_id = ?", mention_id) == [
        (FLAG, SET)
    ]
    assert demo.marks.mention_marks([mention_id])[mention_id][FLAG].curator == "ann"

    (entry,) = demo.desk.queue([doc_id])
    live = _sql(
        demo,
        "SELECT count(*) FROM mentions m JOIN documents d ON d.id = m.document_id "
        "WHERE d.external_id = ? AND m.removed = 0",
        doc_id,
    )[0][0]
    assert entry.mentions == live
    assert demo.desk.stats()["documents"] == len(doc_ids)

    assert doc_id in demo.changes.changed_documents(before, demo.changes.marks())


def test_models_and_settings_through_their_attributes(demo: Project):
    versions = demo.models.model_versions()
    assert sorted((v.kind, v.version) for v in versions) == sorted(
        _sql(demo, "SELECT kind, version FROM model_versions")
    )
    demo.settings.set_setting("facade_probe", {"a": 1})
    assert _sql(demo, "SELECT value_json FROM settings WHERE key = 'facade_probe'") == [('{"a": 1}',)]
    assert demo.settings.setting("facade_probe") == {"a": 1}


def test_the_kb_reads_its_namespaces_from_the_settings_it_was_given(demo: Project):
    from core.store.access import StoreAccess

    demo.kb.set_id_namespaces(["OMIM", "MESH"])
    assert demo.settings.id_namespaces() == ("OMIM", "MESH")
    store = StoreAccess(demo.path, demo.engine)
    kb = KnowledgeBaseStore(store, SettingsStore(store))
    assert len(kb.knowledge_base()) == len(demo.kb.knowledge_base())


def test_one_transaction_spans_services_and_rolls_all_of_them_back(demo: Project):
    doc_id = demo.documents.document_ids()[0]
    mentions_before = _sql(demo, "SELECT count(*) FROM mentions")
    decisions_before = _sql(demo, "SELECT count(*) FROM decisions")
    with pytest.raises(RuntimeError), demo.transaction():
        mention_id = demo.documents.add_mention(doc_id, 0, 3)
        demo.curation.decide([NewDecision(mention_id, "reject", curator="ann")])
        raise RuntimeError("cancelled")
    assert _sql(demo, "SELECT count(*) FROM mentions") == mentions_before
    assert _sql(demo, "SELECT count(*) FROM decisions") == decisions_before


def test_services_follow_the_project_when_it_is_reopened_elsewhere(demo: Project, tmp_path: Path):
    doc_ids = demo.documents.document_ids()
    demo.close()
    moved = tmp_path / "moved"
    shutil.move(demo.path, moved)
    demo.reopen_at(moved)
    assert demo.path == moved
    assert demo.documents.document_ids() == doc_ids
    with pytest.raises(CuralinkError, match=str(moved)):
        demo.documents.document("no-such-document")
    assert demo.desk.stats()["project"] == str(moved)
