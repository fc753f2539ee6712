"""Detection into a project never writes into gold documents unless asked, and types what it writes.

Real slices: MEDIC as the KB, NCBI-disease test abstracts as gold, one raw abstract as text, and a
train abstract whose annotations are dropped (a gold file saying "no mentions here").
"""

from __future__ import annotations

import shutil
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from core.detect.dictionary import DictionaryDetector
from core.errors import CuralinkError, InputError
from core.formats import read_corpus
from core.jobs.linking.detect_targets import (
    SKIP_GOLD,
    SKIP_HAS_MENTIONS,
    plan_targets,
    read_id_file,
    require_known_ids,
)
from core.jobs.linking.mentions import detect_into_project
from core.kb import load_kb
from core.kb.knowledge_base import KnowledgeBase
from core.project_detector import project_mention_type
from core.store import Project

RAW = (
    "Serotonin 5-HT(2B) receptors in carcinoid heart disease\n\n"
    "Activation of 5-HT(2B) receptors causes valvular heart disease. Patients with Crohn's disease "
    "or beta-thalassemia were excluded."
)
GOLD_SLICE = 10


@pytest.fixture(scope="module")
def template(tmp_path_factory, ncbi_dir: Path, vocab_dir: Path) -> Path:
    path = tmp_path_factory.mktemp("detect-targets") / "project"
    raw_file = path.parent / "raw-1.txt"
    raw_file.write_text(RAW, encoding="utf-8")
    test_file = ncbi_dir / "NCBItestset_corpus.txt"
    train_file = ncbi_dir / "NCBItrainset_corpus.txt"
    train = list(read_corpus(train_file, "pubtator"))[:3]
    with Project.create(path) as project:
        project.kb.import_concepts(load_kb(vocab_dir / "medic_06Jul2012.txt", "medic"))
        project.documents.import_documents(
            list(read_corpus(test_file, "pubtator"))[:GOLD_SLICE], source=str(test_file), split="test"
        )
        unannotated = replace(train[2], mentions=())
        project.documents.import_documents([*train[:2], unannotated], source=str(train_file), split="train")
        project.documents.import_documents(read_corpus(raw_file, "text"), source=str(raw_file))
    return path


