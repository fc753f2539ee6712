"""The small store queries the curator's desk needs: queue, batched suggestions, mention edits."""

from __future__ import annotations

import pytest

from core.documents import Candidate, Mention, document_from_title_abstract
from core.errors import CuralinkError
from core.kb.concept import Concept
from core.store import Project
from core.store.curation_log import mention_key


@pytest.fixture
def project(tmp_path):
    project = Project.create(tmp_path / "p")
    project.kb.import_concepts(
        [
            Concept("D1", "MESH", "Huntington Disease", ("Huntington Chorea",)),
            Concept("D2", "MESH", "Chorea", ("Choreiform Movements",)),
        ]
    )
    doc = document_from_title_abstract("7", "Chorea in Huntington disease", "Chorea is common.")
    doc = doc.with_mentions(
        [Mention(0, 6, "Chorea", "Disease", "D2"), Mention(10, 28, "Huntington disease", "Disease", "D1")]
    )
    empty = document_from_title_abstract("8", "Nothing here", "")
    project.documents.import_documents([doc, empty])
    yield project
    project.close()


def test_queue_suggestions_and_decisions(project):
    document, (chorea, huntington) = next(project.documents.documents_with_mention_ids(ids=["7"]))
    project.curation.store_suggestions(
        {
            chorea: [Candidate("D2", "", "Chorea", 0.9), Candidate("D1", "", "Huntington Chorea", 0.5)],
            huntington: [
                Candidate("D1", "", "Huntington Disease", 0.8, 0.7),
                Candidate("D2", "", "", 0.6, 0.65),
            ],
        },
        computed_for={
            chorea: mention_key(document.mentions[0]),
            huntington: mention_key(document.mentions[1]),
        },
        retriever_version="v3",
        reranker_version="r1",
    )
    queue = {e.doc_id: e for e in project.desk.queue()}
    assert (queue["7"].mentions, queue["7"].reviewed, queue["7"].unsuggested) == (2, 0, 0)
    assert queue["7"].margin == pytest.approx(0.05)  # reranker scores win when present
    assert queue["7"].status == "unreviewed" and queue["8"].mentions == 0
    found = project.curation.suggestions_for([chorea, huntington, 999])
    assert [c.concept_id for c in found[chorea]] == ["D2", "D1"]
    assert found[chorea][0].name == "Chorea" and found[huntington][0].reranker_score == pytest.approx(0.7)
    assert found[999] == []
    assert project.curation.suggestion_version(huntington) == "v3+r1"
    assert project.curation.suggestion_version(999) == ""

    project.curation.record_decision(huntington, "accept", concept_id="D1", curator="ann")
    queue = {e.doc_id: e for e in project.desk.queue()}
    assert queue["7"].status == "in progress" and queue["7"].margin == pytest.approx(0.4)
    assert set(project.curation.current_decisions(mention_ids=[chorea])) == set()
    assert set(project.curation.current_decisions(mention_ids=[huntington])) == {huntington}


def test_add_remove_and_move_mentions(project):
    new = project.documents.add_mention("7", 11, 21, type="Disease")
    doc, ids = next(project.documents.documents_with_mention_ids(ids=["7"]))
    added = doc.mentions[ids.index(new)]
    assert (added.text, added.origin, added.type) == ("untington ", "curator", "Disease")
    assert project.documents.set_mention_span(new, 10, 20) == (11, 21)
    doc, ids = next(project.documents.documents_with_mention_ids(ids=["7"]))
    assert doc.mentions[ids.index(new)].text == "Huntington"
    project.documents.set_mention_removed(new)
    assert [m.text for m in project.documents.document("7").mentions] == ["Chorea", "Huntington disease"]
    assert len(list(project.documents.documents(ids=["7"], include_removed=True))[0].mentions) == 3
    project.documents.set_mention_removed(new, False)
    assert len(project.documents.document("7").mentions) == 3
    with pytest.raises(CuralinkError, match="outside the text"):
        project.documents.add_mention("7", 5, 500)
    with pytest.raises(CuralinkError, match="no document"):
        project.documents.add_mention("nope", 0, 1)
    with pytest.raises(CuralinkError, match="no mention"):
        project.documents.set_mention_removed(12345)


def _log(project) -> list[tuple[str, int, dict]]:
    import json

    from core.store.schema import DecisionRow

    with project.session() as session:
        rows = session.query(DecisionRow).order_by(DecisionRow.id)
        return [(r.action, r.mention_id, json.loads(r.detail_json)) for r in rows]


