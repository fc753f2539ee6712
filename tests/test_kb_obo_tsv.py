"""OBO ontologies (through fastobo) and simple TSV dictionaries."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from core.errors import InputError
from core.kb.knowledge_base import KnowledgeBase
from core.kb.obo import read_obo
from core.kb.tsv import read_tsv


@pytest.fixture
def kb_fixtures(fixtures_dir: Path) -> Path:
    return fixtures_dir / "kb"


def test_obo_terms_keep_exact_and_related_synonyms_and_drop_obsolete(kb_fixtures: Path) -> None:
    concepts = {c.concept_id: c for c in read_obo(kb_fixtures / "hp_sample.obo")}

    assert list(concepts) == ["HP:0000001", "HP:0000118", "HP:0000707", "HP:0012638", "HP:0001250"]
    seizure = concepts["HP:0001250"]
    assert seizure.vocabulary == "HP"
    assert seizure.preferred_name == "Seizure"
    assert seizure.synonyms == ("Epileptic seizure", "Seizures", "Fits")  # NARROW dropped
    assert seizure.alt_ids == ("HP:0002279", "HP:0002391")
    assert seizure.parents == ("HP:0012638",)
    assert seizure.definition.startswith(
        "A seizure is an intermittent abnormality of nervous system physiology"
    )
    assert concepts["HP:0012638"].synonyms == ("Abnormality of brain physiology",)  # BROAD dropped
    assert all("UMLS:" not in alt for c in concepts.values() for alt in c.alt_ids)  # xrefs ignored
    assert KnowledgeBase(concepts.values()).resolve("HP:0002279") == "HP:0001250"


def test_obo_scopes_are_configurable_and_gzip_is_read(kb_fixtures: Path, tmp_path: Path) -> None:
    packed = tmp_path / "mondo.obo.gz"
    packed.write_bytes(gzip.compress((kb_fixtures / "mondo_sample.obo").read_bytes()))

    default = {c.concept_id: c for c in read_obo(packed)}
    every = {
        c.concept_id: c for c in read_obo(packed, synonym_scopes={"EXACT", "RELATED", "BROAD", "NARROW"})
    }
    exact = {c.concept_id: c for c in read_obo(packed, synonym_scopes={"exact"})}

    t2dm = "MONDO:0005148"
    assert default[t2dm].parents == ("MONDO:0005015",)
    assert "maturity-onset diabetes" in default[t2dm].synonyms
    assert "diabetes" not in default[t2dm].synonyms
    assert "diabetes" in every[t2dm].synonyms
    assert "maturity-onset diabetes" not in exact[t2dm].synonyms
    assert exact["MONDO:0007739"].synonyms == ("Huntington chorea", "Huntington's disease", "HD")


def test_obo_syntax_errors_and_bad_bytes_name_the_line(kb_fixtures: Path, tmp_path: Path) -> None:
    text = (kb_fixtures / "hp_sample.obo").read_text(encoding="utf-8")
    broken = tmp_path / "broken.obo"
    broken.write_text(text.replace('"Seizures" EXACT', '"Seizures" SOMETIMES'), encoding="utf-8")
    latin = tmp_path / "latin.obo"
    latin.write_bytes(text.replace("Fits", "Fièvre").encode("latin-1"))
    line_of = {word: text[: text.index(word)].count("\n") + 1 for word in ('"Seizures"', "Fits")}

    with pytest.raises(InputError) as caught:
        list(read_obo(broken))
    assert caught.value.line == line_of['"Seizures"']
    assert caught.value.problem.startswith("not valid OBO")
    with pytest.raises(InputError) as caught:
        list(read_obo(latin))
    assert caught.value.line == line_of["Fits"]
    assert "not valid UTF-8 (byte 0xe8" in caught.value.problem


def test_tsv_with_and_without_header(kb_fixtures: Path) -> None:
    terms = list(read_tsv(kb_fixtures / "mesh_terms_sample.tsv"))
    simple = {c.concept_id: c for c in read_tsv(kb_fixtures / "simple_dictionary.tsv")}

    assert [(c.concept_id, c.preferred_name, c.vocabulary) for c in terms] == [
        ("D003920", "Diabetes Mellitus", "MESH"),
        ("D003924", "Diabetes Mellitus, Type 2", "MESH"),
        ("D006816", "Huntington Disease", "MESH"),
        ("D008687", "Metformin", "MESH"),
    ]
    assert list(simple) == ["D003924", "OMIM:143100", "UMLS:C0011849", "HP:0001250"]
    assert simple["OMIM:143100"].synonyms == ("HD", "Huntington's chorea")
    assert simple["OMIM:143100"].vocabulary == "OMIM"
    assert simple["UMLS:C0011849"].synonyms == ()


def test_tsv_header_names_extra_columns_and_rows_of_one_id_merge(kb_fixtures: Path) -> None:
    concepts = list(read_tsv(kb_fixtures / "mesh_tree_numbers_sample.tsv"))

    assert [(c.concept_id, c.tree_numbers, c.synonyms) for c in concepts] == [
        ("D003920", ("C18.452.394.750", "C19.246"), ()),
        ("D003924", ("C18.452.394.750.149", "C19.246.300"), ()),
        ("D006816", ("C10.228.140.380.278",), ()),
    ]


def test_tsv_vocabulary_option_resolves_bare_ids(tmp_path: Path) -> None:
    table = tmp_path / "omim.tsv"
    table.write_text("143100\tHuntington disease\n125853\tType 2 diabetes mellitus\n", encoding="utf-8")

    assert [c.concept_id for c in read_tsv(table, vocabulary="OMIM")] == ["OMIM:143100", "OMIM:125853"]


def test_tsv_bad_input_is_named(kb_fixtures: Path, tmp_path: Path) -> None:
    xml = kb_fixtures / "desc2015_sample.xml"
    latin = tmp_path / "latin.tsv"
    latin.write_bytes(b"# comment\nD006816\tHuntington Disease\nD003924\tDiab\xe8te\n")
    spaced = tmp_path / "spaced.tsv"
    spaced.write_text("Huntington Disease\tD006816\n", encoding="utf-8")
    only_header = tmp_path / "header.tsv"
    only_header.write_text("mesh_id\tmesh_name\n# nothing else\n", encoding="utf-8")

    with pytest.raises(
        InputError, match=r"desc2015_sample.xml, line 1: no tab between the id and the name \(XML\?\)"
    ):
        list(read_tsv(xml))
    with pytest.raises(InputError, match=r"latin.tsv, line 3: not valid UTF-8 \(byte 0xe8 at column 13\)"):
        list(read_tsv(latin))
    with pytest.raises(InputError, match=r"spaced.tsv, line 1: id 'Huntington Disease' contains spaces"):
        list(read_tsv(spaced))
    with pytest.raises(InputError, match="no concepts"):
        list(read_tsv(only_header))
    with pytest.raises(InputError, match=r"line 10: 9 tab-separated columns.*use --format ctd"):
        list(read_tsv(kb_fixtures / "ctd-layout-diseases-sample.tsv"))
