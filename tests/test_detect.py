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
    # possessive and plural forms meet the name as KB search folds them; "hd" and "HDAC" do not
    assert found == [
        ("Huntington's Disease", "D006816"),
        ("Huntington disease", "D006816"),
        ("HD", "D006816"),
        ("non-Hodgkin lymphoma", "D008228"),
        ("lymphomas", "D008223"),
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


def _texts(detector: DictionaryDetector, text: str) -> list[str]:
    return [m.text for m in detector.detect_text(text, abbreviations=True)]


def test_matches_never_start_or_end_inside_a_word() -> None:
    detector = DictionaryDetector(
        [
            ("HT", "D050031"),
            ("IL", "D999901"),
            ("Eclampsia", "D004461"),
            ("Hodgkin Disease", "D006689"),
            ("Melanoma", "D008545"),
            ("CF", "D003550"),
            ("Cystic Fibrosis", "D003550"),
        ]
    )
    assert _texts(detector, "the 5-HT(2B) receptor; 5-HT and 5-HT2B; HT(1A)") == []
    assert _texts(detector, "IL-2 levels; IL-B; pre-eclampsia; non-Hodgkin disease") == []
    assert _texts(detector, "HT. Eclampsia, HT; (HT) and HT/IL") == [
        "HT",
        "Eclampsia",
        "HT",
        "HT",
        "HT",
        "IL",
    ]
    assert _texts(detector, "melanoma-prone families; Melanoma-associated") == ["melanoma", "Melanoma"]
    text = "Cystic fibrosis (CF) in CF's patients, not in pre-CF or CF-1 cells."
    assert _texts(detector, text) == ["Cystic fibrosis", "CF", "CF"]


def test_greek_letters_apostrophes_and_digits_in_names() -> None:
    detector = DictionaryDetector(
        [
            ("beta-Thalassemia", "D017086"),
            ("Thalassemia", "D013789"),
            ("Crohn's Disease", "D003424"),
            ("Diabetes Mellitus, Type 2", "D003924"),
            ("type 2 diabetes", "D003924"),
            ("Diabetes Mellitus", "D003920"),
        ]
    )
    found = detector.detect_text(
        "β-thalassemia and Crohn’s disease in type 2 diabetes, not type 1 diabetes mellitus"
    )
    assert [(m.text, m.concept_id) for m in found] == [
        ("β-thalassemia", "D017086"),
        ("Crohn’s disease", "D003424"),
        ("type 2 diabetes", "D003924"),
        ("diabetes mellitus", "D003920"),
    ]


@pytest.fixture(scope="module")
def medic_detector(vocab_dir: Path) -> DictionaryDetector:
    return DictionaryDetector.from_kb(KnowledgeBase(load_kb(vocab_dir / "medic_06Jul2012.txt", "medic")))


def test_serotonin_is_not_hashimoto_disease_in_a_real_abstract(ncbi_dir: Path, medic_detector) -> None:
    (document,) = [
        d for d in read_corpus(ncbi_dir / "NCBIdevelopset_corpus.txt", "pubtator") if d.doc_id == "8929413"
    ]
    assert document.text.count("5-HT") >= 2
    found = medic_detector.detect([document])[0]
    assert not [m for m in found if "HT" in m.text], [m.text for m in found]


def test_no_detection_in_ncbi_test_starts_inside_a_hyphenated_word(ncbi_dir: Path, medic_detector) -> None:
    """Checked with a plain look at the characters before each span, on all 100 test abstracts."""
    documents = list(read_corpus(ncbi_dir / "NCBItestset_corpus.txt", "pubtator"))
    inside = [
        document.text[max(0, m.start - 6) : m.end]
        for document, found in zip(documents, medic_detector.detect(documents), strict=True)
        for m in found
        if m.start >= 2 and document.text[m.start - 1] == "-" and document.text[m.start - 2].isalnum()
    ]
    assert inside == []
