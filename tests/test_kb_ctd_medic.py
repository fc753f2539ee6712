"""CTD TSV vocabularies and MEDIC (DNorm) files, from samples in their real layouts."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import InputError
from core.kb.ctd import read_ctd
from core.kb.knowledge_base import KnowledgeBase
from core.kb.medic import read_medic


@pytest.fixture
def kb_fixtures(fixtures_dir: Path) -> Path:
    return fixtures_dir / "kb"


@pytest.mark.parametrize("name", ["ctd-layout-diseases-sample.tsv", "ctd-layout-diseases-sample.tsv.gz"])
def test_ctd_diseases_plain_or_gzip(kb_fixtures: Path, name: str) -> None:
    concepts = {c.concept_id: c for c in read_ctd(kb_fixtures / name)}

    assert list(concepts) == ["OMIM:400045", "C535575", "D003924", "D006816", "D009369"]
    t2dm = concepts["D003924"]
    assert t2dm.vocabulary == "CTD"
    assert t2dm.preferred_name == "Diabetes Mellitus, Type 2"
    assert t2dm.alt_ids == ("DOID:9352", "OMIM:125853")
    assert t2dm.parents == ("D003920",)
    assert t2dm.tree_numbers == ("C18.452.394.750.149", "C19.246.300")
    assert t2dm.synonyms == (
        "Diabetes Mellitus, Noninsulin-Dependent",
        "MODY",
        "NIDDM",
        "Type 2 Diabetes Mellitus",
    )
    assert t2dm.semantic_types == ("Endocrine system disease", "Metabolic disease")
    assert t2dm.definition.startswith("A subclass of DIABETES MELLITUS")
    assert concepts["OMIM:400045"].parents == ("D023961",)
    assert concepts["OMIM:400045"].definition == ""


def test_ctd_chemicals_and_the_kb_resolves_alt_ids(kb_fixtures: Path) -> None:
    concepts = list(read_ctd(kb_fixtures / "ctd-layout-chemicals-sample.tsv"))

    assert [c.concept_id for c in concepts] == ["D001241", "D008687", "C000002"]
    assert concepts[1].alt_ids == ("CAS:657-24-9",)
    assert concepts[1].parents == ("D001645",)
    assert concepts[2].synonyms == () and concepts[2].alt_ids == ()
    kb = KnowledgeBase(concepts)
    assert kb.resolve("CAS:50-78-2") == "D001241"
    diseases = KnowledgeBase(read_ctd(kb_fixtures / "ctd-layout-diseases-sample.tsv"))
    assert diseases.resolve("OMIM:143100") == "D006816"
    assert diseases.resolve("DOID:162") == "D009369"


def test_ctd_without_header_uses_the_column_count(kb_fixtures: Path, tmp_path: Path) -> None:
    rows = [
        line
        for line in (kb_fixtures / "ctd-layout-chemicals-sample.tsv").read_text().splitlines()
        if line[:1] != "#"
    ]
    bare = tmp_path / "vocabulary.tsv"
    bare.write_text("\n".join(rows) + "\n", encoding="utf-8")

    assert [c.alt_ids for c in read_ctd(bare)][:2] == [("CAS:50-78-2",), ("CAS:657-24-9",)]


def test_ctd_bad_rows_are_named(kb_fixtures: Path, tmp_path: Path) -> None:
    lines = (
        (kb_fixtures / "ctd-layout-diseases-sample.tsv").read_text(encoding="utf-8").splitlines(keepends=True)
    )
    short = tmp_path / "CTD_diseases.tsv"
    short.write_text("".join(lines[:12]) + "Huntington Disease\tMESH:D006816\n", encoding="utf-8")
    no_curie = tmp_path / "CTD_diseases_bad_id.tsv"
    no_curie.write_text("".join(lines[:10]) + lines[10].replace("MESH:C535575", "C535575"), encoding="utf-8")
    comments_only = tmp_path / "CTD_diseases_header.tsv"
    comments_only.write_text("".join(lines[:9]), encoding="utf-8")

    with pytest.raises(InputError) as caught:
        list(read_ctd(short))
    assert caught.value.line == 13
    assert caught.value.problem.startswith("expected 9 tab-separated CTD columns (DiseaseName, DiseaseID,")
    assert caught.value.problem.endswith("found 2")
    with pytest.raises(InputError, match=r"line 11: DiseaseID 'C535575' is not a CURIE"):
        list(read_ctd(no_curie))
    with pytest.raises(InputError, match="no CTD rows"):
        list(read_ctd(comments_only))


def test_medic_ids_names_and_alt_ids(kb_fixtures: Path) -> None:
    concepts = {c.concept_id: c for c in read_medic(kb_fixtures / "medic_sample.txt")}

    assert list(concepts) == ["C535575", "C567755", "D003924", "D006816", "OMIM:400045"]
    assert concepts["C567755"].names == ("Tooth Agenesis, Selective, 6", "STHAG6")
    assert concepts["C567755"].alt_ids == ("OMIM:613097",)  # bare OMIM numbers get the prefix
    assert concepts["OMIM:400045"].alt_ids == ()
    assert concepts["D006816"].vocabulary == "MEDIC"
    kb = KnowledgeBase(concepts.values())
    assert kb.resolve("OMIM:125853") == "D003924"
    assert kb.resolve("MESH:D006816") == "D006816"


def test_medic_consecutive_lines_of_one_id_are_one_concept(tmp_path: Path) -> None:
    """The BioSyn dictionary layout: one name a line, the id field repeated."""
    dictionary = tmp_path / "train_dictionary.txt"
    dictionary.write_text(
        "C567755|613097||tooth agenesis selective 6\nC567755|613097||sthag6\nD006816||huntington disease\n",
        encoding="utf-8",
    )

    concepts = list(read_medic(dictionary))

    assert [(c.concept_id, c.names, c.alt_ids) for c in concepts] == [
        ("C567755", ("tooth agenesis selective 6", "sthag6"), ("OMIM:613097",)),
        ("D006816", ("huntington disease",), ()),
    ]


def test_medic_bad_lines_are_named(kb_fixtures: Path, tmp_path: Path) -> None:
    no_separator = tmp_path / "medic_no_sep.txt"
    no_separator.write_text(
        "D006816||Huntington Disease\nD003924|Diabetes Mellitus, Type 2\n", encoding="utf-8"
    )
    no_name = tmp_path / "medic_no_name.txt"
    no_name.write_text("D006816||Huntington Disease\n\nD003924||\n", encoding="utf-8")
    latin = tmp_path / "medic_latin1.txt"
    latin.write_bytes(b"D006816||Huntington Disease\nD003924||Diab\xe8te\n")
    blank = tmp_path / "medic_blank.txt"
    blank.write_text("\n\n", encoding="utf-8")

    with pytest.raises(
        InputError, match=r"medic_no_sep.txt, line 2: no '\|\|' between the ids and the names"
    ):
        list(read_medic(no_separator))
    with pytest.raises(InputError, match=r"medic_no_name.txt, line 3, id D003924: no name after '\|\|'"):
        list(read_medic(no_name))
    with pytest.raises(
        InputError, match=r"medic_latin1.txt, line 2: not valid UTF-8 \(byte 0xe8 at column 14\)"
    ):
        list(read_medic(latin))
    with pytest.raises(InputError, match="no concepts, only blank lines"):
        list(read_medic(blank))


def test_ctd_read_as_medic_and_medic_read_as_ctd_fail_on_line_one(kb_fixtures: Path) -> None:
    """The loaders alone (without load_kb's sniffing) still refuse the other format at once."""
    with pytest.raises(InputError) as caught:
        list(read_medic(kb_fixtures / "ctd-layout-diseases-sample.tsv.gz"))
    assert caught.value.line == 1 and "CTD?" in caught.value.problem

    with pytest.raises(InputError) as caught:
        list(read_ctd(kb_fixtures / "medic_sample.txt"))
    assert caught.value.line == 1 and "found 1" in caught.value.problem
