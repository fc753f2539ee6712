"""A decision reaches the loaded linker at once (core.learn.live): the curator synonym is found by the very
linker that is loaded, an undone one stops being found, and the annotation prior follows; what the live
linker ends with is what a linker loaded afresh from the store finds."""

from __future__ import annotations

import os
from collections import Counter

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from core.documents import Document, Mention, Passage  # noqa: E402
from core.rank.prior import AnnotationPrior  # noqa: E402
from tests.test_curator_synonyms import _correctable  # noqa: E402


def _wrong_concept(project, mention) -> str:
    """A concept the mention's text is not a name of: correcting to it teaches a new (wrong) synonym."""
    return next(c.concept_id for c in project.kb.knowledge_base() if c.concept_id != mention.concept_id)


def _with_copies(project, text: str, doc_id: str = "copies-1") -> list[int]:
    """A new document where `text` occurs twice, both marked as (undecided) mentions."""
    body = f"First {text} here. Then {text} again."
    project.documents.import_documents([Document(doc_id, (Passage(0, body, "abstract"),))], source="", split="")
    starts = [body.find(text), body.rfind(text)]
    return [project.documents.add_mention(doc_id, s, s + len(text)) for s in starts]


def test_a_correction_is_found_at_once_and_an_undo_withdraws_it_without_a_reload(demo):
    from core.jobs.linking.suggestions import ProjectLinker

    mention, mention_id = _correctable(demo)
    wrong = _wrong_concept(demo, mention)
    linker = ProjectLinker.for_project(demo, use_reranker=False, use_ranker=False)
    assert all(c.matched_name != mention.text for c in linker.linker.retriever.retrieve([mention.text], 5)[0])

    demo.curation.record_decision(mention_id, "correct", concept_id=wrong, curator="ann")
    learned = linker.learn(demo, [mention_id])
    assert [(e.concept_id, e.name) for e in learned.added] == [(wrong, mention.text)]
    top = linker.linker.retriever.retrieve([mention.text], 3)[0][0]
    assert (top.concept_id, top.matched_name) == (wrong, mention.text)  # the string itself is the name
    assert mention.text in demo.kb.concept(wrong).synonyms  # stored: a reload keeps it

    demo.curation.record_decision(mention_id, "revert", curator="ann")
    learned = linker.learn(demo, [mention_id])
    assert [(e.concept_id, e.name) for e in learned.withdrawn] == [(wrong, mention.text)]
    live = linker.linker.retriever.retrieve([mention.text], 5)[0]
    assert all(c.matched_name != mention.text for c in live)
    assert mention.text not in demo.kb.concept(wrong).synonyms
    assert mention.text not in linker.linker.kb.get(wrong).names

    reloaded = ProjectLinker.for_project(demo, use_reranker=False, use_ranker=False)
    again = reloaded.linker.retriever.retrieve([mention.text], 5)[0]
    assert [c.concept_id for c in live] == [c.concept_id for c in again]
    assert [round(c.retriever_score, 4) for c in live] == [round(c.retriever_score, 4) for c in again]


def test_a_redo_after_an_undo_is_found_again(demo):
    from core.jobs.linking.suggestions import ProjectLinker

    mention, mention_id = _correctable(demo)
    wrong = _wrong_concept(demo, mention)
    linker = ProjectLinker.for_project(demo, use_reranker=False, use_ranker=False)
    for action in ("correct", "revert", "correct"):
        demo.curation.record_decision(mention_id, action, concept_id=wrong if action == "correct" else "", curator="a")
        linker.learn(demo, [mention_id])
    top = linker.linker.retriever.retrieve([mention.text], 3)[0][0]
    assert (top.concept_id, top.matched_name) == (wrong, mention.text)


