"""Issue 31 item 6: a British spelling the dictionary tagger folds ("hypoglycaemia", "leukaemia") reaches
the linker in the KB's own spelling: the retriever's query, the ranker's strings and KB search all see
"hypoglycemia" / "leukemia". Checked on the real MEDIC file (../shared/data), with the expected concepts
written out by hand (D007003 Hypoglycemia, D007938 Leukemia)."""

from __future__ import annotations

import pytest

from core.documents import Document, Mention, Passage
from tests.test_kb_search import medic  # noqa: F401  (the MEDIC project fixture)

TEXT = "Neonatal hypoglycaemia and childhood leukaemia, with oedema."
MENTIONS = (
    Mention(9, 22, "hypoglycaemia", "Disease"),
    Mention(37, 46, "leukaemia", "Disease"),
    Mention(53, 59, "oedema", "Disease"),
)
EXPECTED = ["D007003", "D007938", "D004487"]  # Hypoglycemia, Leukemia, Edema


@pytest.fixture(scope="module")
def medic_kb():
    from core.kb.knowledge_base import KnowledgeBase
    from core.kb.registry import load_kb
    from tests.conftest import _shared_data_dir

    path = _shared_data_dir() / "vocab" / "medic_06Jul2012.txt"
    if not path.is_file():
        pytest.skip(f"MEDIC not found at {path} (set CURALINK_SHARED_DATA)")
    return KnowledgeBase(load_kb(path, "medic"))


def test_words_take_the_spelling_medic_writes_most() -> None:
    from core.kb.respell import KbSpelling

    spelling = KbSpelling(["Hypoglycemia", "Leukemia", "Leukemia, T-Cell", "Familial Leukaemia", "Aerobic X"])
    assert spelling.respell("Neonatal hypoglycaemia") == "Neonatal hypoglycemia"
    assert spelling.respell("Leukaemia") == "Leukemia"  # "leukemia" 2 names, "leukaemia" 1
    assert spelling.respell("aerobic") == "aerobic"  # its fold "erobic" is in no name
    assert spelling.respell("anaemia") == "anaemia"  # no name says "anemia": nothing to go to
    assert KbSpelling(["Organization X", "Organization Y"]).respell("organisation") == "organization"


def test_retriever_query_and_ranker_strings_are_respelled_on_medic(medic_kb) -> None:
    from core.pipeline import Linker
    from core.retrieve.tfidf import TfidfRetriever

    retriever = TfidfRetriever()
    retriever.index(medic_kb)
    linker = Linker(retriever, kb=medic_kb)
    document = Document("d", (Passage(0, TEXT, "abstract"),), MENTIONS)
    assert [m.text for m in MENTIONS] == [TEXT[m.start : m.end] for m in MENTIONS]

    queries = linker.plan([document])[0]  # what the ranker's features are computed from
    assert [q.queries for q in queries] == [("hypoglycemia",), ("leukemia",), ("edema",)]
    assert not any(q.expanded for q in queries)  # a spelling is not an abbreviation expansion
    tops = [found[0].concept_id for found in linker.retrieve([document])[0]]
    assert tops == EXPECTED


def test_kb_search_finds_the_american_concept_first_on_medic(medic) -> None:  # noqa: F811
    for query, expected in zip(["hypoglycaemia", "leukaemia", "oedema"], EXPECTED, strict=True):
        assert medic.kb.search_names(query)[0][0] == expected, query
