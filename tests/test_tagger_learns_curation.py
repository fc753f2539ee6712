"""The loop's detection learns from curation (issue 32 item 5): on the demo project, a curator finds
mentions in a raw abstract, deletes one detected span, draws one the dictionary missed and accepts the
rest; the one-click retrain's plan ticks the tagger, and the CRF it trains reads the drawn span as a
mention and the deleted one as outside. The expected spans are written out from the curation itself."""

from __future__ import annotations

import pytest

from core.documents import Document
from core.jobs.curation import operations as curation
from core.jobs.linking.mentions import detect_into_project
from core.jobs.models.detector import training_splits
from core.jobs.models.retrain import retrain
from core.jobs.models.retrain_plan import retrain_choice
from core.project_detector import dictionary_for_project

pytestmark = pytest.mark.slow

RAW_ID = "curated-1"


def _word_spans(text: str, mentions) -> list[tuple[int, int]]:
    """Single words of `text` that no mention overlaps, longest first: a span the dictionary missed."""
    import re

    taken = [(m.start, m.end) for m in mentions]
    words = [
        (w.start(), w.end())
        for w in re.finditer(r"[A-Za-z]{6,}", text)
        if not any(s < w.end() and w.start() < e for s, e in taken)
    ]
    return sorted(words, key=lambda span: span[0] - span[1])


def test_deleted_and_drawn_spans_teach_the_tagger_at_the_next_retrain(demo) -> None:
    from core.detect.tagger import labels_of
    from core.detect.tagger_features import tokens_of

    (source, _), (other, _) = list(demo.documents.documents_with_mention_ids())[:2]
    demo.documents.import_documents([Document(RAW_ID, source.passages)], source="raw.txt", fmt="text")
    # a dev document to judge on, so every other document with checked spans is trained on
    held = Document("held-1", other.passages, other.mentions)
    demo.documents.import_documents([held], source="held-out.pubtator", fmt="pubtator", split="dev")
    assert RAW_ID not in {d.doc_id for d in training_splits(demo)[0]}  # nobody vouched for its spans yet

    kb = demo.kb.knowledge_base()
    detect_into_project(demo, dictionary_for_project(demo, kb).detector, ids=[RAW_ID])
    ((raw, ids),) = demo.documents.documents_with_mention_ids(ids=[RAW_ID])
    detected = list(zip(raw.mentions, ids, strict=True))
    assert len(detected) >= 2, "the demo dictionary finds its own names in a demo abstract"

    deleted, deleted_id = detected[0]
    curation.delete_mention(demo, deleted_id, curator="ann")
    gold = {(m.start, m.end): m.concept_id for m in source.mentions if m.concept_id}
    for mention, mention_id in detected[1:]:
        concept = gold.get((mention.start, mention.end)) or next(iter(gold.values()))
        curation.decide(demo, mention_id, "accept", concept_id=concept, curator="ann")
    start, end = _word_spans(raw.text, raw.mentions)[0]
    kind = detected[1][0].type or "Disease"
    curation.add_mention(demo, RAW_ID, start, end, type=kind, curator="ann")

    train, _dev = training_splits(demo)
    (curated,) = [d for d in train if d.doc_id == RAW_ID]
    expected = {(m.start, m.end) for m, _ in detected[1:]} | {(start, end)}
    assert {(m.start, m.end) for m in curated.mentions} == expected

    choice = retrain_choice(demo, "cpu")
    assert "tagger" in choice.kinds
    report = retrain(demo, kinds=("tagger",), device="cpu", promote="never")
    tagger = report.kinds["tagger"]
    assert tagger.version, tagger.reason
    assert demo.models.model_versions("tagger")[-1].version == tagger.version

    tokens = tokens_of(curated.text)
    labels = dict(zip(((t.start, t.end) for t in tokens), labels_of(curated, tokens), strict=True))
    drawn = [label for (s, e), label in labels.items() if s < end and start < e]
    assert drawn and drawn[0] == f"B-{kind}" and all(label != "O" for label in drawn)
    gone = [label for (s, e), label in labels.items() if s < deleted.end and deleted.start < e]
    assert gone and all(label == "O" for label in gone)