def test_the_prior_follows_decisions_and_matches_one_counted_from_scratch(demo):
    from core.learn.live import learn_decisions
    from core.learn.training_data import training_set
    from core.rank.stage import RankingStage

    mention, mention_id = _correctable(demo)
    wrong = _wrong_concept(demo, mention)
    kb = demo.kb.knowledge_base()

    def from_scratch() -> AnnotationPrior:
        return AnnotationPrior.from_documents(training_set(demo, kb, held_out_fraction=0.0).train_documents)

    stage = RankingStage(None, kb, from_scratch())
    before = stage.prior.counts(mention.text)
    demo.curation.record_decision(mention_id, "correct", concept_id=wrong, curator="ann")
    learn_decisions(demo, [mention_id], kb=kb, stage=stage)
    assert stage.prior.counts(mention.text)[wrong] == before[wrong] + 1
    assert stage.prior.counts(mention.text) == from_scratch().counts(mention.text)
    assert stage.prior.concepts == from_scratch().concepts

    demo.curation.record_decision(mention_id, "revert", curator="ann")
    learn_decisions(demo, [mention_id], kb=kb, stage=stage)
    assert stage.prior.counts(mention.text) == before
    assert stage.prior.concepts == from_scratch().concepts


def _doc(doc_id: str, *links: tuple[str, str]) -> Document:
    text = " ".join(t for t, _ in links) or "nothing"
    mentions, at = [], 0
    for t, concept_id in links:
        mentions.append(Mention(at, at + len(t), t, concept_id=concept_id))
        at += len(t) + 1
    return Document(doc_id, (Passage(0, text, "abstract"),), tuple(mentions))


def test_replacing_a_documents_links_equals_counting_all_again():
    a = _doc("a", ("lung cancer", "C1"), ("lung cancer", "C1"), ("fever", "C2"))
    b = _doc("b", ("lung cancer", "C3"), ("fever", "C2"))
    a_now = _doc("a", ("lung cancer", "C3"))
    live = AnnotationPrior.from_documents([a, b])
    live.replace_documents(["a"], AnnotationPrior.from_documents([a_now]))
    rebuilt = AnnotationPrior.from_documents([a_now, b])
    assert live.pairs == rebuilt.pairs and live.concepts == rebuilt.concepts
    assert live.by_document == rebuilt.by_document
    assert live.counts("Lung cancer") == Counter({"C3": 2})

    live.replace_documents(["a", "b"], AnnotationPrior())  # every link undone: nothing left
    assert not live.pairs and not live.concepts and len(live) == 0


def test_undecided_identical_mentions_are_found_across_the_project(demo):

    mention, mention_id = _correctable(demo)
    copies = _with_copies(demo, mention.text)
    demo.curation.record_decision(mention_id, "accept", concept_id=mention.concept_id, curator="ann")
    assert set(demo.identical.undecided([mention_id])) >= set(copies)
    assert mention_id not in demo.identical.undecided([mention_id])
    demo.curation.record_decision(copies[0], "reject", curator="ann")  # decided: left alone
    found = demo.identical.undecided([mention_id])
    assert copies[1] in found and copies[0] not in found


VARIANTS = (
    "Huntington's disease",
    "HUNTINGTON\u2019S DISEASE",  # a typographic apostrophe (outside ASCII)
    "Huntingtons disease",
    "\uff28untington's  disease",  # a full-width H that Unicode folding makes ASCII
    "huntington-s disease",  # normalises to three words: not identical
    "Huntington disease",
    "disease of Huntington",
)


def test_identical_mentions_narrowed_in_sql_are_exactly_those_a_full_pass_finds(demo):
    from core.text.normalize import normalize_name

    body = " | ".join(VARIANTS)
    demo.documents.import_documents([Document("variants", (Passage(0, body, "abstract"),))], source="", split="")
    ids = [demo.documents.add_mention("variants", body.find(v), body.find(v) + len(v)) for v in VARIANTS]
    everyone = [(m, i) for d, mids in demo.documents.documents_with_mention_ids() for m, i in zip(d.mentions, mids)]
    for chosen in range(len(VARIANTS)):
        target = normalize_name(VARIANTS[chosen])
        expected = {i for m, i in everyone if normalize_name(m.text) == target and i != ids[chosen]}
        assert set(demo.identical.undecided([ids[chosen]])) == expected, VARIANTS[chosen]
    assert {ids[1], ids[2], ids[3]} <= set(demo.identical.undecided([ids[0]]))


