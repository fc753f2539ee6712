"""MeSH descriptor and supplementary XML, from samples in NLM's format (tests/fixtures/kb)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from core.errors import Cancelled, InputError
from core.kb.knowledge_base import KnowledgeBase
from core.kb.mesh_xml import read_mesh_xml
from core.progress import CancelToken


@pytest.fixture
def kb_fixtures(fixtures_dir: Path) -> Path:
    return fixtures_dir / "kb"


def test_descriptors_names_terms_trees_and_scope_note(kb_fixtures: Path) -> None:
    concepts = {c.concept_id: c for c in read_mesh_xml(kb_fixtures / "desc2015_sample.xml")}

    assert list(concepts) == ["D003920", "D003924", "D006816", "D008687"]
    t2dm = concepts["D003924"]
    assert t2dm.vocabulary == "MESH"
    assert t2dm.preferred_name == "Diabetes Mellitus, Type 2"
    # every entry term of every concept, the preferred term not repeated
    assert t2dm.synonyms == (
        "Diabetes Mellitus, Noninsulin-Dependent",
        "Diabetes Mellitus, Noninsulin Dependent",
        "Type 2 Diabetes Mellitus",
        "NIDDM",
        "Diabetes Mellitus, Adult-Onset",
        "Maturity-Onset Diabetes Mellitus",
        "MODY",
    )
    assert t2dm.tree_numbers == ("C18.452.394.750.149", "C19.246.300")
    # the preferred concept's ScopeNote, whitespace collapsed; not the narrower concept's
    assert t2dm.definition.startswith("A subclass of DIABETES MELLITUS that is not INSULIN-responsive")
    assert t2dm.definition.endswith("Patients seldom develop KETOSIS but often exhibit OBESITY.")
    assert "narrower concept" not in t2dm.definition
    # names of qualifiers, see-related and pharmacological-action descriptors are not synonyms
    assert "Diabetes Mellitus" not in t2dm.synonyms
    assert "genetics" not in t2dm.synonyms
    assert concepts["D003920"].synonyms == ()
    assert "blood" not in concepts["D003920"].names
    assert "Hypoglycemic Agents" not in concepts["D008687"].names
    assert concepts["D008687"].synonyms == ("Dimethylbiguanidine", "Glucophage")
    huntington = concepts["D006816"]
    assert "Huntington's Chorea" in huntington.synonyms
    assert "Juvenile Huntington Disease" in huntington.synonyms
    assert huntington.tree_numbers[-2:] == ("F03.087.250.400", "F03.087.400.390")
    assert huntington.semantic_types == ("T047",)
    assert concepts["D008687"].definition == ""


def test_permuted_terms_can_be_dropped(kb_fixtures: Path) -> None:
    concepts = {
        c.concept_id: c for c in read_mesh_xml(kb_fixtures / "desc2015_sample.xml", permuted_terms=False)
    }

    assert "Diabetes Mellitus, Noninsulin Dependent" not in concepts["D003924"].synonyms
    assert "Diabetes Mellitus, Noninsulin-Dependent" in concepts["D003924"].synonyms


def test_supplementary_records_map_to_their_headings(kb_fixtures: Path) -> None:
    concepts = {c.concept_id: c for c in read_mesh_xml(kb_fixtures / "supp2015_sample.xml")}

    assert list(concepts) == ["C000002", "C535575", "C567755"]
    hnscc = concepts["C535575"]
    assert hnscc.preferred_name == "Carcinoma, squamous cell of head and neck"
    assert hnscc.synonyms == ("Squamous cell carcinoma of the head and neck", "HNSCC")
    assert hnscc.parents == ("D002294", "D006258")  # the '*' of major mappings dropped
    assert hnscc.tree_numbers == ()
    assert concepts["C000002"].definition == "structure given in first source"  # the Note
    assert concepts["C000002"].parents == ("D001561",)
    assert concepts["C567755"].names == ("Tooth Agenesis, Selective, 6", "STHAG6")


def test_descriptors_build_a_knowledge_base(kb_fixtures: Path) -> None:
    kb = KnowledgeBase(read_mesh_xml(kb_fixtures / "desc2015_sample.xml"))

    assert len(kb) == 4
    assert kb.get("MESH:D003924").preferred_name == "Diabetes Mellitus, Type 2"
    assert {e.name for e in kb.names if e.concept_id == "D003924"} >= {"NIDDM", "MODY"}


def test_truncated_xml_names_the_file_the_line_and_the_last_record(kb_fixtures: Path) -> None:
    path = kb_fixtures / "desc2015_truncated.xml"
    seen: list[str] = []

    with pytest.raises(InputError) as caught:
        for concept in read_mesh_xml(path):
            seen.append(concept.concept_id)

    error = caught.value
    assert seen == ["D003920"]  # the complete record before the cut streamed out
    assert error.source == str(path)
    assert error.line == 119  # the last, cut line of the file
    assert error.item == "after <DescriptorRecord> D003920"
    assert "truncated" in error.problem
    assert "desc2015_truncated.xml, line 119" in str(error)


def test_bytes_that_are_not_utf8_name_the_line(kb_fixtures: Path, tmp_path: Path) -> None:
    data = (kb_fixtures / "desc2015_sample.xml").read_bytes()
    bad = tmp_path / "desc_latin1.xml"
    bad.write_bytes(data.replace(b"Huntington Chorea", "Huntington Chorée".encode("latin-1")))
    expected_line = data[: data.index(b"Huntington Chorea")].count(b"\n") + 1

    with pytest.raises(InputError) as caught:
        list(read_mesh_xml(bad))

    assert caught.value.line == expected_line
    assert "encoding" in caught.value.problem


def test_a_record_without_its_ui_is_named(kb_fixtures: Path, tmp_path: Path) -> None:
    text = (kb_fixtures / "supp2015_sample.xml").read_text(encoding="utf-8")
    bad = tmp_path / "supp_no_ui.xml"
    bad.write_text(text.replace("<SupplementalRecordUI>C535575</SupplementalRecordUI>", ""), encoding="utf-8")

    with pytest.raises(InputError) as caught:
        list(read_mesh_xml(bad))

    assert caught.value.item == "<SupplementalRecord> #2"
    assert caught.value.problem == "no <SupplementalRecordUI>"
    assert caught.value.line == text[: text.index('<SupplementalRecord SCRClass = "3">')].count("\n") + 1


def test_other_xml_and_qualifier_files_are_refused(tmp_path: Path) -> None:
    qualifiers = tmp_path / "qual2015.xml"
    qualifiers.write_text(
        '<?xml version="1.0"?>\n'
        '<!DOCTYPE QualifierRecordSet SYSTEM "https://www.nlm.nih.gov/databases/dtd/nlmqualifierrecordset_20150101.dtd">\n'
        '<QualifierRecordSet LanguageCode = "eng">\n</QualifierRecordSet>\n',
        encoding="utf-8",
    )
    not_xml = tmp_path / "terms.xml"
    not_xml.write_text("D003924\tDiabetes Mellitus, Type 2\n", encoding="utf-8")

    with pytest.raises(InputError, match="QualifierRecordSet.*qualifiers are not concepts"):
        list(read_mesh_xml(qualifiers))
    with pytest.raises(InputError, match=r"line 1: malformed XML.*not XML"):
        list(read_mesh_xml(not_xml))


def test_an_empty_file_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "desc2015.xml"
    empty.write_bytes(b"")

    with pytest.raises(InputError, match="desc2015.xml: the file is empty"):
        list(read_mesh_xml(empty))


def test_gzip_and_progress_and_cancel(kb_fixtures: Path, tmp_path: Path) -> None:
    packed = tmp_path / "desc2015.xml.gz"
    packed.write_bytes(gzip.compress((kb_fixtures / "desc2015_sample.xml").read_bytes()))
    calls: list[tuple[int, int | None]] = []

    ids = [c.concept_id for c in read_mesh_xml(packed, progress=lambda d, t, m="": calls.append((d, t)))]

    assert ids == ["D003920", "D003924", "D006816", "D008687"]
    assert calls[-1] == (packed.stat().st_size, packed.stat().st_size)
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        list(read_mesh_xml(packed, cancel=token))
