"""Linker end to end on the bundled demo: train a small retriever, link, store, detect raw text."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.resources import demo_dir
from core.detect.dictionary import DictionaryDetector
from core.documents import document_from_title_abstract
from core.errors import CuralinkError
from core.jobs.linking.mentions import detect_into_project
from core.jobs.linking.suggestions import ProjectLinker
from core.kb import load_kb
from core.kb.identifiers import split_ids
from core.progress import CancelToken
from core.retrieve.query_plan import plan_document
from core.store import Project


@pytest.fixture(scope="module")
def linked_project(demo_template: Path, tmp_path_factory) -> Path:
    destination = tmp_path_factory.mktemp("pipeline") / "demo"
    shutil.copytree(demo_template, destination, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
    return destination


def test_linking_needs_a_trained_retriever(tmp_path: Path) -> None:
    with Project.create(tmp_path / "empty") as project:
        project.kb.import_concepts(load_kb(demo_dir() / "kb.tsv", "tsv"))
        with pytest.raises(CuralinkError, match="no trained retriever"):
            ProjectLinker.for_project(project)


def test_every_mention_gets_ranked_suggestions_and_most_are_right(linked_project: Path) -> None:
    with Project.open(linked_project) as project:
        version = project.models.active_model("retriever").version
        correct = total = 0
        for document, mention_ids in project.documents.documents_with_mention_ids():
            plans = plan_document(document)
            for mention, plan, mention_id in zip(document.mentions, plans, mention_ids, strict=True):
                suggestions = project.curation.suggestions(mention_id)
                assert len(suggestions) == 16
                scores = [c.retriever_score for c in suggestions]
                if not plan.is_split:  # a split mention's list is merged by rank, the whole query first
                    assert scores == sorted(scores, reverse=True)
                correct += suggestions[0].concept_id in set(split_ids(mention.concept_id))
                total += 1
        assert total == 47
        assert correct / total >= 0.8, f"zero-shot top-1 {correct}/{total}"
        assert project.desk.stats()["suggestions"] == 47 * 16
        assert version == "v1"


def test_composite_mentions_surface_both_concepts(linked_project: Path) -> None:
    with Project.open(linked_project) as project:
        linker = ProjectLinker.for_project(project)
        document = project.documents.document("90000004")
        composite = [i for i, m in enumerate(document.mentions) if "|" in m.concept_id][0]
        top = [c.concept_id for c in linker.linker.suggest([document])[0][composite][:4]]
        assert {"D001943", "D010051"} <= set(top)


def test_detected_mentions_in_raw_text_get_linked(linked_project: Path) -> None:
    with Project.open(linked_project) as project:
        raw = document_from_title_abstract(
            "raw-1",
            "Cystic fibrosis and asthma",
            "Children with cystic fibrosis (CF) and asthma were seen; CF was common.",
        )
        project.documents.import_documents([raw], origin="imported")
        detector = DictionaryDetector.from_kb(project.kb.knowledge_base(), mention_type="Disease")
        summary = detect_into_project(project, detector, ids=["raw-1"])
        assert summary.added == 6
        texts = [m.text for m in project.documents.document("raw-1").mentions]
        assert texts == ["Cystic fibrosis", "asthma", "cystic fibrosis", "CF", "asthma", "CF"]
        ProjectLinker.for_project(project).link_project(project, ids=["raw-1"])
        ((document, mention_ids),) = list(project.documents.documents_with_mention_ids(ids=["raw-1"]))
        assert project.curation.suggestions(mention_ids[3])[0].concept_id == "D003550", (
            "CF expanded to cystic fibrosis"
        )
        assert project.curation.suggestions(mention_ids[1])[0].concept_id == "D001249"


def test_cancel_stops_linking_before_anything_is_stored(linked_project: Path, tmp_path: Path) -> None:
    with Project.open(linked_project) as project:
        token = CancelToken()
        token.cancel()
        before = project.desk.stats()["suggestions"]
        with pytest.raises(Exception, match="cancelled"):
            ProjectLinker.for_project(project).link_project(project, cancel=token)
        assert project.desk.stats()["suggestions"] == before


def test_find_mentions_tags_raw_text_once_and_leaves_gold_alone(linked_project: Path) -> None:
    """The desk's "find mentions" (in-thread linker; the linking process calls the same method)."""
    with Project.open(linked_project) as project:
        raw = document_from_title_abstract(
            "raw-2", "Asthma in adults", "Adults with asthma and cystic fibrosis."
        )
        project.documents.import_documents([raw], origin="imported")
        gold_id = next(iter(project.documents.document_ids()))
        gold_before = project.documents.document(gold_id).mentions
        linker = ProjectLinker.for_project(project)
        found = linker.find_mentions(project, ["raw-2", gold_id])
        texts = [m.text for m in project.documents.document("raw-2").mentions]
        assert texts == ["Asthma", "asthma", "cystic fibrosis"] and found.added == 3
        assert "dictionary" in found.detector and found.tagged(["raw-2", gold_id]) == ["raw-2"]
        assert project.documents.document(gold_id).mentions == gold_before
        again = linker.find_mentions(project, ["raw-2"])
        assert again.added == 0 and again.overlapping == 3, "a second run adds nothing over stored spans"


def test_the_linker_stays_pure_and_the_store_jobs_hold_one() -> None:
    """`Linker` computes suggestions only; the jobs that write the store are functions of core.jobs.linking.suggestions
    taking a Linker, and `ProjectLinker` holds one (issue 22: not a Linker subclass carrying store jobs)."""
    import inspect

    from core.jobs.linking import suggestions as linking
    from core.pipeline import Linker

    assert not issubclass(ProjectLinker, Linker)
    for job in ("link_project", "resuggest", "find_mentions", "learn", "for_project", "_store"):
        assert not hasattr(Linker, job), job
    for job in (linking.link_project, linking.resuggest, linking.store_suggestions, linking.learn):
        assert list(inspect.signature(job).parameters)[:2] == ["project", "linker"], job.__name__
