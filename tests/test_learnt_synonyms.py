"""Issue 23 item 4: what the linker learnt from curators is listed, can be removed (and the removal undone),
a decision can be taken without teaching, and a project can turn learning from decisions off. Each is
checked on what the loaded linker then finds and on what the store keeps, not on the code's own counts."""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from core.jobs.curation import operations as curation  # noqa: E402
from core.text.normalize import normalize_name  # noqa: E402
from tests.test_curator_synonyms import _correctable  # noqa: E402
from tests.test_live_learning import _with_copies, _wrong_concept  # noqa: E402


def _found(linker, text: str, concept_id: str) -> bool:
    """Whether the loaded linker's retriever finds `text` as a name of `concept_id`."""
    return any(
        c.concept_id == concept_id and c.matched_name == text
        for c in linker.linker.retriever.retrieve([text], 10)[0]
    )


def test_a_learnt_synonym_is_listed_and_removing_it_withdraws_it_until_undone(demo):
    from core.jobs.curation.learnt import learnt_synonyms, remove_learnt
    from core.jobs.linking.suggestions import ProjectLinker

    mention, mention_id = _correctable(demo)
    wrong = _wrong_concept(demo, mention)
    copies = _with_copies(demo, mention.text)  # two more mentions with the same text
    linker = ProjectLinker.for_project(demo, use_reranker=False, use_ranker=False)
    changes = curation.decide(demo, mention_id, "correct", concept_id=wrong, curator="ann")
    linker.learn(demo, sorted(changes.mentions))
    assert _found(linker, mention.text, wrong)

    rows = learnt_synonyms(demo)
    assert [(r.string, r.concept_id, r.action, r.mention_id, r.curator) for r in rows] == [
        (mention.text, wrong, "correct", mention_id, "ann")
    ]
    assert rows[0].concept_name == demo.kb.concept(wrong).preferred_name
    # the other mentions whose text is the string: counted here from the store directly
    same = [
        i
        for document, ids in demo.documents.documents_with_mention_ids()
        for m, i in zip(document.mentions, ids, strict=True)
        if normalize_name(m.text) == normalize_name(mention.text) and i != mention_id
    ]
    assert set(copies) <= set(same)
    assert rows[0].same_text == len(same)

    removed = remove_learnt(demo, wrong, mention.text, curator="ann")
    assert removed.relearn == frozenset({mention_id})
    linker.learn(demo, sorted(removed.relearn))
    assert not _found(linker, mention.text, wrong)  # the loaded linker no longer suggests it
    assert mention.text not in demo.kb.concept(wrong).synonyms  # nor does the store
    assert demo.curation.current_decisions(mention_ids=[mention_id])[mention_id].concept_id == wrong  # decision kept
    assert [(r.string, r.removed) for r in learnt_synonyms(demo)] == [(mention.text, True)]
    reloaded = ProjectLinker.for_project(demo, use_reranker=False, use_ranker=False)
    assert not _found(reloaded, mention.text, wrong)  # stays removed after a reload

    undone = curation.undo(demo, "ann")
    assert undone.label.startswith("undo remove learnt synonym")
    linker.learn(demo, sorted(undone.relearn))
    assert _found(linker, mention.text, wrong)
    assert mention.text in demo.kb.concept(wrong).synonyms
    assert [(r.string, r.removed) for r in learnt_synonyms(demo)] == [(mention.text, False)]


def test_a_decision_without_teaching_links_but_teaches_nothing(demo):
    from core.jobs.curation.learnt import learnt_synonyms
    from core.jobs.linking.suggestions import ProjectLinker

    mention, mention_id = _correctable(demo)
    wrong = _wrong_concept(demo, mention)
    linker = ProjectLinker.for_project(demo, use_reranker=False, use_ranker=False)
    changes = curation.decide(
        demo, mention_id, "correct", concept_id=wrong, curator="ann", detail={"teach": False}
    )
    learned = linker.learn(demo, sorted(changes.mentions))
    assert learned.added == []
    assert not _found(linker, mention.text, wrong)
    assert mention.text not in demo.kb.concept(wrong).synonyms
    assert learnt_synonyms(demo) == []
    assert demo.curation.current_decisions(mention_ids=[mention_id])[mention_id].concept_id == wrong


