"""A restarted desk's models learn only from the decisions taken since the last load (issue 31 item 9:
reading every standing decision planned thousands of abstracts before the first suggestions at 20,000
documents), and end with the same curator synonyms as a load that reads every decision."""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from core.learn import synonyms  # noqa: E402
from core.learn.teaching import set_veto  # noqa: E402
from core.project_models import SYNONYMS_MARK  # noqa: E402
from tests.test_curator_synonyms import _correctable  # noqa: E402


def _load(project):
    from core.jobs.linking.suggestions import ProjectLinker

    return ProjectLinker.for_project(project, use_reranker=False, use_ranker=False)


def _curator_names(project) -> dict[str, set[str]]:
    return project.kb.names_from_source(synonyms.CURATOR_SOURCE)


def test_a_load_reads_only_the_mentions_decided_since_the_last_load(demo, monkeypatch):
    reads: list[list[int] | None] = []
    real = synonyms.curated_links

    def spy(project, resolve, mention_ids=None, **kwargs):
        reads.append(None if mention_ids is None else sorted(mention_ids))
        return real(project, resolve, mention_ids, **kwargs)

    monkeypatch.setattr(synonyms, "curated_links", spy)
    _load(demo)  # the demo was linked when built: its load noted the decisions it learnt from
    assert reads == [], "nothing decided since: no decision is read"
    demo.settings.set_setting(SYNONYMS_MARK, None)  # as in a project made before the mark
    _load(demo)
    assert reads == [None], "without a mark, a load reads every standing decision"
    mention, mention_id = _correctable(demo)
    wrong = next(c.concept_id for c in demo.kb.knowledge_base() if c.concept_id != mention.concept_id)

    reads.clear()
    demo.curation.record_decision(mention_id, "correct", concept_id=wrong, curator="ann")
    _load(demo)
    assert reads and None not in reads and reads[0] == [mention_id]
    assert mention.text in _curator_names(demo).get(wrong, set())  # learnt while the decision stands

    reads.clear()
    demo.curation.record_decision(mention_id, "revert", curator="ann")  # undone with no linker loaded
    demo.curation.record_decision(mention_id, "correct", concept_id=mention.concept_id, curator="ann")
    linker = _load(demo)
    assert None not in reads
    assert mention.text not in _curator_names(demo).get(wrong, set()), "the undone synonym was withdrawn"
    assert mention.text in _curator_names(demo).get(mention.concept_id, set())
    found = linker.linker.retriever.retrieve([mention.text], 1)[0][0]
    assert (found.concept_id, found.matched_name) == (mention.concept_id, mention.text)

    reads.clear()
    _load(demo)
    assert reads == [], "nothing decided since: no decision is read"
    incremental = _curator_names(demo)

    demo.settings.set_setting(SYNONYMS_MARK, None)  # forget the mark: the next load reads everything
    reads.clear()
    _load(demo)
    assert reads[0] is None
    assert _curator_names(demo) == incremental, "the same synonyms as a load that reads every decision"


def test_a_veto_since_the_last_load_makes_the_next_load_read_every_decision(demo, monkeypatch):
    _load(demo)
    mention, mention_id = _correctable(demo)
    demo.curation.record_decision(mention_id, "correct", concept_id=mention.concept_id, curator="ann")
    _load(demo)
    assert mention.text in _curator_names(demo).get(mention.concept_id, set())
    reads: list = []
    real = synonyms.curated_links
    monkeypatch.setattr(
        synonyms,
        "curated_links",
        lambda project, resolve, mention_ids=None, **kw: reads.append(mention_ids)
        or real(project, resolve, mention_ids, **kw),
    )
    set_veto(demo, mention.concept_id, mention.text, True)  # no decision is written for a veto
    _load(demo)
    assert reads and reads[0] is None
    assert mention.text not in _curator_names(demo).get(mention.concept_id, set())
