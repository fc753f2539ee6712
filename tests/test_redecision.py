"""A decision the same curator already has in force on a mention is not stored again (issue 31: repeated
Enter on the last mention stored 5 identical rows; each counted again in training and agreement and took
one more Ctrl+Z). A different link, a decision without teaching, or another curator's is stored."""

from __future__ import annotations

from core.jobs.curation import operations as curation
from core.store.schema import DecisionRow


def _rows(project) -> list[tuple[int, str, str, str]]:
    with project.session() as session:
        found = session.query(DecisionRow).order_by(DecisionRow.id)
        return [(r.mention_id, r.action, r.concept_id or "", r.curator) for r in found]


def test_an_identical_decision_is_not_stored_twice(demo):
    mention_id = demo.documents.documents_with_mention_ids(ids=["90000001"]).__next__()[1][0]
    top, second = (c.concept_id for c in demo.curation.suggestions(mention_id)[:2])
    first = curation.decide(demo, mention_id, "accept", concept_id=top, curator="ann")
    again = curation.decide(demo, mention_id, "accept", concept_id=top, curator="ann")
    assert first.decision_ids and not again.decision_ids
    assert _rows(demo) == [(mention_id, "accept", top, "ann")]
    assert curation.history_of(demo, "ann").labels == first.history.labels  # no second undo step
    assert again.decisions[mention_id].concept_id == top  # what the desk redraws: the decision in force

    curation.decide(demo, mention_id, "accept", concept_id=top, curator="bob")  # a second curator agrees
    curation.decide(demo, mention_id, "accept", concept_id=second, curator="bob")  # a change
    curation.decide(demo, mention_id, "accept", concept_id=second, curator="bob", detail={"teach": False})
    curation.decide(demo, mention_id, "accept", concept_id=second, curator="bob", detail={"teach": False})
    assert _rows(demo)[1:] == [(mention_id, "accept", top, "bob")] + [(mention_id, "accept", second, "bob")] * 2
    curation.undo(demo, "bob")  # the change without teaching is taken back in one step
    assert demo.curation.current_decisions()[mention_id].concept_id == second
