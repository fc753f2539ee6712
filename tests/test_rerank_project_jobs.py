"""Reranker jobs over a project built from the bundled demo files (train, register, promote, evaluate)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from transformers import AutoTokenizer, BertForTokenClassification

from core.errors import CuralinkError
from core.formats import pubtator
from core.jobs.models.kinds import load, train
from core.jobs.models.reranker import evaluate_reranker_for_project, train_reranker_for_project
from core.jobs.models.retriever import train_retriever
from core.kb import load_kb
from core.rerank.cross_encoder import CrossEncoder, default_base_model
from core.store.project import Project

DEMO = Path(__file__).resolve().parents[1] / "resources" / "demo"


@pytest.fixture(scope="module")
def small_base(tmp_path_factory) -> Path:
    """A two-layer cut of the packaged MiniLM saved as a base-model folder (exercises --base-model)."""
    folder = tmp_path_factory.mktemp("base")
    model = BertForTokenClassification.from_pretrained(
        default_base_model(), num_labels=2, num_hidden_layers=2, local_files_only=True
    )
    model.save_pretrained(folder, safe_serialization=True)
    AutoTokenizer.from_pretrained(default_base_model(), local_files_only=True).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Project:
    path = tmp_path_factory.mktemp("demo") / "project"
    project = Project.create(path)
    project.kb.import_concepts(load_kb(DEMO / "kb.tsv", "tsv"), source="kb.tsv", fmt="tsv")
    documents = list(pubtator.read(DEMO / "abstracts.pubtator"))
    assert len(documents) == 6
    for split, docs in (("train", documents[:4]), ("dev", documents[4:5]), ("test", documents[5:])):
        project.documents.import_documents(docs, source="abstracts.pubtator", fmt="pubtator", split=split)
    train_retriever(project, epochs=1, max_seconds=5)
    yield project
    project.close()


def test_evaluate_without_a_reranker_says_so(project):
    if project.models.active_model("reranker") is None:
        with pytest.raises(CuralinkError, match="train reranker"):
            evaluate_reranker_for_project(project, split="test")


def test_train_registers_promotes_and_evaluates(project, small_base, caplog):
    caplog.set_level(logging.INFO, logger="core")
    trained = train(project, "reranker", packing="compact", base_model=small_base, max_seconds=4, candidates=8)
    version, folder = trained.version, trained.path
    assert trained.promoted and trained.reason == "promoted by explicit choice"
    # what training says is read as sentences, not dictionaries (issue 23 item 10)
    said = [r.getMessage() for r in caplog.records if r.name.startswith(("core.rerank", "core.jobs.models.reranker"))]
    assert any(m.startswith("reranker training done:") for m in said), said
    assert any(m.startswith(f"trained reranker {version}") and "fused with the retriever" in m for m in said)
    assert not [m for m in said if "{" in m], said
    assert folder == project.models_dir / "reranker" / version and folder.is_dir()
    names = {p.name for p in folder.iterdir()}
    assert {"config.json", "model.safetensors", "reranker.json", "metrics.json"} <= names
    assert not any(p.name.startswith(".training-") for p in folder.parent.iterdir())
    assert project.models.active_model("reranker").version == version
    saved = json.loads((folder / "metrics.json").read_text())
    assert saved["packing"] == "compact" and saved["train_mentions"] > 0 and saved["candidates"] == 8
    assert 0.0 <= saved["fusion_weight"] < 1.0
    assert saved["dev_acc@1_fused"] >= saved["dev_acc@1"]  # weight 0 is among those tried
    assert CrossEncoder.load(folder).config.fusion_weight == saved["fusion_weight"]
    loaded = load(project, "reranker", version, device="cpu")  # the registry's loader, by version
    assert loaded.encoder.config.fusion_weight == saved["fusion_weight"]

    result = evaluate_reranker_for_project(project, split="test", candidates=8)
    test_mentions = sum(len(d.mentions) for d in project.documents.documents("test"))
    assert result["version"] == version and result["mentions"] == test_mentions > 0
    assert result["packing"] == "compact" and result["tokens"] > 0 and result["mentions_per_s"] > 0
    for key in ("retriever_acc@1", "acc@1", "acc@1_pure"):
        assert 0.0 <= result[key] <= 100.0
    as_pair = evaluate_reranker_for_project(project, split="test", packing="pair", candidates=8)
    assert as_pair["packing"] == "pair" and as_pair["tokens"] > result["tokens"]
    with pytest.raises(CuralinkError, match="no documents"):
        evaluate_reranker_for_project(project, split="nonexistent")


def test_resuggest_stores_retriever_candidates_then_reranked_ones(project, small_base):
    """After a span edit: the retriever's list is stored first (shown at once), the reranked one after,
    each for the span it was computed for (issue 10, item 4)."""
    from core.jobs.linking.suggestions import ProjectLinker

    if project.models.active_model("reranker") is None:
        train_reranker_for_project(
            project, packing="compact", base_model=small_base, max_seconds=4, candidates=8
        )
    linker = ProjectLinker.for_project(project, candidates=8, device="cpu")
    document, ids = next(project.documents.documents_with_mention_ids(split="test"))
    linker.link_project(project, ids=[document.doc_id])
    before = project.curation.suggestions(ids[1])
    mention, mention_id = document.mentions[0], ids[0]
    project.documents.set_mention_span(mention_id, mention.start, mention.end - 1, curator="ann")
    assert project.curation.suggestions(mention_id) == []
    stages = []

    def stored(doc_ids):
        found = project.curation.suggestion_sets([mention_id])[mention_id]
        stages.append((doc_ids, found.key, [c.reranker_score is None for c in found.candidates]))

    assert linker.resuggest(project, [mention_id], on_stored=stored) == 1
    key = (mention.start, mention.end - 1, mention.type)
    assert [s[:2] for s in stages] == [([document.doc_id], key), ([document.doc_id], key)]
    assert all(stages[0][2]) and not any(stages[1][2])  # retriever only, then every candidate reranked
    assert project.curation.suggestion_version(mention_id) == f"{linker.retriever_version}+{linker.linker.reranker_version}"
    assert before and project.curation.suggestions(ids[1]) == before  # the rest of the document is left alone