def test_learning_off_teaches_nothing_and_withdraws_what_was_learnt_at_the_next_load(demo):
    from core.jobs.curation.learnt import set_learning
    from core.jobs.linking.suggestions import ProjectLinker

    mention, mention_id = _correctable(demo)
    wrong = _wrong_concept(demo, mention)
    demo.curation.record_decision(mention_id, "correct", concept_id=wrong, curator="ann")
    linker = ProjectLinker.for_project(demo, use_reranker=False, use_ranker=False)
    assert _found(linker, mention.text, wrong)  # learnt at load

    set_learning(demo, False)
    reloaded = ProjectLinker.for_project(demo, use_reranker=False, use_ranker=False)
    assert not _found(reloaded, mention.text, wrong)
    assert mention.text not in demo.kb.concept(wrong).synonyms

    demo.curation.record_decision(mention_id, "revert", curator="ann")  # decided again while learning is off
    demo.curation.record_decision(mention_id, "correct", concept_id=wrong, curator="ann")
    assert reloaded.learn(demo, [mention_id]).added == []
    assert not _found(reloaded, mention.text, wrong)


def test_the_cli_lists_removes_and_undoes_a_learnt_synonym(demo, capsys):
    import json

    from app.cli import main
    from core.jobs.linking.suggestions import ProjectLinker

    mention, mention_id = _correctable(demo)
    wrong = _wrong_concept(demo, mention)
    demo.curation.record_decision(mention_id, "correct", concept_id=wrong, curator="ann")
    ProjectLinker.for_project(demo, use_reranker=False, use_ranker=False)  # a load learns it
    assert mention.text in demo.kb.concept(wrong).synonyms
    where = ["-p", str(demo.path)]

    def run(*argv) -> dict:
        capsys.readouterr()
        assert main([*where, *argv]) == 0
        return json.loads(capsys.readouterr().out)

    listed = run("synonyms", "list", "--json")
    assert [(s["string"], s["concept"], s["mention"], s["removed"]) for s in listed["synonyms"]] == [
        (mention.text, wrong, mention_id, False)
    ]
    removed = run("synonyms", "remove", wrong, mention.text, "--curator", "ann", "--json")
    assert removed["mentions"] == [mention_id] and removed["names_removed"] == 1
    assert mention.text not in demo.kb.concept(wrong).synonyms  # out of the store at once
    assert [s["removed"] for s in run("synonyms", "list", "--json")["synonyms"]] == [True]
    assert run("undo", "--curator", "ann", "--json")["label"].startswith("undo remove learnt synonym")
    # allowed again: the decision teaches it, and the next load stores it again
    assert [(s["removed"], s["pending"]) for s in run("synonyms", "list", "--json")["synonyms"]] == [
        (False, True)
    ]
    ProjectLinker.for_project(demo, use_reranker=False, use_ranker=False)
    assert mention.text in demo.kb.concept(wrong).synonyms
    assert [(s["removed"], s["pending"]) for s in run("synonyms", "list", "--json")["synonyms"]] == [
        (False, False)
    ]
    assert run("synonyms", "learning", "off", "--json") == {"learning": False}
    assert run("synonyms", "list", "--json") == {"learning": False, "synonyms": []}


def test_a_stored_synonym_no_decision_teaches_is_still_listed_with_its_concept_name(demo):
    """Issue 31 item 3: every learnt synonym shows in the list, whatever taught it. Undone with no linker
    loaded (the CLI), the synonym stays stored until the next load; it is listed, marked as such."""
    from core.jobs.curation.learnt import learnt_synonyms
    from core.learn.synonyms import CURATOR_SOURCE, learn_synonyms

    mention, mention_id = _correctable(demo)
    wrong = _wrong_concept(demo, mention)
    curation.decide(demo, mention_id, "correct", concept_id=wrong, curator="ann")
    learn_synonyms(demo)  # stored, as a desk's live learning or a load stores it
    assert mention.text in demo.kb.names_from_source(CURATOR_SOURCE)[wrong]
    curation.undo(demo, "ann")  # no linker: the store keeps the name until the next load

    rows = learnt_synonyms(demo)
    assert [(r.string, r.concept_id, r.decisions, r.mention_id, r.state) for r in rows] == [
        (mention.text, wrong, 0, None, "no decision: withdrawn at the next load")
    ]
    assert rows[0].concept_name == demo.kb.concept(wrong).preferred_name