@pytest.fixture
def project(template: Path, tmp_path: Path):
    destination = tmp_path / "project"
    shutil.copytree(template, destination, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
    with Project.open(destination) as opened:
        yield opened


def _gold_from_files(ncbi_dir: Path) -> dict[str, tuple]:
    test = list(read_corpus(ncbi_dir / "NCBItestset_corpus.txt", "pubtator"))[:GOLD_SLICE]
    train = list(read_corpus(ncbi_dir / "NCBItrainset_corpus.txt", "pubtator"))[:3]
    gold = {d.doc_id: d.mentions for d in [*test, *train[:2]]}
    gold[train[2].doc_id] = ()
    return gold


@pytest.fixture(scope="module")
def kb(template: Path) -> KnowledgeBase:
    with Project.open(template) as project:
        return project.kb.knowledge_base()


@pytest.fixture(scope="module")
def detector(template: Path, kb: KnowledgeBase) -> DictionaryDetector:
    with Project.open(template) as project:
        return DictionaryDetector.from_kb(kb, mention_type=project_mention_type(project, kb).name)


def test_default_tags_only_documents_that_never_had_mentions(
    project: Project, detector: DictionaryDetector, ncbi_dir: Path
) -> None:
    gold = _gold_from_files(ncbi_dir)
    summary = detect_into_project(project, detector)
    for doc_id, mentions in gold.items():
        assert project.documents.document(doc_id).mentions == mentions, f"gold document {doc_id} was changed"
    raw = project.documents.document("raw-1").mentions
    assert [m.text for m in raw] == [
        "carcinoid heart disease",
        "valvular heart disease",
        "Crohn's disease",
        "beta-thalassemia",
    ]
    assert all(m.origin == "detected" and m.type and m.concept_id == "" for m in raw)
    assert summary.documents == 1 and summary.added == 4
    assert sorted(summary.skipped[SKIP_HAS_MENTIONS]) == sorted(d for d, m in gold.items() if m)
    unannotated = next(d for d, m in gold.items() if not m)
    assert summary.skipped[SKIP_GOLD] == [unannotated], "a gold file's empty document is gold too"
    again = detect_into_project(project, detector)
    assert again.added == 0 and again.documents == 0, "a second run finds no document without mentions"


def test_a_split_or_a_list_skips_gold_documents_unless_asked(
    project: Project, detector: DictionaryDetector, ncbi_dir: Path
) -> None:
    gold = _gold_from_files(ncbi_dir)
    test_ids = list(gold)[:GOLD_SLICE]
    summary = detect_into_project(project, detector, split="test")
    assert summary.added == 0 and sorted(summary.skipped[SKIP_GOLD]) == sorted(test_ids)
    listed = detect_into_project(project, detector, ids=[test_ids[0], "raw-1"])
    assert listed.skipped[SKIP_GOLD] == [test_ids[0]] and listed.documents == 1
    assert all(project.documents.document(doc_id).mentions == gold[doc_id] for doc_id in test_ids)

    forced = detect_into_project(project, detector, split="test", include_gold=True)
    assert forced.documents == GOLD_SLICE and forced.added > 0
    for doc_id in test_ids:
        stored = project.documents.document(doc_id).mentions
        assert tuple(m for m in stored if m.origin != "detected") == gold[doc_id]
        added = [m for m in stored if m.origin == "detected"]
        assert not any(a.span.overlaps(g.span) for a in added for g in gold[doc_id])


def test_a_deleted_detection_is_not_brought_back(project: Project, detector: DictionaryDetector) -> None:
    detect_into_project(project, detector)
    ((document, mention_ids),) = list(project.documents.documents_with_mention_ids(ids=["raw-1"]))
    project.documents.set_mention_removed(mention_ids[0], curator="tester")
    again = detect_into_project(project, detector, ids=["raw-1"])
    assert again.added == 0 and again.overlapping == 4
    assert [m.text for m in project.documents.document("raw-1").mentions] == [m.text for m in document.mentions[1:]]


def test_detected_mentions_take_the_type_the_gold_gives_this_kb(
    project: Project, kb: KnowledgeBase, ncbi_dir: Path
) -> None:
    types = Counter(m.type for mentions in _gold_from_files(ncbi_dir).values() for m in mentions)
    assert project_mention_type(project, kb).name == types.most_common(1)[0][0] == "SpecificDisease"
    assert project_mention_type(project, kb, "Disease").name == "Disease"
    with pytest.raises(CuralinkError, match="--type"):
        project_mention_type(project, kb, " ")


def test_without_annotations_the_kb_says_the_type_or_the_user_must(tmp_path: Path, kb: KnowledgeBase) -> None:
    names = tmp_path / "names.tsv"
    names.write_text("X1\tfoo syndrome\n", encoding="utf-8")
    with Project.create(tmp_path / "raw") as project:
        assert project_mention_type(project, kb).name == "Disease", "MEDIC names diseases"
        with pytest.raises(CuralinkError, match="pass --type"):
            project_mention_type(project, KnowledgeBase(load_kb(names, "tsv")))


def test_unknown_ids_are_named_with_their_file_and_line(project: Project, tmp_path: Path) -> None:
    listing = tmp_path / "ids.txt"
    listing.write_text("# to tag\nraw-1\n\nnope-1\n10021369\nnope-2\n", encoding="utf-8")
    ids = read_id_file(listing)
    assert list(ids) == ["raw-1", "nope-1", "10021369", "nope-2"]
    with pytest.raises(CuralinkError) as error:
        require_known_ids(project, ids)
    assert f"{listing} line 4: 'nope-1'" in str(error.value)
    assert f"{listing} line 6: 'nope-2'" in str(error.value)
    with pytest.raises(CuralinkError, match="nope-3"):
        plan_targets(project, ids=["raw-1", "nope-3"])
    assert project.documents.document("raw-1").mentions == ()
    (tmp_path / "empty.txt").write_text("# nothing\n", encoding="utf-8")
    with pytest.raises(InputError, match="empty.txt: no document ids"):
        read_id_file(tmp_path / "empty.txt")


def test_an_untyped_detector_stores_nothing(project: Project, kb: KnowledgeBase) -> None:
    with pytest.raises(CuralinkError, match="untyped mention in raw-1"):
        detect_into_project(project, DictionaryDetector.from_kb(kb))
    assert project.documents.document("raw-1").mentions == ()


def test_the_dictionary_knows_the_strings_the_project_annotates(demo) -> None:
    """A string the train gold links to a concept ("colon tumours", no KB name) is tagged in raw text;
    an evaluation leaving that document out does not see it."""
    from core.documents import Mention, document_from_title_abstract
    from core.project_detector import detector_for_project, project_dictionary

    text = "Screening for colon tumours"
    taught = document_from_title_abstract("train-1", text, "Colon tumours were found.")
    start = taught.text.index("colon tumours")
    taught = taught.with_mentions([Mention(start, start + 13, "colon tumours", "Disease", "D003110")])
    raw = document_from_title_abstract("raw-9", "Colon tumours in adults", "Two colon tumours were removed.")
    kb = demo.kb.knowledge_base()
    before = project_dictionary(demo, kb).detect([raw])[0]
    assert not any(m.text.lower() == "colon tumours" for m in before), "not a KB name"
    demo.documents.import_documents([taught], split="train")
    chosen = detector_for_project(demo, kb)
    found = chosen.detector.detect([raw])[0]
    expected = [
        (raw.text.index("Colon tumours"), "Colon tumours"),
        (raw.text.index("colon tumours"), "colon tumours"),
    ]
    assert [(m.start, m.text) for m in found if m.text.lower() == "colon tumours"] == expected
    left_out = project_dictionary(demo, kb, leave_out={"train-1"}).detect([raw])[0]
    assert not any(m.text.lower() == "colon tumours" for m in left_out)
