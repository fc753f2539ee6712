"""What the field's formats carry is kept (issue 10, item 9) and what a target format cannot hold is
counted; exports never write a line their own reader refuses; several KB concepts on one mention are
written by each format's convention and read back as several concepts."""

from __future__ import annotations

import gzip
import json
import logging
from pathlib import Path

import pytest

from app.cli import main
from core.documents import Document, Mention, Passage, Relation, document_from_title_abstract
from core.formats import WRITABLE_FORMATS, bioc_json, bioc_xml, brat, pubtator, read_corpus, write_corpus
from core.store import Project


@pytest.fixture(scope="module")
def realworld(shared_data: Path) -> Path:
    path = shared_data / "realworld"
    if not path.is_dir():
        pytest.skip(f"{path} not found")
    return path


def _report():
    from core.formats.report import FormatReport

    return FormatReport()


def _full(document: Document) -> dict:
    from core.formats.jsonl import to_json

    return to_json(document)


# --- PubTator relation lines -------------------------------------------------------------------


def test_pubtator_writes_only_relation_lines_it_reads_back(tmp_path: Path) -> None:
    base = document_from_title_abstract("7", "Variant 7488T/C.", "His-to-Arg substitution.")
    relations = (
        Relation("Translation 7488T/C", ("His-to-Arg substitution",)),  # tmVar's one-argument line
        Relation("", ("D001", "D002")),  # untyped
        Relation("Association", ("6331", "D008133", "Novel")),  # BioRED, a gene id first
        Relation("", ("6331", "5444", "Novel")),  # untyped with integer arguments
        Relation("CID", ("D1", "D2", "D3", "D4")),  # four arguments: no PubTator form
        Relation("12", ("34", "x")),  # would read back as an annotation line
    )
    document = Document(base.doc_id, base.passages, relations=relations)
    report = _report()
    pubtator.write([document], tmp_path / "out.txt", report)
    (back,) = pubtator.read(tmp_path / "out.txt")
    assert back.relations == relations[:4]
    assert sum(report.losses.values()) >= 2 and any("cannot hold" in reason for reason in report.losses)


def test_relations_by_reference_become_concept_relations_in_pubtator(tmp_path: Path) -> None:
    text = "BRCA1 mutations cause breast cancer."
    document = Document(
        "9",
        (Passage(0, text, "title"),),
        (
            Mention(0, 5, "BRCA1", "Gene", "672", "T1"),
            Mention(22, 35, "breast cancer", "Disease", "D001943", "T2"),
            Mention(6, 15, "mutations", "Variant", "", "T3"),
        ),
        (
            Relation("Causes", ("T1", "T2"), "R1", ("Arg1", "Arg2")),
            Relation("Has", ("T1", "T3"), "R2", ("Arg1", "Arg2")),  # T3 has no concept: no PubTator form
        ),
    )
    report = _report()
    pubtator.write([document], tmp_path / "out.txt", report)
    (back,) = pubtator.read(tmp_path / "out.txt")
    assert back.relations == (Relation("Causes", ("672", "D001943")),)
    assert any("without concept ids" in reason for reason in report.losses)


# --- PubTator3 BioC JSON -----------------------------------------------------------------------


def test_pubtator3_json_keeps_roles_scores_and_typed_infons(realworld: Path, tmp_path: Path) -> None:
    source = realworld / "bioc" / "factoid_10.1016_j.molcel.2016.11.034.json"
    raw = json.loads(source.read_text())
    (doc,) = bioc_json.read(source)
    first = raw["passages"][0]["annotations"][0]
    mention = next(m for m in doc.mentions if m.mention_id == first["id"])
    assert mention.infons["valid"] is True and mention.infons["normalized"] == [442920]
    assert mention.infons["normalized_id"] == 442920
    relation = raw["relations"][0]
    kept = doc.relations[0]
    assert kept.relation_id == relation["id"] and kept.type == relation["infons"]["type"]
    assert kept.arguments == ("0",) and kept.roles == (relation["nodes"][0]["role"],)
    assert kept.infons["role1"] == relation["infons"]["role1"]
    assert kept.infons["role2"] == relation["infons"]["role2"]
    assert kept.infons["score"] == relation["infons"]["score"]
    # PubTator3's own document keys survive a BioC JSON round trip, and JSON types stay JSON types
    assert doc.metadata["bioc_json_fields"]["pmid"] == raw["pmid"]
    bioc_json.write([doc], tmp_path / "out.json")
    written = json.loads((tmp_path / "out.json").read_text())["documents"][0]
    assert written["pmid"] == raw["pmid"] and written["relations_display"] == raw["relations_display"]
    annotation = next(a for p in written["passages"] for a in p["annotations"] if a["id"] == first["id"])
    assert annotation["infons"] == first["infons"]
    assert written["relations"][0]["infons"] == relation["infons"]
    assert written["relations"][0]["nodes"] == relation["nodes"]
    (again,) = bioc_json.read(tmp_path / "out.json")
    assert {k: v for k, v in _full(again).items() if k != "collection"} == _full(doc)


