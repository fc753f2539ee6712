"""The curation loop benchmark (bench/loop.py) on the demo: a tiny loop whose counted operations must
equal what a replay of the stored decisions gives, and curation that really reaches the gold."""

from __future__ import annotations

from collections import Counter

import pytest

from app.resources import demo_dir
from bench.loop import CURATOR, LoopConfig, build_base, run_loop
from core.formats import read_corpus
from core.kb import load_kb
from core.kb.knowledge_base import KnowledgeBase
from core.store import Project

pytestmark = pytest.mark.slow

# what each counted operation stores in the decision log (a composite is linked as a correction)
ACTION_OF = {
    "accept": "accept",
    "correct": "correct",
    "composite": "correct",
    "nil": "nil",
    "reject": "reject",
    "move": "adjust_span",
    "type": "change_type",
    "add": "add_mention",
}


@pytest.fixture(scope="module")
def tiny_loop(tmp_path_factory):
    documents = list(read_corpus(demo_dir() / "abstracts.pubtator", "pubtator"))
    kb = KnowledgeBase(load_kb(demo_dir() / "kb.tsv", "tsv"))
    pool, held_out = documents[:3], documents[3:]
    work = tmp_path_factory.mktemp("loop")
    base = build_base(work / "base", kb, pool, zero_shot_epochs=1)
    result = run_loop(base, work / "run", pool, held_out, LoopConfig(order="uncertainty", points=(3,), retrain_epochs=1, detect_type="Disease"))
    return result, work / "run", pool, held_out


def test_counted_operations_equal_a_replay_of_the_stored_decisions(tiny_loop):
    result, folder, _pool, _held_out = tiny_loop
    counted = Counter()
    for kind, n in result["curated_cost"]["ops"].items():
        counted[ACTION_OF[kind]] += n
    with Project.open(folder) as project:
        stored = Counter(d.action for d in project.curation.decision_history(CURATOR))
    assert stored == counted


def test_curated_abstracts_end_at_their_gold(tiny_loop):
    """Every gold mention of the curated abstracts is a live mention at its exact span whose decision in
    force links the gold's concepts, and nothing else stays undecided or linked."""
    result, folder, pool, _held_out = tiny_loop
    assert result["curated_cost"]["gold"] == sum(len(d.mentions) for d in pool)
    with Project.open(folder) as project:
        kb = project.kb.knowledge_base()
        for gold in pool:
            document, ids = next(iter(project.documents.documents_with_mention_ids(ids=[gold.doc_id])))
            stored = dict(zip(document.mentions, ids, strict=True))
            decisions = project.curation.current_decisions(mention_ids=list(stored.values()))
            linked = {}
            for mention, mention_id in stored.items():
                decision = decisions.get(mention_id)
                assert decision is not None, f"{gold.doc_id}: {mention.text!r} left undecided"
                if decision.action in ("accept", "correct"):
                    linked[(mention.start, mention.end)] = set(decision.concept_id.split("|"))
            expected = {
                (m.start, m.end): {kb.resolve(c) for c in m.concept_ids} for m in gold.mentions
            }
            assert linked == expected


def test_the_loop_retrains_and_measures_held_out_abstracts(tiny_loop):
    result, _folder, _pool, held_out = tiny_loop
    start, after = result["points"]
    assert (start["documents"], after["documents"]) == (0, 3)
    assert after["retrained"], "the desk's retrain ran no kind"
    for point in (start, after):
        assert point["cost"]["gold"] == sum(len(d.mentions) for d in held_out)
        # a curator spends at least one key per gold mention
        assert point["cost"]["keys"] >= point["cost"]["gold"]


def test_a_composite_gold_naming_one_concept_twice_links_it_once():
    """NCBI-disease gold may repeat an id in a composite ("C535342|C535342"); the store refuses a link
    that names a concept twice, so the simulated curator links each concept once."""
    from bench.curator_sim import gold_ids
    from core.documents import Mention

    kb = KnowledgeBase(load_kb(demo_dir() / "kb.tsv", "tsv"))
    mention = Mention(0, 10, "x and y", "CompositeMention", "D006816|MESH:D006816|D006816")
    assert gold_ids(mention, kb) == ["D006816"]
