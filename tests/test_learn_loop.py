"""The learning loop through the core API on the bundled demo: decisions -> training data -> retrain ->
registry (metrics, fingerprints) -> promotion rule -> rollback; cancel; curator synonyms; exports."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from core.errors import Cancelled, CuralinkError  # noqa: E402
from core.learn.training_data import is_held_out, training_set  # noqa: E402
from core.progress import CancelToken  # noqa: E402
from core.store import Project  # noqa: E402

HELD_OUT = 0.34  # two of the six demo abstracts (90000002, 90000003)
TINY = {"max_seconds": 3.0, "epochs": 1, "held_out_fraction": HELD_OUT, "device": "cpu"}


@pytest.fixture(scope="module")
def demo_template(tmp_path_factory) -> Path:
    prebuilt = os.environ.get("CURALINK_DEMO_TEMPLATE")
    if prebuilt and (Path(prebuilt) / "curalink.db").is_file():
        return Path(prebuilt)
    from app.demo import build_demo_project

    path = tmp_path_factory.mktemp("learn-demo") / "demo"
    build_demo_project(path, train_seconds=5).close()
    return path


def curate(project) -> dict[str, int]:
    """Accept the gold link where the top suggestion is right, correct it where it is not; one reject and
    one not-in-KB on the first training document; curator 'ann'."""
    done = {"accept": 0, "correct": 0, "reject": 0, "nil": 0}
    for document, mention_ids in project.documents.documents_with_mention_ids():
        for index, (mention, mention_id) in enumerate(zip(document.mentions, mention_ids, strict=True)):
            if len(mention.concept_ids) != 1:
                continue
            if document.doc_id == "90000001" and index in (0, 1):
                action = "reject" if index == 0 else "nil"
                project.curation.record_decision(mention_id, action, curator="ann")
                done[action] += 1
                continue
            top = project.curation.suggestions(mention_id)
            action = "accept" if top and top[0].concept_id == mention.concept_id else "correct"
            project.curation.record_decision(
                mention_id,
                action,
                concept_id=mention.concept_id,
                curator="ann",
                model_version=project.curation.suggestion_version(mention_id),
            )
            done[action] += 1
    return done


def test_training_set_from_decisions(demo):
    done = curate(demo)
    kb = demo.kb.knowledge_base()
    data = training_set(demo, kb, held_out_fraction=HELD_OUT)
    held_out = {d.doc_id for d in data.held_out_documents}
    assert held_out == {"90000002", "90000003"}
    assert not held_out & {d.doc_id for d in data.train_documents}
    assert data.not_in_kb == 1 and data.rejected == 1
    assert data.hard_negatives and data.hard_negatives[0][0] == "Huntington disease"
    trained = sum(len(d.mentions) for d in data.train_documents)
    assert len(data.pairs) == trained == data.accepted + data.corrected
    assert data.accepted + data.corrected < done["accept"] + done["correct"]  # held-out ones left out
    assert all(
        m.text != "Huntington disease" or m.start != 21 for d in data.train_documents for m in d.mentions
    )
    # the slice is a property of the id alone: stable however the project grows
    assert all(is_held_out(doc_id, HELD_OUT) for doc_id in held_out)
    assert data.fingerprint == training_set(demo, kb, held_out_fraction=HELD_OUT).fingerprint


def test_retrain_registers_promotes_and_rolls_back(demo, tiny_bert):
    from core.jobs.models.retrain import retrain, rollback

    curate(demo)
    before = demo.models.active_model("retriever").version
    report = retrain(
        demo, kinds=("retriever", "reranker"), promote="always", base_model=str(tiny_bert), **TINY
    )
    retriever, reranker = report.kinds["retriever"], report.kinds["reranker"]
    assert retriever.parent_version == before and retriever.promoted and retriever.steps > 0
    assert demo.models.active_model("retriever").version == retriever.version
    assert demo.models.active_model("reranker").version == reranker.version
    row = next(v for v in demo.models.model_versions("retriever") if v.version == retriever.version)
    metrics = json.loads(row.metrics_json)
    assert set(metrics["held_out"]) >= {"acc@1", "recall@20", "mentions"}
    assert metrics["held_out"]["mentions"] == sum(
        len(d.mentions)
        for d in training_set(demo, demo.kb.knowledge_base(), held_out_fraction=HELD_OUT).held_out_documents
    )
    assert metrics["previous"]["version"] == before and "acc@1" in metrics["previous"]
    assert metrics["history"] and metrics["history"][0]["epoch"] == 0.0  # per-epoch held-out accuracy
    assert row.kb_fingerprint == demo.kb.knowledge_base().fingerprint()
    assert row.data_fingerprint == report.data_fingerprint and row.parent_version == before
    assert (Path(row.path) / "model.safetensors").is_file() and (Path(row.path) / "metrics.json").is_file()
    assert [r[:2] for r in report.table()][:2] == [("retriever", "acc@1"), ("retriever", "acc@5")]
    assert "acc@1" in reranker.new and "ranking" in reranker.old  # no reranker before: retriever order

    # promotion rule: a second retrain is promoted exactly when it is not worse on the held-out slice
    second = retrain(demo, kinds=("retriever",), promote="if-not-worse", **TINY).kinds["retriever"]
    assert second.parent_version == retriever.version
    assert second.promoted == (second.new["acc@1"] >= second.old["acc@1"])
    expected = second.version if second.promoted else retriever.version
    assert demo.models.active_model("retriever").version == expected
    third = retrain(demo, kinds=("retriever",), promote="never", **TINY).kinds["retriever"]
    assert not third.promoted and demo.models.active_model("retriever").version == expected
    status = {v.version: v.status for v in demo.models.model_versions("retriever")}
    assert status[third.version] == "candidate"

    # rollback in one action: the version in force before the active one
    active = demo.models.active_model("retriever")
    assert rollback(demo, "retriever") == active.parent_version
    assert demo.models.active_model("retriever").version == active.parent_version


def test_rollback_of_first_version_refused(demo):
    from core.jobs.models.retrain import rollback

    with pytest.raises(CuralinkError, match="nothing to roll back"):
        rollback(demo, "retriever")


def test_cancel_leaves_models_in_force(demo):
    from core.jobs.models.retrain import retrain

    curate(demo)
    versions = [(v.kind, v.version, v.status) for v in demo.models.model_versions()]
    cancel = CancelToken()
    seen = []

    def progress(done, total, message=""):
        seen.append(message)
        if "epoch" in message:
            cancel.cancel()

    with pytest.raises(Cancelled):
        retrain(demo, kinds=("retriever",), progress=progress, cancel=cancel, **TINY)
    assert any("epoch" in m for m in seen)
    assert [(v.kind, v.version, v.status) for v in demo.models.model_versions()] == versions
    leftovers = [p.name for p in (demo.models_dir / "retriever").iterdir() if p.name.startswith(".training")]
    assert leftovers == []


def test_curator_synonyms_indexed_in_place_and_exported(demo, tmp_path):
    from core.jobs.io.kb_export import export_kb
    from core.jobs.linking.suggestions import ProjectLinker
    from core.kb import load_kb
    from core.learn.synonyms import learn_synonyms
    from core.retrieve.query_plan import plan_document
    from core.text.normalize import normalize_name

    kb = demo.kb.knowledge_base()
    document, mention_ids = next(demo.documents.documents_with_mention_ids())
    # the synonym is the mention's planned query: "HD" in an abstract defining it would add
    # "Huntington disease", already a name; this one is not an abbreviation
    mention, mention_id = next(
        (m, i)
        for m, p, i in zip(document.mentions, plan_document(document), mention_ids, strict=True)
        if len(m.concept_ids) == 1
        and not p.expanded
        and normalize_name(m.text) not in {normalize_name(n) for n in kb.get(m.concept_id).names}
    )
    linker = ProjectLinker.for_project(demo, kb=kb, use_reranker=False)
    demo.curation.record_decision(mention_id, "correct", concept_id=mention.concept_id, curator="ann")
    rows_before = len(linker.linker.retriever.name_index)
    added = learn_synonyms(demo, kb=kb, retriever=linker.linker.retriever)
    assert [(e.name, e.concept_id) for e in added] == [(mention.text, mention.concept_id)]
    assert len(linker.linker.retriever.name_index) == rows_before + 1
    top = linker.linker.retriever.retrieve([mention.text], 3)[0][0]
    assert top.concept_id == mention.concept_id and top.matched_name == mention.text
    stored = demo.kb.concept(mention.concept_id)
    assert mention.text in stored.synonyms
    assert learn_synonyms(demo) == []  # idempotent

    path = tmp_path / "kb-export.tsv"
    assert export_kb(demo, path, with_curator_synonyms=True) == len(kb)
    reread = {c.concept_id: c for c in load_kb(path, "tsv")}
    stored_kb = demo.kb.knowledge_base()
    assert set(reread) == set(stored_kb.concepts)
    for concept in stored_kb:
        assert reread[concept.concept_id].preferred_name == concept.preferred_name
        assert set(reread[concept.concept_id].names) == set(concept.names)
    assert mention.text in reread[mention.concept_id].synonyms


def test_uncertainty_order_reuses_the_queue(demo):
    from core.learn.ordering import document_margin, margin, uncertainty_order

    order = uncertainty_order(demo)
    margins = {e.doc_id: e.margin for e in demo.desk.queue()}
    assert sorted(order) == sorted(margins)
    assert [margins[d] for d in order] == sorted(margins.values())
    document, mention_ids = next(demo.documents.documents_with_mention_ids(ids=[order[0]]))
    found = demo.curation.suggestions_for(mention_ids)
    assert document_margin([found[i] for i in mention_ids]) == pytest.approx(margins[order[0]])
    assert margin(found[mention_ids[0]][:1]) == 1.0


@pytest.mark.parametrize("fmt", ["jsonl", "bioc-xml"])
def test_export_reimports_losslessly(demo, tmp_path, fmt):
    from core.formats import read_corpus, write_corpus
    from core.store.curation import curated_documents

    curate(demo)
    exported = list(curated_documents(demo))
    path = tmp_path / f"export.{fmt}"
    write_corpus(exported, path, fmt)
    fresh = Project.create(tmp_path / "fresh")
    try:
        fresh.documents.import_documents(read_corpus(path, fmt), source=str(path), fmt=fmt)
        again = list(fresh.documents.documents())
    finally:
        fresh.close()
    assert [d.doc_id for d in again] == [d.doc_id for d in exported]
    for before, after in zip(exported, again, strict=True):
        assert after.text == before.text and after.passages == before.passages
        assert [(m.start, m.end, m.text, m.concept_id) for m in after.mentions] == [
            (m.start, m.end, m.text, m.concept_id) for m in before.mentions
        ]
        for m_before, m_after in zip(before.mentions, after.mentions, strict=True):
            for key in ("decision", "curator", "decided_at", "model_version"):
                assert m_after.infons.get(key) == m_before.infons.get(key)
    decided = [m for d in again for m in d.mentions if m.infons.get("curator") == "ann"]
    assert decided and all(m.infons["decided_at"] for m in decided)
    decisions = {m.infons["decision"] for m in decided}
    assert {"reject", "nil"} <= decisions <= {"accept", "correct", "reject", "nil"}
    assert any(m.concept_id == "-1" for d in again for m in d.mentions)


def test_a_small_project_still_holds_out_one_document() -> None:
    from core.learn.training_data import held_out_ids, is_held_out

    ids = [f"9000000{i}" for i in range(1, 7)]
    assert not any(is_held_out(doc_id, 0.2) for doc_id in ids), "the demo's ids all hash outside 20 %"
    held = held_out_ids(ids, 0.2)
    assert len(held) == 1 and held == held_out_ids(list(reversed(ids)), 0.2)
    assert held_out_ids(ids, 0.0) == set() and held_out_ids(ids[:1], 0.2) == set()


def test_a_composite_whose_second_row_scores_higher_is_not_more_uncertain_than_a_tie(tmp_path):
    # the query plan merges a composite's candidates by rank: the whole mention's best (0.82), then a
    # part's exact match (1.00). The two best are 0.18 apart: less uncertain than a 0.05 coin toss.
    from core.documents import Candidate, Mention, document_from_title_abstract
    from core.kb.concept import Concept
    from core.learn.ordering import margin, uncertainty_order
    from core.store import Project
    from core.store.curation_log import mention_key

    with Project.create(tmp_path / "p") as project:
        project.kb.import_concepts([Concept(f"D{i}", "MESH", f"Concept {i}") for i in range(1, 5)])
        docs = []
        for doc_id, text in [("1", "breast and ovarian cancer"), ("2", "chorea")]:
            document = document_from_title_abstract(doc_id, text, "")
            docs.append(document.with_mentions([Mention(0, len(text), text, "Disease")]))
        project.documents.import_documents(docs)
        composite = [Candidate("D1", "Concept 1", "", 0.82), Candidate("D2", "Concept 2", "", 1.0)]
        coin_toss = [Candidate("D3", "Concept 3", "", 0.60), Candidate("D4", "Concept 4", "", 0.55)]
        assert margin(composite) == pytest.approx(0.18) and margin(coin_toss) == pytest.approx(0.05)
        for (document, (mention_id,)), found in zip(
            project.documents.documents_with_mention_ids(), [composite, coin_toss], strict=True
        ):
            key = {mention_id: mention_key(document.mentions[0])}
            project.curation.store_suggestions({mention_id: found}, computed_for=key, retriever_version="v1")
        margins = {e.doc_id: e.margin for e in project.desk.queue()}
        assert margins == pytest.approx({"1": 0.18, "2": 0.05})
        assert uncertainty_order(project) == ["2", "1"]
