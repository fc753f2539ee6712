"""KB search forgives spelling, word order and typos, finds any id, and still lists exact and prefix
matches first. Expected hits are written by hand from the KB files, not computed by the search."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.resources import demo_dir
from core.kb import load_kb
from core.kb.concept import Concept
from core.kb.links import link_out, link_outs
from core.kb.name_search import NameIndex, max_edits
from core.store import Project
from core.text.spelling import fold_word, search_words


@pytest.fixture(scope="module")
def demo_kb(tmp_path_factory) -> Project:
    project = Project.create(tmp_path_factory.mktemp("kbsearch") / "demo")
    project.kb.import_concepts(load_kb(demo_dir() / "kb.tsv", "tsv"))
    yield project
    project.close()


def _first(project: Project, query: str) -> str:
    hits = project.kb.search_names(query)
    assert hits, f"nothing found for {query!r}"
    return hits[0][0]


@pytest.mark.parametrize(
    ("british", "american"),
    [
        ("oesophagus", "esophagus"),
        ("haemorrhage", "hemorrhage"),
        ("tumour", "tumor"),
        ("anaemia", "anemia"),
        ("leukaemia", "leukemia"),
        ("paediatric", "pediatric"),
        ("oedema", "edema"),
        ("hospitalisation", "hospitalization"),
        ("coeliac", "celiac"),
        ("fibre", "fiber"),
        ("sulphur", "sulfur"),
    ],
)
def test_british_and_american_spellings_share_a_key(british: str, american: str) -> None:
    assert fold_word(british) == fold_word(american)


def test_search_words_drop_possessives_plurals_accents_and_function_words() -> None:
    assert (
        search_words("Alzheimer's disease") == search_words("Alzheimers Disease") == ["alzheimer", "disease"]
    )
    assert search_words("Alzheimer Disease") == ["alzheimer", "disease"]
    assert search_words("Cancer of the Breast") == ["cancer", "breast"]
    assert search_words("Sjögren Syndrome") == search_words("Sjogren syndrome")
    assert search_words("of") == ["of"]  # nothing but function words: kept
    assert [max_edits(w) for w in ("gut", "gout", "colon", "diabtes")] == [0, 1, 1, 2]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("leukaemia", "D007938"),  # Leukemia
        ("Leucocythemia", "D007938"),  # the KB spells it Leucocythaemia
        ("sickle cell anaemia", "D000755"),
        ("anaemia sickle cell", "D000755"),
        ("tumour", "D009369"),  # Tumors
        ("cancer breast", "D001943"),  # Breast Cancer
        ("cancer of the breast", "D001943"),  # Cancer of Breast
        ("Alzheimers", "D000544"),
        ("alzheimers disease", "D000544"),
        ("Parkinsons", "D010300"),
        ("Crohns disease", "D003424"),
        ("praecox dementia", "D012559"),  # Dementia Praecox, word order and spelling
        ("diabtes", "D003920"),  # Diabetes: one edit
        ("dibaetes", "D003920"),  # a swapped pair is one edit too
        ("hypertenson", "D006973"),
        ("schizofrenia", "D012559"),  # two edits
        ("athma", "D001249"),  # Asthma, one edit in a five-letter word
        ("infarction myocardial acute", "D009203"),  # one unknown word does not empty the list
    ],
)
def test_forgiving_matches_on_the_demo_kb(demo_kb: Project, query: str, expected: str) -> None:
    assert _first(demo_kb, query) == expected


def test_exact_and_prefix_matches_rank_first(demo_kb: Project) -> None:
    assert _first(demo_kb, "Chorea") == "D002819"  # not Huntington Chorea
    assert _first(demo_kb, "Dementia") == "D003704"  # not Alzheimer Dementia
    assert _first(demo_kb, "stroke") == "D020521"  # not Cardiovascular Stroke (Myocardial Infarction)
    assert _first(demo_kb, "Melanom") == "D008545"  # typing: a prefix
    ids = [hit[0] for hit in demo_kb.kb.search_names("lung")]
    assert ids[0] == "D008175"
    # A name starting with the query comes before one that only resembles it.
    assert [hit[0] for hit in demo_kb.kb.search_names("Asthmas")][:1] == ["D001249"]


def test_no_match_lists_nothing_and_short_words_need_exact_letters(demo_kb: Project) -> None:
    assert demo_kb.kb.search_names("xyzzy") == []
    assert demo_kb.kb.search_names("   ") == []
    assert "D009103" not in [hit[0] for hit in demo_kb.kb.search_names("MX")]  # 2 letters: no edits forgiven


def test_any_id_finds_the_concept(demo_kb: Project) -> None:
    for spelling in ("D001943", "MESH:D001943", "mesh:d001943", " D001943 "):
        assert _first(demo_kb, spelling) == "D001943", spelling
    # Typing an id lists the ids that start with it, and no name "resembling" the digits.
    hits = [hit[0] for hit in demo_kb.kb.search_names("D0019")]
    assert hits == ["D001943"]
    assert {hit[0] for hit in demo_kb.kb.search_names("D00382")} == set()  # no such id prefix in the demo


def test_new_names_are_found_at_once(tmp_path: Path) -> None:
    project = Project.create(tmp_path / "p")
    project.kb.import_concepts(load_kb(demo_dir() / "kb.tsv", "tsv"))
    assert _first(project, "diabtes") == "D003920"  # the index is built
    assert project.kb.search_names("grumblewed") == []
    project.kb.add_names("D003924", ["Grumbleweed Syndrome"], source="curator")
    assert _first(project, "grumblewed") == "D003924"
    project.kb.remove_names({"D003924": {"Grumbleweed Syndrome"}}, source="curator")
    assert project.kb.search_names("grumblewed") == []
    project.close()


def test_name_index_keeps_one_hit_per_concept() -> None:
    index = NameIndex(
        [
            (1, "A", "breast cancer", True),
            (2, "A", "cancer of breast", False),
            (3, "B", "breast cancer male", True),
        ]
    )
    hits = index.search("cancer breast")
    assert [(h.row, h.key) for h in hits] == [(1, "A"), (3, "B")]
    assert hits[0].score == 0.0 and hits[1].score > 0


# --- MEDIC (../shared/data), skipped cleanly when absent ---------------------------------------------


@pytest.fixture(scope="module")
def medic(tmp_path_factory) -> Project:
    from tests.conftest import _shared_data_dir

    path = _shared_data_dir() / "vocab" / "medic_06Jul2012.txt"
    if not path.is_file():
        pytest.skip(f"MEDIC not found at {path} (set CURALINK_SHARED_DATA)")
    project = Project.create(tmp_path_factory.mktemp("kbsearch") / "medic")
    project.kb.import_concepts(load_kb(path, "medic"))
    yield project
    project.close()


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("oesophageal cancer", "D004938"),  # Esophageal Neoplasms (synonym Esophageal Cancer)
        ("haemorrhage", "D006470"),  # Hemorrhage
        ("leukaemia", "D007938"),  # Leukemia
        ("anaemia", "D000740"),  # Anemia
        ("oedema", "D004487"),  # Edema
        ("coeliac disease", "D002446"),  # Celiac Disease
        ("Alzheimer's", "D000544"),
        ("Alzheimers", "D000544"),
        ("Alzheimer", "D000544"),
        ("cancer breast", "D001943"),  # Breast Neoplasms
        ("diabtes", "D003920"),  # Diabetes Mellitus
        ("diabtes mel", "D003920"),
        ("tumour lysis", "D015275"),  # Tumor Lysis Syndrome
        ("paediatric obesity", "D063766"),  # Pediatric Obesity
        ("ebola haemorrhagic fevr", "D019142"),  # Hemorrhagic Fever, Ebola: order, spelling and a typo
    ],
)
def test_forgiving_matches_on_medic(medic: Project, query: str, expected: str) -> None:
    assert expected in [hit[0] for hit in medic.kb.search_names(query)][:3], query


def test_medic_folded_exact_names_lead(medic: Project) -> None:
    # Names holding the British spelling as one word of many come after the folded exact name.
    assert _first(medic, "anaemia") == "D000740"  # not "Congenital Sideroblastic Anaemia"
    assert _first(medic, "leukaemia") == "D007938"
    assert _first(medic, "oedema") == "D004487"


def test_medic_ids_and_alternative_ids(medic: Project) -> None:
    for spelling in ("D001943", "MESH:D001943", "OMIM:114480"):
        assert _first(medic, spelling) == "D001943", spelling
    assert _first(medic, "Breast Neoplasms") == "D001943"
    assert _first(medic, "hemorrhage") == "D006470"


def test_link_outs_by_namespace() -> None:
    assert link_out("MESH:D001943") == ("MeSH D001943", "https://meshb.nlm.nih.gov/record/ui?ui=D001943")
    assert link_out("C538288") == ("MeSH C538288", "https://meshb.nlm.nih.gov/record/ui?ui=C538288")
    assert link_out("OMIM:114480") == ("OMIM 114480", "https://omim.org/entry/114480")
    assert link_out("UMLS:C0006142") == (
        "UMLS C0006142",
        "https://uts.nlm.nih.gov/uts/umls/concept/C0006142",
    )
    assert link_out("DO:DOID:3008") is None
    concept = Concept("D001943", "MESH", "Breast Neoplasms", alt_ids=("MESH:D001943", "OMIM:114480", "HP:1"))
    assert [label for label, _url in link_outs(concept)] == ["MeSH D001943", "OMIM 114480"]


def test_cli_kb_search(tmp_path: Path, capsys) -> None:
    import json

    from app.cli import main

    folder = str(tmp_path / "p")
    assert main(["init", folder]) == 0
    assert main(["-p", folder, "kb", "import", str(demo_dir() / "kb.tsv"), "--format", "tsv"]) == 0
    capsys.readouterr()
    assert main(["-p", folder, "kb", "search", "cancer breast", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert hits[0] == {"id": "D001943", "name": "Breast Neoplasms", "matched": "Breast Cancer"}
    assert main(["-p", folder, "kb", "search", "mesh:d000544", "--details"]) == 0
    out = capsys.readouterr().out
    assert "Alzheimer Disease" in out and "https://meshb.nlm.nih.gov/record/ui?ui=D000544" in out
    assert main(["-p", folder, "kb", "search", "xyzzy"]) == 1
    assert "nothing in the knowledge base matches" in capsys.readouterr().out