def test_deleting_a_decided_mention_withdraws_what_it_taught_and_undo_teaches_it_again(demo):
    """Issue 31 item 3: undo takes back learning whatever the step; a deleted mention teaches nothing."""
    from core.jobs.linking.suggestions import ProjectLinker

    mention, mention_id = _correctable(demo)
    wrong = _wrong_concept(demo, mention)
    linker = ProjectLinker.for_project(demo, use_reranker=False, use_ranker=False)
    changes = curation.decide(demo, mention_id, "correct", concept_id=wrong, curator="ann")
    linker.learn(demo, sorted(changes.mentions))
    assert _found(linker, mention.text, wrong)

    deleted = curation.delete_mention(demo, mention_id, curator="ann")
    assert deleted.relearn == frozenset({mention_id})
    linker.learn(demo, sorted(deleted.relearn))
    assert not _found(linker, mention.text, wrong)
    assert mention.text not in demo.kb.concept(wrong).synonyms

    restored = curation.undo(demo, "ann")
    linker.learn(demo, sorted(restored.relearn))
    assert _found(linker, mention.text, wrong)


def test_the_cli_lists_a_synonym_no_decision_teaches(demo, capsys):
    import json

    from app.cli import main
    from core.learn.synonyms import learn_synonyms

    mention, mention_id = _correctable(demo)
    wrong = _wrong_concept(demo, mention)
    curation.decide(demo, mention_id, "correct", concept_id=wrong, curator="ann")
    learn_synonyms(demo)
    curation.undo(demo, "ann")
    capsys.readouterr()
    assert main(["-p", str(demo.path), "synonyms", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["synonyms"]
    assert [(s["string"], s["concept"], s["unsupported"], s["decided_at"]) for s in listed] == [
        (mention.text, wrong, True, None)
    ]
    assert main(["-p", str(demo.path), "synonyms", "list"]) == 0  # the table, with no decision to show


def test_a_span_edit_of_a_decided_mention_teaches_its_new_text_and_undo_the_old(demo):
    """Issue 31 item 3: a span edit changes the string a decision teaches; the loaded linker withdraws
    the old one and learns the new one, and Ctrl+Z (undo) does the reverse."""
    from core.jobs.linking.suggestions import ProjectLinker

    mention, mention_id = _correctable(demo)
    wrong = _wrong_concept(demo, mention)
    document = demo.documents.document(demo.documents.mention_documents([mention_id])[mention_id])
    start = document.text.index(mention.text)
    end = start + len(mention.text)
    wider = end + 1 + len(document.text[end + 1 :].split()[0])  # one more word, as a curator widens it
    longer = document.text[start:wider]
    assert document.text[end] == " " and normalize_name(longer) != normalize_name(mention.text)
    linker = ProjectLinker.for_project(demo, use_reranker=False, use_ranker=False)
    changes = curation.decide(demo, mention_id, "correct", concept_id=wrong, curator="ann")
    linker.learn(demo, sorted(changes.mentions))
    assert _found(linker, mention.text, wrong)

    moved = curation.edit_span(demo, mention_id, start, wider, curator="ann")
    assert moved.relearn == frozenset({mention_id})
    learned = linker.learn(demo, sorted(moved.relearn))
    assert [(e.concept_id, e.name) for e in learned.withdrawn] == [(wrong, mention.text)]
    assert [(e.concept_id, e.name) for e in learned.added] == [(wrong, longer)]
    assert not _found(linker, mention.text, wrong) and _found(linker, longer, wrong)

    back = curation.undo(demo, "ann")
    learned = linker.learn(demo, sorted(back.relearn))
    assert [(e.concept_id, e.name) for e in learned.withdrawn] == [(wrong, longer)]
    assert _found(linker, mention.text, wrong) and not _found(linker, longer, wrong)
