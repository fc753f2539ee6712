"""core.jobs.linking.link: the one sequence `curalink link --detect` and the desk's Find mentions run
(find mentions, store them, link, store the suggestions), and what it says it changed, checked against
the store read afterwards."""

from __future__ import annotations

import pytest

from core.documents import document_from_title_abstract
from core.errors import CuralinkError
from core.jobs.linking.detect_targets import SKIP_GOLD
from core.jobs.linking.link import Detect, link
from core.jobs.linking.suggestions import ProjectLinker

RAW_ID = "raw-link-1"


@pytest.fixture
def project(demo):
    raw = document_from_title_abstract(RAW_ID, "Asthma in adults", "Adults with asthma and cystic fibrosis.")
    demo.documents.import_documents([raw], origin="imported")
    return demo


def _detected(project) -> int:
    return project.desk.stats()["mentions_by_origin"].get("detected", 0)


def test_detect_then_link_only_the_tagged_documents_as_the_desk_does(project) -> None:
    gold_id = next(d for d in project.documents.document_ids() if d != RAW_ID)
    gold_before = project.documents.document(gold_id).mentions
    linker = ProjectLinker.for_project(project)
    told, linked = [], []
    outcome = link(
        project,
        linker,
        detect=Detect(only_tagged=True),
        ids=[RAW_ID, gold_id],
        batch_documents=1,
        on_found=told.append,
        on_linked=linked.append,
    )
    assert told == [outcome.found], "told before linking, with the same summary"
    assert outcome.mentions_added == _detected(project) == 3
    assert outcome.skipped == {SKIP_GOLD: [gold_id]}
    assert project.documents.document(gold_id).mentions == gold_before
    assert linked == [[RAW_ID]] and outcome.documents == 1
    ((document, mention_ids),) = project.documents.documents_with_mention_ids(ids=[RAW_ID])
    assert len(mention_ids) == 3 and all(project.curation.suggestions(m) for m in mention_ids)
    assert outcome.suggestions >= 3 and outcome.linked.mentions == 3


def test_detect_then_link_the_whole_selection_as_the_command_line_does(project) -> None:
    gold_id = next(d for d in project.documents.document_ids() if d != RAW_ID)
    gold_mentions = len(project.documents.document(gold_id).mentions)
    outcome = link(project, ProjectLinker.for_project(project), detect=Detect(), ids=[RAW_ID, gold_id])
    assert outcome.mentions_added == _detected(project) == 3
    assert outcome.documents == 2 and outcome.linked.mentions == 3 + gold_mentions


def test_link_without_detect_adds_no_mention_and_unknown_ids_store_nothing(project) -> None:
    linker = ProjectLinker.for_project(project)
    outcome = link(project, linker, ids=[RAW_ID])
    assert outcome.found is None and outcome.mentions_added == 0 and outcome.skipped == {}
    assert outcome.documents == 1 and outcome.linked.mentions == 0
    with pytest.raises(CuralinkError):
        link(project, linker, detect=Detect(), ids=[RAW_ID, "no-such-document"])
    assert _detected(project) == 0
