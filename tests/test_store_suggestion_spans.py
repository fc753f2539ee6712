"""Suggestions belong to a mention's current span and type (issue 10, item 4), and one decision can link
a mention to several concepts (item 5): the rules the store enforces whatever the front end does."""

from __future__ import annotations

import pytest

from core.documents import Candidate, Mention, document_from_title_abstract
from core.errors import CuralinkError
from core.kb.concept import Concept
from core.store import Project
from core.store.curation import curated_documents

TITLE = "Colorectal, endometrial, and ovarian cancers"
ABSTRACT = "Women with ovarian cancers were seen."


@pytest.fixture
def project(tmp_path):
    project = Project.create(tmp_path / "p")
    project.kb.import_concepts(
        [
            Concept("D015179", "MESH", "Colorectal Neoplasms"),
            Concept("D016889", "MESH", "Endometrial Neoplasms"),
            Concept("D010051", "MESH", "Ovarian Neoplasms"),
            Concept("D009369", "MESH", "Neoplasms"),
        ]
    )
    doc = document_from_title_abstract("1", TITLE, ABSTRACT)
    start = doc.text.index("ovarian cancers", len(TITLE))
    doc = doc.with_mentions(
        [
            Mention(0, len(TITLE), TITLE, "Disease", "D015179|D016889|D010051"),
            Mention(start + 5, start + 15, "an cancers", "Disease", "D010051"),
        ]
    )
    project.documents.import_documents([doc])
    yield project
    project.close()


def _mentions(project):
    document, ids = next(project.documents.documents_with_mention_ids())
    return document, ids


def _suggest(project, mention_id, key, *concept_ids):
    return project.curation.store_suggestions(
        {mention_id: [Candidate(c, "", "", 1.0 - i / 10) for i, c in enumerate(concept_ids)]},
        computed_for={mention_id: key},
        retriever_version="v1",
    )


def test_a_span_or_type_edit_deletes_the_mention_suggestions_at_once(project):
    document, (composite, partial) = _mentions(project)
    old = (document.mentions[1].start, document.mentions[1].end, "Disease")
    _suggest(project, partial, old, "D009369")
    _suggest(project, composite, (0, len(TITLE), "Disease"), "D015179", "D016889")
    project.documents.set_mention_span(partial, old[0] - 5, old[1], curator="ann")
    assert project.curation.suggestions_for([partial, composite]) == {
        partial: [],
        composite: project.curation.suggestions(composite),
    }
    assert len(project.curation.suggestions(composite)) == 2  # the other mention keeps its own
    assert _mentions(project)[0].mentions[1].text == "ovarian cancers"

    assert project.documents.set_mention_type(composite, "SpecificDisease", curator="ann") == "Disease"
    assert project.curation.suggestions(composite) == []
    assert _mentions(project)[0].mentions[0].type == "SpecificDisease"
    # Type and span edits are provenance, never a link state.
    assert project.curation.current_decisions() == {}


def test_late_suggestions_for_an_old_span_are_dropped(project):
    document, (_, partial) = _mentions(project)
    old = (document.mentions[1].start, document.mentions[1].end, "Disease")
    new = (old[0] - 5, old[1], "Disease")
    project.documents.set_mention_span(partial, new[0], new[1], curator="ann")
    # A linker that read the old span and finishes now stores nothing, and brings nothing back.
    assert _suggest(project, partial, old, "D009369") == 0
    assert project.curation.suggestions(partial) == []
    assert _suggest(project, partial, new, "D010051", "D009369") == 2
    sets = project.curation.suggestion_sets([partial])
    assert sets[partial].key == new
    assert [c.concept_id for c in sets[partial].candidates] == ["D010051", "D009369"]
    # Moving it back (an undo) is an edit like any other: its suggestions go again.
    project.documents.set_mention_span(partial, old[0], old[1], curator="ann")
    assert project.curation.suggestion_sets([partial]) == {}
    with pytest.raises(CuralinkError, match="do not say which span"):
        project.curation.store_suggestions({partial: [Candidate("D009369", "", "", 0.5)]})
    assert project.curation.store_suggestions({partial: []}) == 0  # clearing needs no key


def test_an_accept_on_suggestions_for_another_span_is_refused(project):
    document, (_, partial) = _mentions(project)
    old = (document.mentions[1].start, document.mentions[1].end, "Disease")
    new = (old[0] - 5, old[1], "Disease")
    _suggest(project, partial, old, "D009369")
    project.documents.set_mention_span(partial, new[0], new[1], curator="ann")
    with pytest.raises(
        CuralinkError, match=r"acted on suggestions for \[.*but the mention is now.*new suggestions"
    ):
        project.curation.record_decision(partial, "accept", concept_id="D009369", curator="ann", suggested_for=old)
    # Without saying which suggestions it used, an accept of an edited mention must name current ones.
    with pytest.raises(CuralinkError, match="not among the suggestions for its current span"):
        project.curation.record_decision(partial, "accept", concept_id="D009369", curator="ann")
    assert project.curation.current_decisions() == {}
    _suggest(project, partial, new, "D010051", "D009369")
    project.curation.record_decision(partial, "accept", concept_id="D010051", curator="ann", suggested_for=new)
    assert project.curation.current_decisions()[partial].concept_id == "D010051"
    # A correction (a KB search) does not act on suggestions.
    project.curation.record_decision(partial, "correct", concept_id="D015179", curator="ann")
    assert project.curation.current_decisions()[partial].action == "correct"


def test_one_decision_links_a_composite_mention_to_several_concepts(project):
    document, (composite, _) = _mentions(project)
    key = (0, len(TITLE), "Disease")
    _suggest(project, composite, key, "D015179", "D016889", "D010051", "D009369")
    project.curation.record_decision(
        composite,
        "accept",
        concept_id="D015179|D016889|D010051",
        curator="ann",
        suggested_for=key,
        detail={"ranks": [1, 2, 3]},
    )
    assert project.curation.current_decisions()[composite].concept_id == "D015179|D016889|D010051"
    exported = next(curated_documents(project, accepted_only=True))
    assert [m.concept_id for m in exported.mentions] == ["D015179|D016889|D010051"]
    assert exported.mentions[0].concept_ids == ("D015179", "D016889", "D010051")
    project.curation.record_decision(composite, "revert", curator="ann")  # undo: one step for the whole link
    assert project.curation.current_decisions() == {}
    for bad in ("D015179||D010051", "D015179|D015179", "", "D015179| D010051"):
        with pytest.raises(CuralinkError, match="concept id"):
            project.curation.record_decision(composite, "correct", concept_id=bad, curator="ann")
    assert project.curation.current_decisions() == {}
