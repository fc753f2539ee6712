"""The dictionary detector and span metrics, on hand cases and on NCBI-disease text with MEDIC."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.detect.base import Detector
from core.detect.dictionary import DictionaryDetector
from core.documents import Span
from core.evaluate.spans import span_scores
from core.formats import read_corpus
from core.kb import load_kb
from core.kb.knowledge_base import KnowledgeBase

NAMES = [
    ("Huntington Disease", "D006816"),
    ("HD", "D006816"),
    ("Non-Hodgkin Lymphoma", "D008228"),
    ("Lymphoma", "D008223"),
]


def test_matches_on_token_boundaries_with_normalisation_and_case_for_abbreviations() -> None:
    detector = DictionaryDetector(NAMES)
    assert isinstance(detector, Detector)
    text = "Huntington's Disease? No: Huntington disease (HD), non-Hodgkin lymphoma, lymphomas, hd, HDAC."
    found = [(m.text, m.concept_id) for m in detector.detect_text(text)]
    assert found == [
        ("Huntington disease", "D006816"),
        ("HD", "D006816"),
        ("non-Hodgkin lymphoma", "D008228"),
    ]
    for mention in detector.detect_text(text):
        assert text[mention.start : mention.end] == mention.text
        assert mention.origin == "detected"


def test_longest_match_wins_and_ambiguous_names_stay_unlinked() -> None:
    detector = DictionaryDetector([*NAMES, ("cold", "D1"), ("cold", "D2")])
    (mention,) = detector.detect_text("a common cold")
    assert mention.concept_id == "" and mention.infons["dictionary_ids"] == "D1|D2"
    assert [m.text for m in detector.detect_text("non-Hodgkin lymphoma")] == ["non-Hodgkin lymphoma"]
    assert DictionaryDetector([]).detect_text("anything") == []


def test_span_scores_strict_and_partial() -> None:
    gold = [[Span(0, 5), Span(10, 20)]]
    predicted = [[Span(0, 5), Span(12, 18), Span(30, 35)]]
    scores = span_scores(gold, predicted)
    assert scores["precision"] == pytest.approx(1 / 3)
    assert scores["recall"] == pytest.approx(1 / 2)
    assert scores["partial_precision"] == pytest.approx(2 / 3)
    assert scores["partial_recall"] == pytest.approx(1.0)
    assert span_scores([[]], [[]])["f1"] == 0.0


def test_medic_dictionary_finds_most_ncbi_test_mentions(ncbi_dir: Path, vocab_dir: Path) -> None:
    kb = KnowledgeBase(load_kb(vocab_dir / "medic_06Jul2012.txt", "medic"))
    documents = list(read_corpus(ncbi_dir / "NCBItestset_corpus.txt", "pubtator"))
    detector = DictionaryDetector.from_kb(kb, mention_type="Disease")
    predicted = detector.detect(documents)
    scores = span_scores(
        [[m.span for m in d.mentions] for d in documents], [[m.span for m in p] for p in predicted]
    )
    print(f"\nMEDIC dictionary on NCBI test: {scores}")
    assert scores["gold"] == 960
    assert scores["partial_recall"] > 0.77
    assert scores["partial_precision"] > 0.80
    assert scores["f1"] > 0.62
