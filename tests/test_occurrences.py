"""Issue 23 item 12: every occurrence of a string annotated at once, word-bounded, in a document or the
whole project, counted first, one undo. Expected spans are written out by hand from the texts below."""

from __future__ import annotations

import pytest

from core.documents import Document, Passage
from core.errors import CuralinkError
from core.jobs.curation import operations as curation
from core.jobs.curation.occurrences import annotate_occurrences, preview_occurrences

ONE = "HD patients. Huntington disease (HD) raises HDL; hd\nagain, and H.D. or HD-like."
TWO = "No HD here?  Yes: HD."


def _documents(project) -> int:
    project.documents.import_documents(
        [
            Document("occ-1", (Passage(0, ONE, "abstract"),)),
            Document("occ-2", (Passage(0, TWO, "abstract"),)),
        ],
        source="",
        split="",
    )
    return project.documents.add_mention("occ-1", 0, 2, type="Disease")  # the first "HD" is already a mention


def _expected(text: str, *starts: int) -> list[tuple[int, int]]:
    return [(s, s + 2) for s in starts]


def test_preview_counts_word_bounded_occurrences_and_skips_mentions(demo):
    _documents(demo)
    # in ONE: "(HD)" at 33, "hd" at 49, "HD-like" at 71 (a hyphen ends a word); not "HDL", not "H.D."
    assert [ONE[s : s + 2] for s in (33, 49, 71)] == ["HD", "hd", "HD"]
    found = preview_occurrences(demo, "HD", document="occ-1")
    assert [(s, e) for _, s, e in found.spans] == _expected(ONE, 33, 49, 71)
    assert found.skipped == 1  # the mention at 0
    assert found.describe() == "3 occurrences in 1 document (1 already a mention)"
    everywhere = preview_occurrences(demo, "hd")
    in_two = [(s, e) for d, s, e in everywhere.spans if d == "occ-2"]
    assert in_two == _expected(TWO, TWO.find("HD"), TWO.rfind("HD"))
    assert {"occ-1", "occ-2"} <= set(everywhere.documents)
    spaced = preview_occurrences(demo, "hd   again", document="occ-1")  # any white space between words
    assert [(s, e) for _, s, e in spaced.spans] == [(49, 49 + len("hd\nagain"))]
    with pytest.raises(CuralinkError, match="no words"):
        preview_occurrences(demo, "  ,  ")


def test_annotating_from_a_decided_mention_links_them_all_and_one_undo_takes_all_back(demo):
    source = _documents(demo)
    demo_concept = next(iter(demo.kb.knowledge_base())).concept_id
    curation.decide(demo, source, "correct", concept_id=demo_concept, curator="ann")
    before = {m for _, ids in demo.documents.documents_with_mention_ids() for m in ids}

    changes = annotate_occurrences(demo, "HD", type="Disease", source=source, curator="ann")
    added = sorted(changes.edited)
    spans = sorted(
        (document.doc_id, m.start, m.end, m.type)
        for document, ids in demo.documents.documents_with_mention_ids(ids=["occ-1", "occ-2"])
        for m, i in zip(document.mentions, ids, strict=True)
        if i in added
    )
    assert spans == sorted(
        [("occ-1", s, e, "Disease") for s, e in _expected(ONE, 33, 49, 71)]
        + [("occ-2", s, e, "Disease") for s, e in _expected(TWO, TWO.find("HD"), TWO.rfind("HD"))]
    )
    state = demo.curation.current_decisions(mention_ids=added)
    assert {(d.action, d.concept_id, d.curator) for d in state.values()} == {("correct", demo_concept, "ann")}
    assert len(state) == len(added) == 5
    assert changes.label.startswith("annotate “HD” as correct")

    undone = curation.undo(demo, "ann")
    assert undone.label.startswith("undo annotate “HD”")
    after = {m for _, ids in demo.documents.documents_with_mention_ids() for m in ids}
    assert after == before  # every added mention is gone, the source stays
    assert demo.curation.current_decisions(mention_ids=added) == {}
    assert demo.curation.current_decisions(mention_ids=[source])[source].concept_id == demo_concept

    curation.redo(demo, "ann")
    assert len(demo.curation.current_decisions(mention_ids=added)) == 5
    assert {m for _, ids in demo.documents.documents_with_mention_ids() for m in ids} == before | set(added)


def test_a_selection_in_one_document_adds_undecided_mentions_there_only(demo):
    _documents(demo)
    changes = annotate_occurrences(demo, "Huntington disease", document="occ-1", curator="ann")
    assert len(changes.edited) == 1 and changes.documents == frozenset({"occ-1"})
    assert demo.curation.current_decisions(mention_ids=sorted(changes.edited)) == {}
    with pytest.raises(CuralinkError, match="no occurrence"):  # now a mention: nothing left to add
        annotate_occurrences(demo, "huntington DISEASE", document="occ-1", curator="ann")


def test_the_cli_previews_annotates_and_undoes_every_occurrence(demo, capsys):
    import json

    from app.cli import main

    _documents(demo)
    where = ["-p", str(demo.path)]

    def run(*argv) -> dict:
        capsys.readouterr()
        assert main([*where, *argv]) == 0
        return json.loads(capsys.readouterr().out)

    preview = run("annotate", "HD", "--document", "occ-1", "--preview", "--json")
    assert [tuple(s) for s in preview["spans"]] == [("occ-1", s, e) for s, e in _expected(ONE, 33, 49, 71)]
    assert (preview["skipped"], preview["mentions"]) == (1, [])
    assert len(demo.documents.document("occ-1").mentions) == 1  # a preview adds nothing
    done = run("annotate", "HD", "--document", "occ-1", "--type", "Disease", "--curator", "ann", "--json")
    assert len(done["mentions"]) == 3
    assert sorted((m.start, m.type) for m in demo.documents.document("occ-1").mentions) == [
        (0, "Disease"),
        (33, "Disease"),
        (49, "Disease"),
        (71, "Disease"),
    ]
    assert run("undo", "--curator", "ann", "--json")["label"].startswith("undo annotate “HD”")
    assert [m.start for m in demo.documents.document("occ-1").mentions] == [0]


def test_a_decision_is_copied_to_its_own_text_only_and_keeps_not_teaching(demo):
    """Issue 31 item 3: an edited text does not take the source mention's decision; a source decided
    without teaching gives copies that do not teach."""
    import json

    source = _documents(demo)
    concept = next(iter(demo.kb.knowledge_base().concepts))
    curation.decide(demo, source, "correct", concept_id=concept, detail={"teach": False})
    with pytest.raises(CuralinkError, match="not copied to another text"):
        annotate_occurrences(demo, "patients", document="occ-1", source=source)
    changes = annotate_occurrences(demo, "HD", source=source)
    copies = demo.curation.current_decisions(mention_ids=sorted(changes.edited))
    assert len(copies) == 5 and all(d.concept_id == concept for d in copies.values())
    assert all(json.loads(d.detail_json)["teach"] is False for d in copies.values())
