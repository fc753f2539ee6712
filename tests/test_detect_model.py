"""The span model trained for real (a tiny BERT, a few hundred steps) on real NCBI-disease text: it finds
planted mentions at their exact characters, links them, reads documents longer than a window, and
refuses bad input clearly."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.detect.candidates import ConceptVectors, concept_vectors
from core.detect.segments import segment_documents
from core.detect.span_detector import SpanDetector
from core.detect.span_model import DetectorConfig, load_detector, new_detector, save_detector
from core.detect.train_detector import DetectorTrainingOptions, train_span_model
from core.detect.wordpieces import backend
from core.documents import Document, Mention, Passage
from core.errors import CuralinkError
from core.evaluate.detection import dev_scorer
from core.kb.concept import Concept
from core.kb.knowledge_base import KnowledgeBase

PLANTED = "Qwertyuiop disease"
PLANTED_ID = "X:0001"


def _plant(document: Document, where: int) -> Document:
    """The document's text with PLANTED inserted at a sentence start; the planted span is its only mention."""
    text = document.text
    cut = text.find(". ", where)
    cut = 0 if cut < 0 else cut + 2
    planted = text[:cut] + PLANTED + " was seen. " + text[cut:]
    mention = Mention(cut, cut + len(PLANTED), PLANTED, "SpecificDisease", PLANTED_ID)
    return Document(document.doc_id, (Passage(0, planted),), (mention,))


@pytest.fixture(scope="module")
def slice_documents(ncbi_dir):
    from core.formats import read_corpus

    return list(read_corpus(ncbi_dir / "NCBItrainset_corpus.txt", "pubtator"))[:50]


@pytest.fixture(scope="module")
def small_kb(slice_documents, vocab_dir) -> KnowledgeBase:
    """The planted concept and the MEDIC concepts of the slice's gold (real names)."""
    from core.kb.medic import read_medic

    wanted = {part for d in slice_documents for m in d.mentions for part in m.concept_ids}
    concepts = [c for c in read_medic(vocab_dir / "medic_06Jul2012.txt") if c.concept_id in wanted][:150]
    concepts.append(Concept(PLANTED_ID, "TEST", PLANTED.lower(), ("qwertyuiop syndrome",)))
    return KnowledgeBase(concepts)


@pytest.fixture(scope="module")
def trained(tiny_bert, slice_documents, small_kb, tmp_path_factory):
    """(detector, training result, held-out planted documents): trained a few hundred tiny steps."""
    train = [_plant(d, where=(97 * i) % 700) for i, d in enumerate(slice_documents[:30])]
    dev = [_plant(d, where=(89 * i) % 500) for i, d in enumerate(slice_documents[40:50])]
    held_out = [_plant(d, where=200) for d in slice_documents[30:40]]
    types = ["SpecificDisease"]
    model, tokenizer = new_detector(tiny_bert, types, seed=3)
    vectors = concept_vectors(small_kb, tiny_bert, cache_dir=tmp_path_factory.mktemp("vectors"))
    segments, stats = segment_documents(
        train,
        backend(tokenizer),
        types,
        lambda m: vectors.index_of.get(small_kb.resolve(m.concept_id) or "", -1),
        cls_id=tokenizer.cls_token_id,
        sep_id=tokenizer.sep_token_id,
    )
    assert stats.mentions == 30 and stats.linked == 30
    options = DetectorTrainingOptions(
        max_epochs=25,
        patience=25,
        batch_segments=4,
        learning_rate=3e-3,
        head_learning_rate=3e-2,
        warmup_fraction=0.0,
        freeze_embeddings=False,
    )
    config = DetectorConfig(types=types)
    detector = SpanDetector(model, tokenizer, config, vectors)
    result = train_span_model(
        model,
        segments,
        vectors,
        pad_id=tokenizer.pad_token_id,
        evaluate_dev=dev_scorer(detector, dev, small_kb),  # the threshold is chosen on dev, as in training
        options=options,
    )
    detector.threshold = result.best_dev["threshold"]
    return detector, result, held_out


