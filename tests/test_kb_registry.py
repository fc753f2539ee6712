"""load_kb and sniff_kb_format: one entry point, and a clear refusal of a file given the wrong format."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import InputError
from core.kb import KB_FORMATS, Concept, load_kb, sniff_kb_format

SAMPLES = {
    "mesh-xml": "desc2015_sample.xml",
    "umls-rrf": "umls/MRCONSO.RRF",
    "ctd": "ctd-layout-diseases-sample.tsv.gz",
    "medic": "medic_sample.txt",
    "obo": "mondo_sample.obo",
    "tsv": "mesh_terms_sample.tsv",
    "mesh-tsv": "mesh_descriptor_terms_sample.tsv",
}


@pytest.fixture
def kb_fixtures(fixtures_dir: Path) -> Path:
    return fixtures_dir / "kb"


def test_the_registry_covers_every_format() -> None:
    assert KB_FORMATS == ("mesh-xml", "umls-rrf", "ctd", "medic", "obo", "tsv", "mesh-tsv")
    assert set(SAMPLES) == set(KB_FORMATS)


@pytest.mark.parametrize("fmt", KB_FORMATS)
def test_every_sample_is_sniffed_and_loaded(kb_fixtures: Path, fmt: str) -> None:
    path = kb_fixtures / SAMPLES[fmt]

    concepts = list(load_kb(path, fmt))

    assert sniff_kb_format(path) == fmt
    assert len(concepts) >= 3
    assert all(isinstance(c, Concept) and c.concept_id and c.preferred_name for c in concepts)
    assert len({c.concept_id for c in concepts}) == len(concepts)


@pytest.mark.parametrize(
    ("sample", "given", "actual"),
    [
        ("medic_sample.txt", "ctd", "medic"),
        ("ctd-layout-diseases-sample.tsv", "medic", "ctd"),
        ("desc2015_sample.xml", "tsv", "mesh-xml"),
        ("hp_sample.obo", "medic", "obo"),
        ("umls", "tsv", "umls-rrf"),
        ("umls/MRCONSO.RRF", "medic", "umls-rrf"),
        ("simple_dictionary.tsv", "ctd", "tsv"),
    ],
)
def test_a_file_given_with_the_wrong_format_is_refused_before_reading(
    kb_fixtures: Path, sample: str, given: str, actual: str
) -> None:
    path = kb_fixtures / sample
    if path.is_dir():
        path = path / "MRCONSO.RRF"

    with pytest.raises(InputError) as caught:
        load_kb(path, given)  # raised by the call itself, not on the first next()

    assert caught.value.source == str(path)
    assert caught.value.problem == f"looks like {actual}, not {given} (use --format {actual})"


def test_the_umls_folder_is_accepted_and_sniffed(kb_fixtures: Path) -> None:
    folder = kb_fixtures / "umls"

    assert sniff_kb_format(folder) == "umls-rrf"
    assert [c.concept_id for c in load_kb(folder, "umls-rrf", sources={"MSH"})][0] == "UMLS:C0011849"


@pytest.mark.parametrize("fmt", KB_FORMATS)
def test_an_empty_file_is_refused_at_once(tmp_path: Path, fmt: str) -> None:
    empty = tmp_path / "vocabulary.txt"
    empty.write_bytes(b"")

    with pytest.raises(InputError) as caught:
        load_kb(empty, fmt)

    assert str(caught.value) == f"{empty}: the file is empty"


def test_unknown_formats_options_and_missing_files_are_named(kb_fixtures: Path, tmp_path: Path) -> None:
    medic = kb_fixtures / "medic_sample.txt"

    with pytest.raises(
        InputError, match="unknown knowledge-base format 'csv'; choose one of mesh-xml, umls-rrf"
    ):
        load_kb(medic, "csv")
    with pytest.raises(InputError, match="option\\(s\\) languages do not apply to format medic"):
        load_kb(medic, "medic", languages=("ENG",))
    with pytest.raises(InputError, match="nothing.tsv: no such file"):
        load_kb(tmp_path / "nothing.tsv", "tsv")


def test_check_format_false_lets_the_loader_speak(kb_fixtures: Path) -> None:
    with pytest.raises(
        InputError, match=r"ctd-layout-diseases-sample.tsv, line 1: no '\|\|' between the ids and the names"
    ):
        list(load_kb(kb_fixtures / "ctd-layout-diseases-sample.tsv", "medic", check_format=False))


def test_unknown_content_is_not_guessed(tmp_path: Path) -> None:
    prose = tmp_path / "notes.txt"
    prose.write_text("Diabetes mellitus is a group of metabolic disorders.\n", encoding="utf-8")
    other_xml = tmp_path / "other.xml"
    other_xml.write_text('<?xml version="1.0"?>\n<collection><document/></collection>\n', encoding="utf-8")

    assert sniff_kb_format(prose) is None
    assert sniff_kb_format(other_xml) is None
    assert sniff_kb_format(tmp_path / "missing.txt") is None
    with pytest.raises(InputError, match=r"other.xml, line 1: no tab between the id and the name \(XML\?\)"):
        list(load_kb(other_xml, "tsv"))
