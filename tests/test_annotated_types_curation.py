"""The dictionary's type choice learns from curation, not only from imported gold: a detected mention a
curator linked (and retyped) is an annotation; one nobody linked, or one rejected, is not (issue 32: a
kind that never learnt from curated data)."""

from __future__ import annotations

from app.resources import demo_dir
from core.detect.dictionary import DictionaryDetector
from core.formats import read_corpus
from core.jobs.curation import operations as curation
from core.jobs.linking.mentions import detect_into_project
from core.kb import load_kb
from core.project_detector import project_mention_type
from core.store import Project
from core.store.annotated_types import annotated_mentions


def _raw_project(tmp_path) -> Project:
    """The demo KB (no types, no vocabulary the type could come from) and two demo abstracts as raw text,
    the dictionary's mentions typed "Disease" as `link --detect --type Disease` would."""
    project = Project.create(tmp_path / "p")
    project.kb.import_concepts(load_kb(demo_dir() / "kb.tsv", "tsv"))
    documents = list(read_corpus(demo_dir() / "abstracts.pubtator", "pubtator"))[:2]
    project.documents.import_documents([d.with_mentions([]) for d in documents], split="train")
    kb = project.kb.knowledge_base()
    names = [(entry.name, entry.concept_id) for entry in kb.names]
    detect_into_project(project, DictionaryDetector(names, mention_type="Disease"), split="train")
    return project


def test_a_curated_detected_mention_teaches_its_type_and_concept(tmp_path):
    project = _raw_project(tmp_path)
    kb = project.kb.knowledge_base()
    document, ids = next(iter(project.documents.documents_with_mention_ids(split="train")))
    (first, first_id), (second, second_id) = list(zip(document.mentions, ids, strict=True))[:2]
    assert annotated_mentions(project) == []  # nothing vouched for yet
    concept = kb.resolve(first.infons["dictionary_ids"].split("|")[0])
    curation.change_type(project, first_id, "SpecificDisease", curator="ann")
    curation.decide(project, first_id, "correct", concept_id=concept, curator="ann")
    curation.decide(project, second_id, "reject", curator="ann")

    rows = annotated_mentions(project)
    assert [(r.text, r.type, r.concept_id) for r in rows] == [(first.text, "SpecificDisease", concept)]
    chosen = project_mention_type(project, kb)
    assert chosen.name == "SpecificDisease"
    assert "1 annotated mention" in chosen.reason or "of the 1 annotated" in chosen.reason
    project.close()
