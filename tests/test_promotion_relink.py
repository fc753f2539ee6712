"""Promotion relinks: after a new retriever version is put in force, every unreviewed mention's stored
suggestions come from it, while reviewed mentions keep their decisions and the suggestions they were
decided on (core job shared by `curalink promote` / `retrain` and the desk)."""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


from app.cli import main  # noqa: E402
from core.jobs.models.relinking import promote_and_relink, unreviewed  # noqa: E402
from core.jobs.models.retrain import retrain  # noqa: E402

TINY = {"max_seconds": 2.0, "epochs": 1, "held_out_fraction": 0.34, "device": "cpu"}


def review_first_document(project) -> list[int]:
    """Accept the gold link of every mention of the first document (curator 'ann')."""
    document, ids = next(project.documents.documents_with_mention_ids())
    for mention, mention_id in zip(document.mentions, ids, strict=True):
        project.curation.record_decision(mention_id, "accept", concept_id=mention.concept_id, curator="ann")
    return ids


def trained_candidate(project) -> str:
    """A retriever version registered but not in force (rule 'never'), learnt from every other mention
    still open (curator 'bob'); the rest stay unreviewed."""
    decided = set(project.curation.current_decisions())
    for document, ids in project.documents.documents_with_mention_ids():
        for index, (mention, mention_id) in enumerate(zip(document.mentions, ids, strict=True)):
            if index % 2 == 0 and len(mention.concept_ids) == 1 and mention_id not in decided:
                project.curation.record_decision(mention_id, "accept", concept_id=mention.concept_id, curator="bob")
    report = retrain(project, kinds=("retriever",), promote="never", **TINY)
    return report.kinds["retriever"].version


def test_promotion_relinks_unreviewed_mentions_only(demo, stored_versions):
    old = demo.models.active_model("retriever").version
    reviewed = review_first_document(demo)
    before_versions = stored_versions(demo)
    before_reviewed = {m: demo.curation.suggestions_for([m])[m] for m in reviewed}
    new = trained_candidate(demo)
    assert new != old and demo.models.active_model("retriever").version == old
    decisions_before = {m: (d.action, d.concept_id) for m, d in demo.curation.current_decisions().items()}
    work = unreviewed(demo)
    assert work.mention_ids and not work.mention_ids & set(reviewed)
    assert all(before_versions[m] == {old} for m in work.mention_ids)

    changed, summary = promote_and_relink(demo, {"retriever": new}, device="cpu")

    assert changed == {"retriever": new} and demo.models.active_model("retriever").version == new
    assert summary.mentions == len(work.mention_ids)
    after = stored_versions(demo)
    assert all(after[m] == {new} for m in work.mention_ids)
    assert all(after[m] == {old} for m in decisions_before)  # decided on the old suggestions: kept
    assert {m: demo.curation.suggestions_for([m])[m] for m in reviewed} == before_reviewed
    assert {m: (d.action, d.concept_id) for m, d in demo.curation.current_decisions().items()} == decisions_before


def test_cli_promote_relinks(demo, capsys, stored_versions):
    old = demo.models.active_model("retriever").version
    new = trained_candidate(demo)
    open_ids = unreviewed(demo).mention_ids
    demo.close()
    assert main(["-p", str(demo.path), "promote", "retriever", new, "--device", "cpu"]) == 0
    assert "relinked" in capsys.readouterr().out
    from core.store import Project

    with Project.open(demo.path) as project:
        after = stored_versions(project)
        assert project.models.active_model("retriever").version == new
        assert open_ids and all(after[m] == {new} for m in open_ids)
        assert old != new