def test_pubtator3_wrapper_is_accepted(realworld: Path, tmp_path: Path) -> None:
    documents = [json.loads(p.read_text()) for p in sorted((realworld / "bioc").glob("factoid_*.json"))[:2]]
    path = tmp_path / "pubtator3.json"
    path.write_text(json.dumps({"PubTator3": documents}))
    docs = list(read_corpus(path))  # the format is guessed too
    assert [d.doc_id for d in docs] == [d["id"] for d in documents]


# --- BioC infons at every level, BioC 2.0 --------------------------------------------------------


def test_bioc_infons_at_every_level(realworld: Path, tmp_path: Path) -> None:
    first, second = bioc_xml.read(realworld / "bioc" / "bionlplab_everything.xml")
    assert first.collection["infons"] == {"collection-infon-key": "collection-infon-value"}
    assert first.metadata == {"document-infon-key": "document-infon-value"}
    assert first.passages[0].infons == {"passage-infon-key": "passage-infon-value"}
    assert all(r.infons == {"relation-infon-key": "relation-infon-value"} for r in first.relations)
    assert [(r.arguments, r.roles) for r in first.relations] == [(("1", "2"), ("role1", "role2"))] * 2
    assert second.passages[0].infons["sentence-infon-key"] == "sentence-infon-value"
    for module, name in ((bioc_xml, "out.xml"), (bioc_json, "out.json")):
        module.write([first, second], tmp_path / name)
        assert [_full(d) for d in module.read(tmp_path / name)] == [_full(first), _full(second)]


def test_bioc_2_0_reads_like_1_0(realworld: Path) -> None:
    old = list(bioc_xml.read(realworld / "bioc" / "bionlplab_everything.xml"))
    new = list(bioc_xml.read(realworld / "bioc" / "bionlplab_everything_v2.xml"))
    assert [{**_full(d), "collection": {}} for d in new] == [{**_full(d), "collection": {}} for d in old]
    assert new[0].collection["version"] == "2.0"


# --- brat events, equivalences, attributes, notes ------------------------------------------------


def test_brat_events_equivalences_attributes_and_notes(realworld: Path, tmp_path: Path) -> None:
    folder = realworld / "brat" / "brat_tutorial"
    docs = {d.doc_id: d for d in brat.read(folder)}
    attributes = docs["100-attribute_annotation"]
    events = {r.relation_id: r for r in attributes.relations if r.infons.get("brat_kind") == "event"}
    assert events["E1"].infons["Confidence"] == "Possible"
    assert events["E4"].infons["Negation"] == "true" and events["E4"].infons["Confidence"] == "Likely"
    assert events["E1"].arguments == ("T9", "T1", "T3") and events["E1"].roles == (
        "Trigger",
        "Theme",
        "Theme2",
    )
    notes = docs["110-note_annotation"]
    assert notes.mentions[0].infons["note"] == "Check: is this a Protein or a Complex?"
    by_id = {r.relation_id: r for r in notes.relations}
    assert by_id["E1"].infons["note"] == "Single ternary binding event or two binary ones?  "
    assert by_id["R1"].infons["note"].startswith("Should this be annotated?")
    epi = list(brat.read(realworld / "brat" / "brat_epi"))
    ann = "".join(p.read_text() for p in sorted((realworld / "brat" / "brat_epi").glob("*.ann")))
    kinds = [r.infons.get("brat_kind") for d in epi for r in d.relations]
    assert kinds.count("equiv") == ann.count("\n*\t") + ann.startswith("*\t")
    assert kinds.count("event") == sum(1 for line in ann.splitlines() if line.startswith("E"))
    modified = sum(1 for d in epi for r in d.relations if "Negation" in r.infons or "Speculation" in r.infons)
    assert modified == sum(1 for line in ann.splitlines() if line[:1] in "AM")
    # brat -> brat keeps all of it
    brat.write(docs.values(), tmp_path / "again")
    assert [_full(d) for d in brat.read(tmp_path / "again")] == [_full(d) for d in docs.values()]


