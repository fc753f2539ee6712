"""Curator knowledge in use (issue 13): an accepted correction joins the saved name index when models are
loaded (`ProjectLinker.for_project`, `retrain`) without a rebuild, and `kb export` writes a file `kb import`
reads back to the same concepts and names."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from core.store import Project  # noqa: E402


def _correctable(project):
    """A gold mention (one concept, no abbreviation) whose text is not yet a name of its concept."""
    from core.retrieve.query_plan import plan_document
    from core.text.normalize import normalize_name

    kb = project.kb.knowledge_base()
    for document, mention_ids in project.documents.documents_with_mention_ids():
        for mention, plan, mention_id in zip(
            document.mentions, plan_document(document), mention_ids, strict=True
        ):
            names = (
                {normalize_name(n) for n in kb.get(mention.concept_id).names} if mention.concept_id else set()
            )
            if (
                len(mention.concept_ids) == 1
                and not plan.expanded
                and normalize_name(mention.text) not in names
            ):
                return mention, mention_id
    raise AssertionError("the demo has no mention whose text is a new name")


def _saved_rows(sidecar: Path) -> list:
    """[name, concept id, preferred] of each saved row, read from the `.rows` file the sidecar records."""
    from core.retrieve.name_rows import NameRows

    count = json.loads(sidecar.read_text(encoding="utf-8"))["rows_file"]["count"]
    return [
        [r.name, r.concept_id, int(r.preferred)] for r in NameRows.load(sidecar.with_suffix(".rows"), count)
    ]


def _saved_index(folder: Path) -> tuple[str, list, np.ndarray]:
    """The one saved index: its stem, name rows and vectors (read with FAISS itself)."""
    import faiss

    sidecars = sorted(folder.glob("*.json"))
    assert len(sidecars) == 1, sidecars
    rows = _saved_rows(sidecars[0])
    index = faiss.read_index(str(sidecars[0].with_suffix(".faiss")))
    return sidecars[0].stem, rows, index.reconstruct_n(0, index.ntotal)


def test_a_correction_joins_the_saved_index_when_models_load_without_a_rebuild(demo, monkeypatch):
    from core.jobs.linking.suggestions import ProjectLinker
    from core.retrieve import encoder as encoder_module
    from core.retrieve.index import NameIndex

    ProjectLinker.for_project(demo, use_reranker=False, use_ranker=False)  # the index as saved before
    stem, rows, vectors = _saved_index(demo.index_dir)
    mention, mention_id = _correctable(demo)
    demo.curation.record_decision(mention_id, "correct", concept_id=mention.concept_id, curator="ann")

    encoded: list[list[str]] = []
    real_encode = encoder_module.RescnnEncoder.encode

    def spy(self, texts, *args, **kwargs):
        encoded.append(list(texts))
        return real_encode(self, texts, *args, **kwargs)

    def no_rebuild(*args, **kwargs):
        raise AssertionError("the name index was rebuilt")

    monkeypatch.setattr(encoder_module.RescnnEncoder, "encode", spy)
    monkeypatch.setattr(NameIndex, "build", no_rebuild)
    linker = ProjectLinker.for_project(demo, use_reranker=False, use_ranker=False)
    assert encoded == [[mention.text]]  # only the new string was encoded

    new_stem, new_rows, new_vectors = _saved_index(demo.index_dir)  # the superseded pair is gone
    assert new_stem != stem
    assert len(new_rows) == len(rows) + 1
    assert new_rows[: len(rows)] == rows and new_rows[-1] == [mention.text, mention.concept_id, 0]
    assert np.array_equal(new_vectors[: len(rows)], vectors)
    top = linker.linker.retriever.retrieve([mention.text], 3)[0][0]
    assert (top.concept_id, top.matched_name) == (mention.concept_id, mention.text)
    assert mention.text in demo.kb.concept(mention.concept_id).synonyms

    encoded.clear()
    ProjectLinker.for_project(demo, use_reranker=False, use_ranker=False)  # nothing new: the saved pair loads
    assert encoded == [] and _saved_index(demo.index_dir)[0] == new_stem


def test_an_undone_correction_takes_its_synonym_out_of_the_kb_and_the_index(demo):
    # a curator corrects a mention to the wrong concept, the synonym is learnt at the next load, then
    # the curator undoes it: the wrong name must not stay behind suggesting the wrong concept
    from core.jobs.linking.suggestions import ProjectLinker

    mention, mention_id = _correctable(demo)
    wrong = next(c.concept_id for c in demo.kb.knowledge_base() if c.concept_id != mention.concept_id)
    demo.curation.record_decision(mention_id, "correct", concept_id=wrong, curator="ann")
    ProjectLinker.for_project(demo, use_reranker=False, use_ranker=False)
    assert mention.text in demo.kb.concept(wrong).synonyms  # learnt while the decision stood
    assert mention.text in [row[0] for row in _saved_index(demo.index_dir)[1]]

    demo.curation.record_decision(mention_id, "revert", curator="ann")  # undone while no linker was loaded
    linker = ProjectLinker.for_project(demo, use_reranker=False, use_ranker=False)
    assert mention.text not in demo.kb.concept(wrong).synonyms
    assert linker.linker.retriever.builds == 0, "the saved index was loaded and the name hidden, not rebuilt"
    in_use = demo.index_dir / f"{linker.linker.retriever._stem}.json"  # the pair for the KB without the name
    rows = _saved_rows(in_use)
    hidden = json.loads(in_use.read_text(encoding="utf-8"))["hidden"]
    assert [rows[i][:2] for i in hidden] == [[mention.text, wrong]]  # kept, hidden from every search
    visible = [row for i, row in enumerate(rows) if i not in hidden]
    assert sorted(r[:2] for r in visible) == sorted(
        [e.name, e.concept_id] for e in demo.kb.knowledge_base().names
    )
    assert len(list(demo.index_dir.glob("*.json"))) == 1, "the index that showed the name is gone"
    found = linker.linker.retriever.retrieve([mention.text], 5)[0]
    assert all(c.matched_name != mention.text for c in found)
    names_before = set(demo.kb.concept(mention.concept_id).names)
    assert mention.text not in names_before  # nothing else was touched: the KB's own names stay


def test_retrain_adds_curator_synonyms_to_the_index_in_force(demo):
    from core.jobs.linking.suggestions import ProjectLinker
    from core.jobs.models.retrain import retrain

    ProjectLinker.for_project(demo, use_reranker=False, use_ranker=False)
    _, rows, _ = _saved_index(demo.index_dir)
    mention, mention_id = _correctable(demo)
    demo.curation.record_decision(mention_id, "correct", concept_id=mention.concept_id, curator="ann")
    report = retrain(demo, kinds=("ranker",), promote="never", held_out_fraction=0.34, device="cpu")
    assert report.curator_synonyms == 1
    _, new_rows, _ = _saved_index(demo.index_dir)
    assert new_rows == rows + [[mention.text, mention.concept_id, 0]]


@pytest.mark.parametrize("fmt", ["tsv", "obo", "medic"])
def test_kb_export_round_trip(demo, tmp_path, fmt):
    from core.jobs.io.kb_export import export_kb
    from core.kb import load_kb
    from core.learn.synonyms import learn_synonyms

    mention, mention_id = _correctable(demo)
    demo.curation.record_decision(mention_id, "correct", concept_id=mention.concept_id, curator="ann")
    assert learn_synonyms(demo)
    kb = demo.kb.knowledge_base()

    for with_curator in (True, False):
        path = tmp_path / f"kb-{with_curator}.{fmt}"
        assert export_kb(demo, path, fmt=fmt, with_curator_synonyms=with_curator) == len(kb)
        with Project.create(tmp_path / f"again-{fmt}-{with_curator}") as again:
            again.kb.import_concepts(load_kb(path, fmt), source=str(path), fmt=fmt)
            reread = again.kb.knowledge_base()
        assert set(reread.concepts) == set(kb.concepts)
        for concept in kb:
            names = set(concept.names) - (set() if with_curator else {mention.text})
            copy = reread.concepts[concept.concept_id]
            assert (copy.preferred_name, set(copy.names)) == (concept.preferred_name, names)
            if fmt != "medic":  # MEDIC's layout holds ids and names only
                assert set(copy.parents) == set(concept.parents)
            assert set(copy.alt_ids) == set(concept.alt_ids)
        assert (mention.text in reread.concepts[mention.concept_id].synonyms) is with_curator


def test_kb_export_command(demo, tmp_path, capsys):
    from app.cli import main
    from core.kb import load_kb

    out = tmp_path / "kb.obo"
    assert main(["-p", str(demo.path), "kb", "export", "--out", str(out), "--format", "obo"]) == 0
    assert {c.concept_id for c in load_kb(out, "obo")} == set(demo.kb.knowledge_base().concepts)
    assert "concepts written (obo, without curator synonyms)" in capsys.readouterr().out
