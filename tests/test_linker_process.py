"""The desk's linker in a child process (core/jobs/linking/linker_process.py): it stores what the in-process Linker
stores, forwards cancel and the engine's own errors, and a child that dies is an error, not a hang."""

from __future__ import annotations

import os
import signal
import time

import pytest

from core.errors import Cancelled, CuralinkError
from core.jobs.linking.linker_process import LinkerProcess
from core.jobs.linking.suggestions import ProjectLinker
from core.progress import CancelToken
from core.store import Project


def _top(project: Project, doc_id: str) -> list[tuple[str, ...]]:
    _, mention_ids = next(project.documents.documents_with_mention_ids(ids=[doc_id]))
    sets = project.curation.suggestion_sets(mention_ids)
    return [tuple(c.concept_id for c in sets[m].candidates[:3]) if m in sets else () for m in mention_ids]


def test_the_child_stores_what_the_linker_here_stores_and_obeys_cancel(demo) -> None:
    doc_ids = [d.doc_id for d, ids in demo.documents.documents_with_mention_ids() if ids]
    doc_id, mention_ids = next((d.doc_id, ids) for d, ids in demo.documents.documents_with_mention_ids() if ids)
    ProjectLinker.for_project(demo).link_project(demo, ids=[doc_id])
    expected = _top(demo, doc_id)
    demo.curation.store_suggestions({m: [] for m in mention_ids})
    assert not any(_top(demo, doc_id))
    progress: list[tuple] = []
    child = LinkerProcess(demo.path, progress=lambda *args: progress.append(args))
    try:
        assert child.retriever_version == demo.models.active_model("retriever").version
        assert child.device_description
        summary = child.link_project(demo, ids=[doc_id])
        assert (summary.documents, summary.mentions) == (1, len(mention_ids))
        assert _top(demo, doc_id) == expected
        stored: list[list[str]] = []
        assert child.resuggest(demo, mention_ids[:1], on_stored=stored.append) == 1
        assert stored and all(ids == [doc_id] for ids in stored)
        cancel = CancelToken()
        cancel.cancel()
        with pytest.raises(Cancelled):
            child.link_project(demo, ids=doc_ids, batch_documents=1, cancel=cancel)
        assert child.link_project(demo, ids=doc_ids[:1]).documents == 1, "it goes on serving"
    finally:
        child.close()
    assert not child.alive()


def test_a_child_that_dies_is_a_clear_error(demo) -> None:
    child = LinkerProcess(demo.path)
    try:
        os.kill(child.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while child.alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        with pytest.raises(CuralinkError, match="linking process stopped unexpectedly"):
            child.link_project(demo, ids=["anything"])
    finally:
        child.close()


def test_the_engines_own_error_comes_back_with_its_message(tmp_path) -> None:
    Project.create(tmp_path / "empty").close()
    with pytest.raises(CuralinkError, match="no trained retriever yet"):
        LinkerProcess(tmp_path / "empty")