def test_what_pubtator_cannot_hold_is_counted_in_the_export_summary(
    realworld: Path, tmp_path: Path, capsys
) -> None:
    project = tmp_path / "p"
    Project.create(project).close()
    folder = realworld / "brat" / "brat_tutorial"
    assert main(["-p", str(project), "corpus", "import", str(folder), "--format", "brat"]) == 0
    capsys.readouterr()
    assert main(["-p", str(project), "export", "--format", "pubtator", "--out", str(tmp_path / "x.txt")]) == 0
    out = capsys.readouterr().out
    events = sum(
        1 for p in folder.glob("*.ann") for line in p.read_text().splitlines() if line.startswith("E")
    )
    assert "not written:" in out and "relations between mentions without concept ids" in out
    assert "mention ids not written" in out
    assert events > 0


# --- ids split by each corpus's convention -------------------------------------------------------


@pytest.mark.parametrize(
    ("concept_id", "expected"),
    [
        ("D001943|D010051", ("D001943", "D010051")),  # NCBI-disease composite
        ("D004829+D003294", ("D004829", "D003294")),  # NCBI-disease combination
        ("-1", ()),
        (
            "MESH:D003520,MESH:D003630,MESH:D014750",
            ("MESH:D003520", "MESH:D003630", "MESH:D014750"),
        ),  # NLM-Chem
        ("MESH:D049231,MESH:C042511,-", ("MESH:D049231", "MESH:C042511")),  # NLM-Chem, one part unlinked
        ("26417;26413", ("26417", "26413")),  # NLM-Gene
        ("p|SUB|V|1764|M", ("p|SUB|V|1764|M",)),  # BioRED variant: one structured id
        (
            "c|SUB|G|Ex2+860|C;Gene:3577;RS#:2234671;Disease:D008175;VariantGroup:0",
            ("c|SUB|G|Ex2+860|C;Gene:3577;RS#:2234671;Disease:D008175;VariantGroup:0",),
        ),  # tmVar 3
        ("rs1611115;Disease:D000544;VariantGroup:0", ("rs1611115;Disease:D000544;VariantGroup:0",)),
    ],
)
def test_concept_ids_by_convention(concept_id: str, expected: tuple[str, ...]) -> None:
    assert Mention(0, 1, "x", concept_id=concept_id).concept_ids == expected


def test_tmvar_ids_in_the_real_file_are_one_concept_each(realworld: Path) -> None:
    docs = list(pubtator.read(realworld / "pubtator" / "aioner_tmVar3_Test.PubTator"))
    variants = [
        m for d in docs for m in d.mentions if m.type.endswith(("Mutation", "Allele", "SNP", "AcidChange"))
    ]
    assert variants and all(
        m.concept_ids == (m.concept_id,) for m in variants if m.concept_id not in ("", "-")
    )
    assert not any(m.is_composite for m in variants)


# --- gzip, OBO import lines ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["bioc/bionlplab_everything.xml", "bioc/bionlplab_everything.json"])
def test_gzipped_bioc(realworld: Path, tmp_path: Path, name: str) -> None:
    source = realworld / name
    packed = tmp_path / (source.name + ".gz")
    packed.write_bytes(gzip.compress(source.read_bytes()))
    fmt = "bioc-xml" if name.endswith(".xml") else "bioc-json"
    assert [_full(d) for d in read_corpus(packed, fmt)] == [_full(d) for d in read_corpus(source, fmt)]


def test_obo_import_lines_are_warned(realworld: Path, caplog) -> None:
    from core.kb.obo import read_obo

    warnings: list[str] = []
    with caplog.at_level(logging.WARNING):
        concepts = list(read_obo(realworld / "obo" / "pronto_ms.obo", on_warning=warnings.append))
    assert concepts
    assert len(warnings) == 2 and "import: pato.obo" in warnings[0] and "not followed" in warnings[0]
    assert sum("import: uo.obo" in record.getMessage() for record in caplog.records) == 1


# --- export duties -------------------------------------------------------------------------------


def _detected() -> Document:
    base = document_from_title_abstract("11", "Fever and rash.", "Rash spread to the arms.")
    return Document(
        base.doc_id,
        base.passages,
        (
            Mention(0, 5, "Fever", origin="detected"),  # a detector gives neither type nor id
            Mention(16, 20, "Rash", "", "", origin="detected"),
            Mention(10, 14, "rash", "Disease", "D005076"),
        ),
    )