def test_span_edits_are_logged_but_leave_the_link_state(project):
    from core.store.curation import curated_documents

    _, (chorea, huntington) = next(project.documents.documents_with_mention_ids(ids=["7"]))
    project.curation.record_decision(huntington, "accept", concept_id="D1", curator="ann")
    assert project.documents.set_mention_span(huntington, 10, 20, curator="ann") == (10, 28)
    new = project.documents.add_mention("7", 0, 6, type="Disease", curator="bob")
    project.documents.set_mention_removed(new, curator="bob")
    log = _log(project)
    assert log[1:] == [
        ("adjust_span", huntington, {"old_start": 10, "old_end": 28, "new_start": 10, "new_end": 20}),
        ("add_mention", new, {"start": 0, "end": 6}),
        ("delete_mention", new, {"start": 0, "end": 6, "restored": False}),
    ]
    # The edits are provenance only: the accept is still the mention's state, and a revert undoes it.
    state = project.curation.current_decisions()
    assert set(state) == {huntington} and state[huntington].action == "accept"
    linked = next(curated_documents(project, accepted_only=True))
    assert [(m.text, m.concept_id) for m in linked.mentions] == [("Huntington", "D1")]
    project.curation.record_decision(huntington, "revert", curator="ann")
    assert project.curation.current_decisions() == {}
    # Without a curator nothing is logged (imports, migrations).
    project.documents.set_mention_span(huntington, 10, 28)
    assert len(_log(project)) == 5


def test_record_decisions_is_one_transaction(project):
    from core.store.project import NewDecision

    _, (chorea, huntington) = next(project.documents.documents_with_mention_ids(ids=["7"]))
    ids = project.curation.record_decisions(
        [
            NewDecision(chorea, "accept", "D2", "ann", "v1", {"bulk_threshold": 0.5}),
            NewDecision(huntington, "accept", "D1", "ann", "v1", {"bulk_threshold": 0.5}),
        ]
    )
    assert len(ids) == 2 and ids[1] == ids[0] + 1
    state = project.curation.current_decisions()
    assert {m: (d.concept_id, d.model_version) for m, d in state.items()} == {
        chorea: ("D2", "v1"),
        huntington: ("D1", "v1"),
    }
    # One bad row (an unknown mention or action) and nothing of the bulk is written.
    with pytest.raises(CuralinkError, match="no mention with id 999"):
        project.curation.record_decisions([NewDecision(chorea, "revert"), NewDecision(999, "revert")])
    with pytest.raises(CuralinkError, match="unknown decision 'maybe'"):
        project.curation.record_decisions([NewDecision(chorea, "revert"), NewDecision(huntington, "maybe")])
    assert len(_log(project)) == 2
    assert project.curation.record_decisions([]) == []


def test_queue_rows_of_some_documents_match_the_full_queue(tmp_path):
    """The desk re-reads only the rows a decision changed (issue 11): they equal the full queue's."""
    from core.documents import Document, Passage

    text = "Huntington disease and chorea."
    with Project.create(tmp_path / "p") as project:
        project.documents.import_documents(
            [
                Document(
                    str(n),
                    [Passage(0, text)],
                    [
                        Mention(0, 18, "Huntington disease", "Disease", "D1"),
                        Mention(23, 29, "chorea", "Disease"),
                    ],
                )
                for n in range(1, 5)
            ]
        )
        first = next(iter(project.documents.documents_with_mention_ids(ids=["2"])))[1][0]
        project.curation.record_decision(first, "nil", curator="c")
        full = {entry.doc_id: entry for entry in project.desk.queue()}
        some = project.desk.queue(doc_ids=["2", "4", "missing"])
    assert [entry.doc_id for entry in some] == ["2", "4"]
    assert some == [full["2"], full["4"]] and full["2"].reviewed == 1 and full["4"].reviewed == 0


def test_concepts_in_one_read_answer_as_concept_does_one_by_one(demo):
    """The candidate pane loads a mention's concepts together; each answer is what `concept` gives alone
    (primary ids, an alternative id, a canonical spelling, an unknown id)."""
    concepts = list(demo.kb.knowledge_base())
    some = [c.concept_id for c in concepts][:40]
    alternative = next((alt for c in concepts for alt in c.alt_ids), None)
    asked = [*some, "MESH:" + some[0], "NOT-A-CONCEPT", *([alternative] if alternative else [])]
    together = demo.kb.concepts(asked)
    assert list(together) == list(dict.fromkeys(asked))
    for concept_id in asked:
        assert together[concept_id] == demo.kb.concept(concept_id), concept_id
    assert together["NOT-A-CONCEPT"] is None
    assert sum(c is not None for c in together.values()) >= 41
