"""BioC XML and BioC JSON through the `bioc` package: hand-written samples, round trips, bad input."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import bioc
import pytest
from bioc import biocjson

from core.documents import Document, Mention, Passage, Relation
from core.errors import InputError
from core.formats import bioc_json, bioc_xml, pubtator


@pytest.fixture
def formats_dir(fixtures_dir: Path) -> Path:
    return fixtures_dir / "formats"


def test_xml_sample_content(formats_dir: Path) -> None:
    first, second = bioc_xml.read(formats_dir / "sample.bioc.xml")
    assert first.doc_id == "2000001" and first.metadata == {"journal": "Sample J"}
    assert [(p.offset, p.kind) for p in first.passages] == [(0, "title"), (73, "abstract")]
    assert first.title == "Huntington disease and spinocerebellar ataxia: two CAG repeat disorders."
    # the id is read from identifier, MESH, concept_id and Identifier alike
    assert [(m.mention_id, m.text, m.concept_id) for m in first.mentions] == [
        ("A1", "Huntington disease", "D006816"),
        ("A2", "spinocerebellar ataxia", "D020754"),
        ("A3", "Huntington and Machado-Joseph disease", "D006816"),
        ("A4", "Machado-Joseph disease", "D017827"),
        ("A5", "Chorea", "D002819"),  # a document-level annotation
    ]
    discontinuous = first.mentions[2]
    assert discontinuous.infons == {"fragments": "78 88;108 115", "source_text": "Huntington disease"}
    assert first.mentions[4].type == "Phenotype"
    # nodes are arguments (refids) with roles; a relation without nodes keeps its infons too
    assert first.relations == (
        Relation("Comorbid", ("A1", "A5"), "R1", ("Arg1", "Arg2")),
        Relation("Associated", ("HTT", "D006816"), "R2"),
    )
    assert first.relations[1].infons == {"Gene": "HTT", "Disease": "D006816"}
    # a passage given only as sentences becomes one passage per sentence
    assert [(p.offset, p.text) for p in second.passages] == [
        (0, "Ataxia was mild."),
        (17, "No dementia developed."),
    ]
    assert [m.text for m in second.mentions] == ["Ataxia", "dementia"]
    assert not first.mention_text_mismatches() and not second.mention_text_mismatches()


def test_json_sample_content(formats_dir: Path) -> None:
    (doc,) = bioc_json.read(formats_dir / "sample.bioc.json")
    assert doc.doc_id == "3000001" and doc.metadata == {"year": "2024"}
    assert doc.title == "Cystic fibrosis in two siblings."
    assert [(m.text, m.concept_id) for m in doc.mentions] == [
        ("Cystic fibrosis", "MESH:D003550"),
        ("pancreatic insufficiency", "MESH:D010188"),
        ("cystic fibrosis", "D003550"),
    ]


@pytest.mark.parametrize("module", [bioc_xml, bioc_json], ids=["xml", "json"])
def test_round_trip_keeps_everything_bioc_can_hold(formats_dir: Path, tmp_path: Path, module) -> None:
    docs = [
        *bioc_xml.read(formats_dir / "sample.bioc.xml"),
        *bioc_json.read(formats_dir / "sample.bioc.json"),
    ]
    unusual = Document(
        "5000001",
        (Passage(0, "Tremor after lithium.", "title"),),
        (Mention(0, 6, "Tremor", "Disease", "D014202", "M1", origin="detected", infons={"score": "0.93"}),),
    )
    docs.append(unusual)
    out = tmp_path / "out"
    assert module.write(docs, out) == 4
    again = list(module.read(out))
    assert again == docs
    assert [[m.infons for m in d.mentions] for d in again] == [[m.infons for m in d.mentions] for d in docs]
    assert [d.metadata for d in again] == [d.metadata for d in docs]
    assert again[3].mentions[0].origin == "detected"


def test_pubtator_relations_and_composites_survive_bioc(formats_dir: Path, tmp_path: Path) -> None:
    source = formats_dir / "composite.pubtator"
    docs = list(pubtator.read(source))
    for module, name in ((bioc_xml, "c.xml"), (bioc_json, "c.json")):
        module.write(docs, tmp_path / name)
        back = list(module.read(tmp_path / name))
        pubtator.write(back, tmp_path / f"{name}.pubtator")
        assert (tmp_path / f"{name}.pubtator").read_bytes() == source.read_bytes()


def test_written_xml_is_standard_bioc(formats_dir: Path, tmp_path: Path) -> None:
    """Another BioC tool (the bioc package's own whole-file loader) reads what we write."""
    docs = list(pubtator.read(formats_dir / "composite.pubtator"))
    bioc_xml.write(docs, tmp_path / "c.xml")
    with (tmp_path / "c.xml").open("rb") as handle:
        collection = bioc.biocxml.load(handle)
    first = collection.documents[0]
    assert [p.infons["type"] for p in first.passages] == ["title", "abstract"]
    annotation = first.passages[1].annotations[0]
    assert annotation.infons == {
        "individual_mentions": "breast cancer|ovarian cancer",
        "type": "Disease",
        "identifier": "D001943|D010051",
    }
    assert (annotation.locations[0].offset, annotation.locations[0].length) == (95, 25)
    # mentions without an id get unique ones, so BioC relations could refer to them
    assert [a.id for p in first.passages for a in p.annotations] == [f"T{n}" for n in range(1, 10)]


def test_json_lines_of_bioc_documents(formats_dir: Path, tmp_path: Path) -> None:
    """The layout `bioc.biocjson.iterwriter` produces: one BioCDocument per line."""
    docs = list(bioc_xml.read(formats_dir / "sample.bioc.xml"))
    path = tmp_path / "docs.jsonl"
    with biocjson.iterwriter(str(path)) as writer:
        for doc in bioc_xml.read(formats_dir / "sample.bioc.xml"):
            from core.formats.bioc_model import to_bioc

            writer.write(to_bioc(doc))
    again = list(bioc_json.read(path))
    assert [(d.doc_id, [m.text for m in d.mentions]) for d in again] == [
        (d.doc_id, [m.text for m in d.mentions]) for d in docs
    ]


def test_truncated_xml_keeps_earlier_documents(formats_dir: Path, tmp_path: Path) -> None:
    content = (formats_dir / "sample.bioc.xml").read_text()
    cut = content.index("<id>2000002</id>") + 40
    path = tmp_path / "truncated.xml"
    path.write_text(content[:cut])
    reader = bioc_xml.read(path)
    assert next(reader).doc_id == "2000001"
    with pytest.raises(InputError, match=r"truncated.xml, line \d+: malformed XML"):
        next(reader)


def test_xml_errors(formats_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "bad.xml"
    path.write_text("<collection><document><id>1</id><passage><offset>0</offset></document></collection>")
    with pytest.raises(InputError, match=r"line 1: malformed XML: .*passage"):
        list(bioc_xml.read(path))
    path.write_bytes(
        b"<?xml version='1.0' encoding='UTF-8'?>\n<collection>\n<source>caf\xe9</source>\n</collection>"
    )
    with pytest.raises(InputError, match=r"line 3: malformed XML: Invalid bytes in character encoding"):
        list(bioc_xml.read(path))
    path.write_text("<html><body/></html>")
    with pytest.raises(InputError, match=r"line 1: not BioC XML: the root element is <html>"):
        list(bioc_xml.read(path))
    path.write_text("<collection><source>s</source></collection>")
    with pytest.raises(InputError, match="holds no <document>"):
        list(bioc_xml.read(path))
    path.write_bytes(b"")
    with pytest.raises(InputError, match="empty"):
        list(bioc_xml.read(path))
    with pytest.raises(InputError, match=r"line 1: malformed XML.*looks like pubtator"):
        list(bioc_xml.read(formats_dir / "composite.pubtator"))


def test_xml_offset_mismatch_names_the_annotation_line(formats_dir: Path, tmp_path: Path) -> None:
    content = (formats_dir / "sample.bioc.xml").read_text()
    path = tmp_path / "shifted.xml"
    path.write_text(
        content.replace('<location offset="23" length="22"/>', '<location offset="24" length="22"/>')
    )
    reader = bioc_xml.read(path)
    with pytest.raises(InputError) as caught:
        next(reader)
    error = caught.value
    assert error.line == 20 and error.item == "document 2000001, annotation A2"
    assert "does not match the document text" in error.problem


def test_json_errors(formats_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"source": "x", "documents": [\n{"id": "1", "passages": [}\n]}')
    with pytest.raises(InputError, match=r"line 2: invalid JSON"):
        list(bioc_json.read(path))
    path.write_text(json.dumps({"documents": [{"id": "1", "passages": [{"text": "No offset."}]}]}))
    with pytest.raises(
        InputError, match=r"documents\[0\] \(id 1\): malformed BioC document: missing key 'offset'"
    ):
        list(bioc_json.read(path))
    path.write_text(json.dumps({"doc_id": "1", "passages": []}))
    with pytest.raises(InputError, match="not BioC JSON.*looks like jsonl"):
        list(bioc_json.read(path))
    path.write_text("  \n")
    with pytest.raises(InputError, match="only whitespace"):
        list(bioc_json.read(path))
    path.write_bytes(b'{"documents": []}\n\xff')
    with pytest.raises(InputError, match=r"line 2: not valid UTF-8"):
        list(bioc_json.read(path))
    with pytest.raises(InputError, match="invalid JSON.*looks like bioc-xml"):
        list(bioc_json.read(formats_dir / "sample.bioc.xml"))


def test_json_bad_location_type(formats_dir: Path, tmp_path: Path) -> None:
    obj = json.loads((formats_dir / "sample.bioc.json").read_text())
    obj["documents"][0]["passages"][0]["annotations"][0]["locations"][0]["offset"] = "zero"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(obj))
    with pytest.raises(InputError, match=r"annotation 1: location offset must be an integer, got 'zero'"):
        list(bioc_json.read(path))


def test_xml_writer_refuses_control_characters(tmp_path: Path) -> None:
    doc = Document("1", (Passage(0, "bad \x01 byte", "title"),))
    with pytest.raises(InputError, match="document 1"):
        bioc_xml.write([replace(doc)], tmp_path / "x.xml")
    assert not (tmp_path / "x.xml").exists()