def test_a_withdrawal_is_saved_with_the_index_so_the_next_start_does_not_rebuild_it(demo, monkeypatch):
    """Issue 23 item 1: live learning hid the withdrawn row but left the saved index stale, so every later
    start re-encoded the whole KB (75-90 s on MEDIC). Now the index is saved with the row hidden and the
    next load reuses it: nothing is encoded but the query, and searches match a fresh build's."""
    from core.jobs.linking.suggestions import ProjectLinker
    from core.retrieve.rescnn_retriever import RescnnRetriever

    mention, mention_id = _correctable(demo)
    wrong = _wrong_concept(demo, mention)
    linker = ProjectLinker.for_project(demo, use_reranker=False, use_ranker=False)
    demo.curation.record_decision(mention_id, "correct", concept_id=wrong, curator="ann")
    linker.learn(demo, [mention_id])
    demo.curation.record_decision(mention_id, "revert", curator="ann")
    assert [e.name for e in linker.learn(demo, [mention_id]).withdrawn] == [mention.text]
    live = linker.linker.retriever.retrieve([mention.text], 5)[0]

    builds: list[int] = []
    real_build = RescnnRetriever.build_index
    monkeypatch.setattr(
        RescnnRetriever,
        "build_index",
        lambda self, rows, **kw: (builds.append(len(rows)), real_build(self, rows, **kw))[1],
    )
    restarted = ProjectLinker.for_project(demo, use_reranker=False, use_ranker=False)
    assert builds == [], "the saved index was rebuilt at the next start"
    again = restarted.linker.retriever.retrieve([mention.text], 5)[0]
    assert all(c.matched_name != mention.text for c in again)
    assert [(c.concept_id, round(c.retriever_score, 4)) for c in again] == [
        (c.concept_id, round(c.retriever_score, 4)) for c in live
    ]
    monkeypatch.undo()  # a fresh build of the KB as the store holds it finds the same candidates
    for path in demo.index_dir.iterdir():
        path.unlink()
    fresh = ProjectLinker.for_project(demo, use_reranker=False, use_ranker=False).linker.retriever.retrieve(
        [mention.text], 5
    )[0]
    assert [c.concept_id for c in fresh] == [c.concept_id for c in again]


def test_withdrawing_a_spelling_variant_keeps_the_kbs_own_name_and_the_saved_index(demo, monkeypatch):
    """A curator links "EPISODIC ATAXIA TYPE 2"-style text, a spelling of a name the concept already has: the
    store keeps it as a curator name, the KB (one entry per normalised spelling) does not add it. Undoing
    it must not take the KB's own name out of the live KB and index (the bench's NCBI run did: the saved
    index then matched no stored KB and the next start rebuilt it)."""
    from core.jobs.linking.suggestions import ProjectLinker
    from core.retrieve.rescnn_retriever import RescnnRetriever
    from core.text.normalize import normalize_name

    kb = demo.kb.knowledge_base()
    own = next(e for e in kb.names if not e.preferred and e.name != e.name.upper())
    variant = own.name.upper()
    assert normalize_name(variant) == normalize_name(own.name) and variant != own.name
    (mention_id, _second) = _with_copies(demo, variant)
    linker = ProjectLinker.for_project(demo, use_reranker=False, use_ranker=False)
    demo.curation.record_decision(mention_id, "correct", concept_id=own.concept_id, curator="ann")
    linker.learn(demo, [mention_id])
    assert variant in demo.kb.names_from_source("curator").get(own.concept_id, set())  # stored as a curator name
    demo.curation.record_decision(mention_id, "revert", curator="ann")
    linker.learn(demo, [mention_id])
    assert variant not in demo.kb.names_from_source("curator").get(own.concept_id, set())
    assert own.name in demo.kb.concept(own.concept_id).names  # the KB's own name is still stored
    assert (own.concept_id, own.name) in {(e.concept_id, e.name) for e in linker.linker.kb.names}, "live KB lost it"
    found = linker.linker.retriever.retrieve([own.name], 3)[0]
    assert (found[0].concept_id, found[0].matched_name) == (own.concept_id, own.name)

    builds: list[int] = []
    real_build = RescnnRetriever.build_index
    monkeypatch.setattr(
        RescnnRetriever,
        "build_index",
        lambda self, rows, **kw: (builds.append(len(rows)), real_build(self, rows, **kw))[1],
    )
    ProjectLinker.for_project(demo, use_reranker=False, use_ranker=False)
    assert builds == [], "the index saved by the live linker matched no stored KB: rebuilt"