@pytest.mark.parametrize("fmt", sorted(WRITABLE_FORMATS))
def test_every_writer_output_reads_back(tmp_path: Path, fmt: str) -> None:
    out = tmp_path / ("out.txt" if fmt == "pubtator" else "out")
    document = _detected()
    report = _report()
    write_corpus([document], out, fmt, report=report)
    (back,) = read_corpus(out, fmt)  # never a line the reader refuses
    assert back.text.split() == document.text.split()
    if fmt != "text":
        assert sorted((m.start, m.end, m.text) for m in back.mentions) == sorted(
            (m.start, m.end, m.text) for m in document.mentions
        )
    if fmt in ("jsonl", "bioc-xml", "bioc-json", "brat"):
        assert sorted(m.origin for m in back.mentions) == ["detected", "detected", "gold"]
    else:  # PubTator and plain text cannot say a mention was detected: the export says so
        assert any(("not of gold origin" in r or "mentions not written" in r) for r in report.losses)


@pytest.mark.parametrize("fmt", ["pubtator", "bioc-xml", "bioc-json", "brat", "jsonl"])
def test_several_kb_concepts_on_one_mention(tmp_path: Path, fmt: str) -> None:
    """A curator's link to several KB concepts arrives as `A|B|C`; each format writes it its own way
    and reads it back as the three concepts."""
    base = document_from_title_abstract("12", "Colorectal, endometrial, and ovarian cancers.", "")
    mention = Mention(0, 44, base.text[:44], "Disease", "D015179|D016889|D010051")
    out = tmp_path / ("out.txt" if fmt == "pubtator" else "out")
    write_corpus([Document(base.doc_id, base.passages, (mention,))], out, fmt)
    (back,) = read_corpus(out, fmt)
    assert back.mentions[0].concept_ids == ("D015179", "D016889", "D010051")
    if fmt == "pubtator":
        assert "\tD015179|D016889|D010051\n" in out.read_text()
    if fmt == "brat":
        lines = (out / "12.ann").read_text().splitlines()
        assert [line.split("\t")[1] for line in lines if line.startswith("N")] == [
            "Reference T1 MESH:D015179",
            "Reference T1 MESH:D016889",
            "Reference T1 MESH:D010051",
        ]
    if fmt == "bioc-json":
        annotation = json.loads(out.read_text())["documents"][0]["passages"][0]["annotations"][0]
        assert annotation["infons"]["identifier"] == "D015179|D016889|D010051"


# --- JSONL and the store keep every new field ----------------------------------------------------


def _json_values():
    from hypothesis import strategies as st

    scalars = st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=8)
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
        max_leaves=6,
    )


def _typed_documents():
    from hypothesis import strategies as st

    infons = st.dictionaries(st.text(max_size=6), _json_values(), max_size=3)

    @st.composite
    def build(draw):
        text = draw(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30))
        passages = (Passage(0, text, draw(st.sampled_from(["", "title"])), draw(infons)),)
        arguments = tuple(draw(st.lists(st.text(max_size=4), max_size=3)))
        roles = tuple(draw(st.text(max_size=4)) for _ in arguments) if draw(st.booleans()) else ()
        # a doc_id any export can write (core.limits): no control characters, no surrounding spaces
        doc_id = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=8)
        return Document(
            draw(doc_id.map(str.strip).filter(bool)),
            passages,
            (Mention(0, len(text), text, "T", "A|B", "m1", infons=draw(infons)),),
            (Relation(draw(st.text(max_size=4)), arguments, "r1", roles, draw(infons)),),
            draw(infons),
            draw(infons),
        )

    return build()


def test_jsonl_and_store_keep_typed_infons_roles_and_collections(tmp_path: Path) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from core.formats import jsonl

    counter = iter(range(10**6))

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.lists(_typed_documents(), min_size=1, max_size=3, unique_by=lambda d: d.doc_id))
    def check(docs: list[Document]) -> None:
        folder = tmp_path / str(next(counter))
        folder.mkdir()
        jsonl.write(docs, folder / "d.jsonl")
        assert [_full(d) for d in jsonl.read(folder / "d.jsonl")] == [_full(d) for d in docs]
        with Project.create(folder / "p") as project:
            project.documents.import_documents(docs)
            assert [_full(d) for d in project.documents.documents()] == [_full(d) for d in docs]

    check()
