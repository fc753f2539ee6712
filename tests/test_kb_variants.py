"""Name variants on the real MeSH 2015 names (shared/data/vocab/mesh-dhimmel), stored with their source,
and the dictionary tagger finding running-text forms through them and through KB search's spelling folds."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from core.detect.dictionary import DictionaryDetector
from core.formats import read_corpus
from core.kb import load_kb
from core.kb.knowledge_base import KnowledgeBase
from core.kb.variants import name_variants
from core.store import Project
from core.store.schema import NameRow

MESH = "mesh-dhimmel/tree-numbers.tsv"


@pytest.fixture(scope="module")
def mesh(vocab_dir: Path) -> KnowledgeBase:
    return KnowledgeBase(load_kb(vocab_dir / MESH, "tsv"))


# (id, the MeSH name as the file writes it, forms running text uses) - the forms written out by hand
EXPECTED = [
    ("D012595", "Scleroderma, Systemic", ["Systemic Scleroderma"]),
    ("D003924", "Diabetes Mellitus, Type 2", ["Type 2 Diabetes Mellitus"]),
    ("D008180", "Lupus Erythematosus, Systemic", ["Systemic Lupus Erythematosus"]),
    ("D015470", "Leukemia, Myeloid, Acute", ["Acute Myeloid Leukemia"]),
    ("D016757", "Death, Sudden, Cardiac", ["Sudden Cardiac Death"]),
    ("D000544", "Alzheimer Disease", ["Alzheimer's Disease"]),
    ("D000911", "Antibodies, Monoclonal", ["Monoclonal Antibodies", "Monoclonal Antibody"]),
    ("D009369", "Neoplasms", ["Neoplasm"]),
]


def test_variants_of_real_mesh_names(mesh: KnowledgeBase) -> None:
    for concept_id, name, forms in EXPECTED:
        concept = mesh.get(concept_id)
        assert concept.preferred_name == name
        for form in forms:
            assert form in concept.variants, f"{name!r}: {form!r} missing from {concept.variants}"
            assert form in concept.names
    # "X, Y of Z" and a trailing function-word part, on names as MeSH 2015 writes them
    assert name_variants("Enteritis, Transmissible, of Turkeys") == ["Transmissible Enteritis of Turkeys"]
    assert "Refractory Anemia with Excess of Blasts" in name_variants(
        "Anemia, Refractory, with Excess of Blasts"
    )
    assert name_variants("Carcinoma, Squamous Cell of Head and Neck") == [
        "Squamous Cell Carcinoma of Head and Neck"
    ]
    # not inversions: a list, chemical nomenclature
    assert name_variants("Amino Acids, Peptides, and Proteins") == []
    chemical = "3-Pyridinecarboxylic acid, 1,4-dihydro-2,6-dimethyl-5-nitro-4-(2-(trifluoromethyl)phenyl)-, Methyl ester"
    assert name_variants(chemical) == []


def test_variants_are_stored_as_names_with_their_source(vocab_dir: Path, tmp_path: Path) -> None:
    with Project.create(tmp_path / "p") as project:
        project.kb.import_concepts(load_kb(vocab_dir / MESH, "tsv"))
        with project.session() as session:
            rows = {
                (concept_id, name): source
                for concept_id, name, source in session.execute(
                    select(NameRow.concept_id, NameRow.name, NameRow.source).where(
                        NameRow.concept_id.in_([c for c, _, _ in EXPECTED])
                    )
                )
            }
        for concept_id, name, forms in EXPECTED:
            assert rows[(concept_id, name)] == "kb"
            for form in forms:
                assert rows[(concept_id, form)] == "variant"
        # KB search and the stored KB hold them
        assert project.kb.search_names("systemic scleroderma")[0][0] == "D012595"
        assert "Systemic Scleroderma" in project.kb.knowledge_base().get("D012595").names


def test_dictionary_tags_running_text_forms_in_a_real_biored_abstract(
    mesh: KnowledgeBase, shared_data: Path
) -> None:
    (document,) = [
        d
        for d in read_corpus(shared_data / "biored" / "BioRED_TrainDev.PubTator", "pubtator")
        if d.doc_id == "18408250"
    ]
    found = {
        (m.text, m.concept_id)
        for m in DictionaryDetector.from_kb(mesh, mention_type="Disease").detect([document])[0]
    }
    gold = {(m.text, m.concept_id) for m in document.mentions}
    # the British spelling meets the uninverted MeSH name; the defined short forms follow their long forms
    for pair in [
        ("systemic lupus erythaematosus", "D008180"),
        ("SLE", "D008180"),
        ("rheumatoid arthritis", "D001172"),
        ("RA", "D001172"),
    ]:
        assert pair in gold, f"{pair} is the corpus's own annotation"
        assert pair in found, f"{pair} not tagged: {sorted(found)}"


def test_dictionary_uses_kb_search_spelling_and_the_longest_match(mesh: KnowledgeBase) -> None:
    detector = DictionaryDetector.from_kb(mesh, mention_type="Disease")
    text = "Hypoglycaemia and diarrhoea were seen with Alzheimer's disease and type 2 diabetes mellitus."
    found = {(m.text, m.concept_id) for m in detector.detect_text(text)}
    assert {
        ("Hypoglycaemia", "D007003"),
        ("diarrhoea", "D003967"),
        ("Alzheimer's disease", "D000544"),
        ("type 2 diabetes mellitus", "D003924"),
    } <= found
    assert ("diabetes mellitus", "D003920") not in found, "the longer name wins"
    # 'liver disease' (Liver Diseases) inside "fatty liver disease": the phrase is Fatty Liver's
    (mention,) = detector.detect_text("fatty liver disease")
    assert (mention.text, mention.concept_id) == ("fatty liver disease", "D005234")


def test_organ_adjective_variants_on_real_names(vocab_dir: Path, tmp_path: Path) -> None:
    """MEDIC lists "Liver Steatosis" for Fatty Liver, text says "hepatic steatosis" (issue 23 item 13; the
    BioRED test sentence below annotates it D005234): the organ's adjective is a variant, and back."""
    assert name_variants("Liver Steatosis") == ["Hepatic Steatosis"]
    assert name_variants("Renal Insufficiency") == ["Kidney Insufficiency"]
    assert name_variants("Steatosis of Liver") == []  # the organ is not a modifier there
    assert name_variants("Liver Disease") == ["Hepatic Disease"]  # never an eponym's "Liver's Disease"
    lines = [
        line
        for line in (vocab_dir / "medic_06Jul2012.txt").read_text(encoding="utf-8").splitlines()
        if line.startswith(("D005234|", "D008107|"))  # Fatty Liver, Liver Diseases
    ]
    assert len(lines) == 2
    medic = tmp_path / "medic.tsv"
    medic.write_text("\n".join(lines) + "\n", encoding="utf-8")
    kb = KnowledgeBase(load_kb(medic, "medic"))
    assert "Hepatic Steatosis" in kb.get("MESH:D005234").variants
    sentence = (
        "Hepatomegaly was noticed, and histological examination of a liver biopsy specimen suggested "
        "severe hepatic steatosis and periportal necrosis."
    )
    found = {(m.text, m.concept_id) for m in DictionaryDetector.from_kb(kb).detect_text(sentence)}
    assert ("hepatic steatosis", "D005234") in found