def test_a_tiny_model_finds_and_links_planted_mentions(trained) -> None:
    detector, result, held_out = trained
    assert result.history[-1]["span_loss"] < result.history[0]["span_loss"]
    assert 0.1 <= detector.threshold <= 0.9 and result.best_dev["dev_span_f1"] > 50
    found = detector.detect([d.with_mentions([]) for d in held_out])
    hits = linked = 0
    for document, mentions in zip(held_out, found, strict=True):
        gold = document.mentions[0]
        same = [m for m in mentions if (m.start, m.end) == (gold.start, gold.end)]
        hits += bool(same)
        linked += bool(same) and same[0].concept_id == PLANTED_ID
        for m in mentions:
            assert document.text[m.start : m.end] == m.text
            assert 0.0 <= m.infons["probability"] <= 1.0 and m.origin == "detected" and m.type
        assert [m.start for m in mentions] == sorted(m.start for m in mentions)
        assert all(a.end <= b.start for a, b in zip(mentions, mentions[1:])), "non-overlapping"
    assert hits >= 8, f"planted mentions found at their exact characters in {hits} of 10 unseen abstracts"
    assert linked >= 8, f"and linked to the planted concept in {linked}"


def test_collective_linking_of_given_spans(trained) -> None:
    detector, _, held_out = trained
    ranked = detector.link_mentions(held_out, k=5)
    top = [per_doc[0][0].concept_id for per_doc in ranked]
    assert top.count(PLANTED_ID) >= 8
    assert all(len(per_doc[0]) == 5 for per_doc in ranked)


def test_a_document_longer_than_any_window_keeps_exact_offsets(trained, slice_documents) -> None:
    detector, _, _ = trained
    small = SpanDetector(
        detector.model,
        detector.tokenizer,
        replace(detector.config, window=48),
        detector.vectors,
        threshold=detector.threshold,
    )
    parts, planted = [], []
    cursor = 0
    for document in slice_documents[30:40]:
        sentence = f"{PLANTED} was seen. {document.text} "
        planted.append((cursor, cursor + len(PLANTED)))
        parts.append(sentence)
        cursor += len(sentence)
    text = "".join(parts)
    long_document = Document("long", (Passage(0, text),))
    assert len(small.chunks([text])[1]) > 40, "read in many windows"
    (mentions,) = small.detect([long_document])
    spans = [(m.start, m.end) for m in mentions]
    assert len(spans) == len(set(spans))
    assert all(text[m.start : m.end] == m.text for m in mentions)
    assert all(a.end <= b.start for a, b in zip(mentions, mentions[1:]))
    found = sum(span in spans for span in planted)
    assert found >= 8, f"{found} of 10 planted mentions found once each across window borders"


def test_empty_and_blank_texts_give_no_mentions(trained) -> None:
    detector, _, _ = trained
    empty = Document("empty", (Passage(0, ""),))
    blank = Document("blank", (Passage(0, "   \n\t "),))
    assert detector.detect([empty, blank]) == [[], []]
    assert detector.link_mentions([empty]) == [[]]


def test_a_saved_detector_loads_and_reads_the_same(trained, tmp_path) -> None:
    detector, _, held_out = trained
    save_detector(detector.model, detector.tokenizer, detector.config, tmp_path / "v1")
    assert not list((tmp_path / "v1").glob("*.bin")), "safetensors + JSON only"
    model, tokenizer, config = load_detector(tmp_path / "v1")
    again = SpanDetector(model, tokenizer, config, detector.vectors, threshold=detector.threshold)
    raw = [d.with_mentions([]) for d in held_out[:3]]
    first = [[(m.start, m.end, m.concept_id) for m in found] for found in detector.detect(raw)]
    second = [[(m.start, m.end, m.concept_id) for m in found] for found in again.detect(raw)]
    assert first == second


def test_a_knowledge_base_without_names_is_refused(tiny_bert) -> None:
    empty = KnowledgeBase([])
    with pytest.raises(CuralinkError, match="no names"):
        concept_vectors(empty, tiny_bert)
    import numpy as np

    with pytest.raises(CuralinkError, match="no names"):
        ConceptVectors(empty, np.zeros((0, 32), dtype=np.float32))
