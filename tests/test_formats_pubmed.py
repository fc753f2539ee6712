"""PubMed citation XML and JATS full text: real files checked against values read by eye from them,
structured abstracts, DeleteCitation, gzip, broken and hostile XML, a generated multi-citation shard,
and the import path (documents without mentions, metadata kept)."""

from __future__ import annotations

import gzip
import logging
import os
from pathlib import Path

import pytest

from app.cli import EXIT_ERROR, main
from bench.synthetic.pubmed import write_synthetic_pubmed
from core.errors import InputError
from core.formats import FormatReport, pubmed_xml, read_corpus
from core.store import Project

REALWORLD = (
    Path(os.environ.get("CURALINK_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
    / "realworld"
    / "pubmed"
)

HEAD = (
    '<?xml version="1.0" ?>\n<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January '
    '2019//EN" "https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_190101.dtd">\n<PubmedArticleSet>\n'
)


def _citation(pmid: str, title: str, *abstract: str, year: str = "2001") -> str:
    texts = "".join(
        f"<AbstractText{a}</AbstractText>" if a.startswith(" ") else f"<AbstractText>{a}</AbstractText>"
        for a in abstract
    )
    return (
        f'<PubmedArticle><MedlineCitation><PMID Version="1">{pmid}</PMID><Article><Journal><JournalIssue>'
        f"<PubDate><Year>{year}</Year></PubDate></JournalIssue><Title>J</Title></Journal>"
        f"<ArticleTitle>{title}</ArticleTitle>"
        + (f"<Abstract>{texts}</Abstract>" if abstract else "")
        + "</Article></MedlineCitation></PubmedArticle>\n"
    )


def _write(path: Path, body: str, tail: str = "</PubmedArticleSet>\n") -> Path:
    data = (HEAD + body + tail).encode("utf-8")
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return path


@pytest.fixture(scope="module")
def realworld() -> Path:
    if not REALWORLD.is_dir():
        pytest.skip(f"{REALWORLD} not found (set CURALINK_SHARED_DATA)")
    return REALWORLD


def _offsets_consistent(document) -> None:
    text = document.text
    for passage in document.passages:
        assert text[passage.offset : passage.end] == passage.text


def test_real_pubmed_citation(realworld: Path) -> None:
    (doc,) = read_corpus(realworld / "pubmed-29768149.xml", "pubmed-xml")
    title = "Inhaled Combined Budesonide-Formoterol as Needed in Mild Asthma."
    assert doc.doc_id == "29768149" and doc.title == title and doc.mentions == ()
    assert doc.passages[0].offset == 0 and doc.passages[1].offset == len(title) + 1
    assert [(p.kind, p.infons.get("label")) for p in doc.passages] == [
        ("title", None),
        ("abstract", "BACKGROUND"),
        ("abstract", "METHODS"),
        ("abstract", "RESULTS"),
        ("abstract", "CONCLUSIONS"),
    ]
    # `&#946;`, then `<sub>2</sub>` on an indented new line: markup flattened, indentation one space
    assert doc.passages[1].text == (
        "In patients with mild asthma, as-needed use of an inhaled glucocorticoid plus a fast-acting "
        "\u03b2 2-agonist may be an alternative to conventional treatment strategies."
    )
    assert doc.passages[2].text.startswith("We conducted a 52-week, double-blind trial")
    assert "(200 \u03bcg of budesonide and 6 \u03bcg of formoterol)" in doc.passages[2].text
    assert doc.passages[4].text.endswith("SYGMA 1 ClinicalTrials.gov number, NCT02149199 .).")
    _offsets_consistent(doc)
    meta = doc.metadata
    assert (meta["pmid"], meta["year"], meta["journal"], meta["doi"]) == (
        "29768149",
        2018,
        "The New England journal of medicine",
        "10.1056/NEJMoa1715274",
    )
    mesh = meta["mesh_headings"]
    assert len(mesh) == 23 and mesh[0]["descriptor"] == "Administration, Inhalation"
    asthma = next(h for h in mesh if h["ui"] == "D001249")
    assert asthma == {
        "descriptor": "Asthma",
        "ui": "D001249",
        "major": False,
        "qualifiers": [{"name": "drug therapy", "ui": "Q000188", "major": True}],
    }
    bronchodilators = next(h for h in mesh if h["descriptor"] == "Bronchodilator Agents")
    assert bronchodilators["qualifiers"][0]["name"] == "administration & dosage"
    assert "Randomized Controlled Trial" in meta["publication_types"]


def test_real_jats_articles(realworld: Path) -> None:
    ehp, pntd, pone = (
        next(iter(read_corpus(realworld / name, "jats")))
        for name in ("ehp-116-1694.nxml", "pntd.0002065.nxml", "pone.0046493.nxml")
    )
    assert [d.doc_id for d in (ehp, pntd, pone)] == ["PMC2599765", "PMC3585041", "PMC3460867"]
    assert [d.metadata["pmid"] for d in (ehp, pntd, pone)] == ["19079722", "23469300", "23029536"]
    assert ehp.title == (
        "Dietary Exposure to 2,2\u2032,4,4\u2032-Tetrabromodiphenyl Ether (PBDE-47) Alters Thyroid Status "
        "and Thyroid Hormone\u2013Regulated Gene Transcription in the Pituitary and Brain"
    )
    # a structured abstract: each section's title, then its paragraph
    assert [p.text for p in ehp.passages if p.kind == "abstract_title"] == [
        "Background",
        "Objective",
        "Methods",
        "Results",
        "Conclusions",
    ]
    background = next(p for p in ehp.passages if p.kind == "abstract")
    assert background.infons["section"] == "Background"
    assert background.text.startswith("Polybrominated diphenyl ether (PBDE) flame retardants have been")
    # the body starts with paragraphs outside any section
    first_body = next(p for p in ehp.passages if p.kind == "paragraph")
    assert first_body.text.startswith("Polybrominated diphenyl ethers (PBDEs) are added to plastics")
    assert "Discussion" in [p.text for p in ehp.passages if p.kind == "section_title"]
    assert sum(p.kind == "fig_caption" for p in ehp.passages) == 3  # the three figures of <floats-group>
    # an unstructured abstract and an author summary
    abstracts = [p for p in pntd.passages if p.kind == "abstract"]
    assert abstracts[0].text.startswith("Rift Valley fever (RVF) is endemic in most parts of Africa")
    assert "five districts of Zamb\u00e9zia Province" in abstracts[0].text
    assert abstracts[1].infons == {"abstract_type": "summary"}
    intro = next(p for p in pntd.passages if p.kind == "paragraph")
    assert intro.infons["section"] == "Introduction"
    assert intro.text.startswith(
        "Rift Valley fever (RVF) is a disease caused by a RNA virus of the family Bunyaviridae, genus "
        "Phlebovirus [1]. The disease is of considerable economic importance"
    )
    figure = next(p for p in pntd.passages if p.kind == "fig_caption")
    assert figure.infons["label"] == "Figure 1"
    assert figure.text.startswith("Location of the study areas. Figure 1 shows the map of the Zamb\u00e9zia")
    assert sum(p.kind == "table_caption" for p in pntd.passages) == 5
    methods = next(p for p in pone.passages if p.text == "Materials and Methods")
    assert methods.infons == {"section_type": "materials|methods"}
    for doc in (ehp, pntd, pone):
        assert doc.mentions == ()
        _offsets_consistent(doc)


def test_jats_folder_and_wrong_format(realworld: Path) -> None:
    assert [d.doc_id for d in read_corpus(realworld, "jats")] == ["PMC2599765", "PMC3585041", "PMC3460867"]
    with pytest.raises(InputError, match="given as pubmed-xml, but the file looks like jats"):
        read_corpus(realworld / "pone.0046493.nxml", "pubmed-xml")
    with pytest.raises(InputError, match="not pubmed-xml: the root element is <article>"):
        list(pubmed_xml.read(realworld / "pone.0046493.nxml"))


def test_structured_unstructured_and_gzip(tmp_path: Path) -> None:
    body = _citation(
        "101",
        "Fever in <i>sheep</i>.",
        ' Label="OBJECTIVE" NlmCategory="OBJECTIVE">To look.',
        ' Label="FINDINGS" NlmCategory="RESULTS">We  saw\n\t\tH<sub>2</sub>O.',
    ) + _citation("102", "Title only.", year="1999")
    plain, packed = _write(tmp_path / "a.xml", body), _write(tmp_path / "a.xml.gz", body)
    docs = list(read_corpus(plain, "pubmed-xml"))
    assert [(d.doc_id, d.text) for d in docs] == [
        ("101", "Fever in sheep. To look. We saw H2O."),
        ("102", "Title only."),
    ]
    assert docs[0].passages[2].infons == {"label": "FINDINGS", "nlmcategory": "RESULTS"}
    assert [d.metadata["year"] for d in docs] == [2001, 1999]
    assert [(d.doc_id, d.text) for d in read_corpus(packed, "pubmed-xml")] == [
        (d.doc_id, d.text) for d in docs
    ]


def test_delete_citation(tmp_path: Path, caplog) -> None:
    deletions = (
        '<DeleteCitation>\n<PMID Version="1">202</PMID>\n<PMID Version="1">999</PMID>\n</DeleteCitation>\n'
    )
    path = _write(
        tmp_path / "update.xml.gz",
        _citation("201", "Kept.") + _citation("202", "Deleted later in the same file.") + deletions,
    )
    report = FormatReport()
    with caplog.at_level(logging.WARNING):
        assert [d.doc_id for d in read_corpus(path, "pubmed-xml", report=report)] == ["201"]
    assert [(d.doc_id, d.in_file) for d in report.deletions] == [("202", True), ("999", False)]
    assert report.problem_count == 0 and "deletes 2 citation(s)" in caplog.text
    # without a report (the desk's import) the deleted citation is never read either
    assert [d.doc_id for d in read_corpus(path, "pubmed-xml")] == ["201"]
    # '<DeleteCitation' in a comment: the byte pre-scan holds 203 back; the parse says no such deletion
    tricky = _write(
        tmp_path / "comment.xml",
        _citation("203", "A.") + "<!-- <DeleteCitation><PMID>203</PMID></DeleteCitation> -->\n",
    )
    with pytest.raises(InputError, match="PMID 203: held back as deleted, but no <DeleteCitation>"):
        list(read_corpus(tricky, "pubmed-xml"))


def test_deletion_prescan_across_chunk_boundaries(tmp_path: Path, monkeypatch) -> None:
    path = _write(
        tmp_path / "d.xml",
        _citation("1", "A."),
        '<DeleteCitation><PMID Version="1">11</PMID><PMID Version="1">22222</PMID>'
        '<PMID Version="1">333</PMID></DeleteCitation></PubmedArticleSet>\n',
    )
    for chunk in (3, 7, 16, 17, 29, 1 << 20):
        monkeypatch.setattr(pubmed_xml, "_CHUNK", chunk)
        assert pubmed_xml.prescan_deletions(path) == {"11", "22222", "333"}, chunk


def test_bad_citations_and_broken_xml(tmp_path: Path) -> None:
    no_pmid = _citation("", "No id.").replace('<PMID Version="1"></PMID>', "")
    path = _write(
        tmp_path / "bad.xml",
        _citation("1", "Good.") + no_pmid + _citation("3", "") + _citation("4", "Also good."),
    )
    with pytest.raises(
        InputError, match=r"bad.xml, line 5, PubmedArticle: <PubmedArticle> without a numeric <PMID>"
    ):
        list(read_corpus(path, "pubmed-xml"))
    report = FormatReport()
    assert [d.doc_id for d in read_corpus(path, "pubmed-xml", report=report)] == ["1", "4"]
    assert [str(p) for p in report.problems] == [
        f"{path}, line 5, PubmedArticle: <PubmedArticle> without a numeric <PMID>",
        f"{path}, line 6, PMID 3: citation with neither a title nor an abstract",
    ]
    truncated = _write(
        tmp_path / "cut.xml.gz", _citation("1", "Good.") + _citation("2", "Cut")[:150], tail=""
    )
    with pytest.raises(InputError, match=r"cut.xml.gz, line \d+: malformed XML: "):
        list(read_corpus(truncated, "pubmed-xml"))
    report = FormatReport()
    assert [d.doc_id for d in read_corpus(truncated, "pubmed-xml", report=report)] == ["1"]
    assert "the rest of the file could not be read" in str(report.problems[0])
    # a gzip stream cut short: refused by the DeleteCitation pre-scan, before any citation is read
    packed = gzip.compress((HEAD + _citation("1", "Good.") * 200 + "</PubmedArticleSet>\n").encode())
    (tmp_path / "cut.gz").write_bytes(packed[: len(packed) // 2])
    with pytest.raises(InputError, match=r"cut.gz: damaged or truncated gzip data"):
        list(read_corpus(tmp_path / "cut.gz", "pubmed-xml", report=FormatReport()))


def test_hostile_xml_is_refused(tmp_path: Path) -> None:
    external = tmp_path / "external.xml"
    external.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE PubmedArticleSet [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'
        "<PubmedArticleSet>\n" + _citation("1", "&x;") + "</PubmedArticleSet>\n"
    )
    with pytest.raises(
        InputError, match=r"external.xml, line 4: malformed XML: Entity 'x' not defined .*never loaded"
    ):
        list(read_corpus(external, "pubmed-xml"))
    laughs = "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
    bomb = tmp_path / "bomb.xml"
    bomb.write_text(
        f'<?xml version="1.0"?>\n<!DOCTYPE PubmedArticleSet [<!ENTITY l0 "lol">{laughs}]>\n'
        "<PubmedArticleSet>\n" + _citation("1", "&l9;") + "</PubmedArticleSet>\n"
    )
    with pytest.raises(
        InputError, match=r"bomb.xml, line \d+: malformed XML: entity expansion too large, refused"
    ):
        list(read_corpus(bomb, "pubmed-xml"))


def test_generated_shard_reads_as_written(tmp_path: Path) -> None:
    shard = write_synthetic_pubmed(tmp_path / "shard.xml.gz", citations=60, delete_in_file=2, keep=True)
    report = FormatReport()
    docs = list(read_corpus(shard.path, "pubmed-xml", report=report))
    in_file = set(shard.deleted[:2])
    expected = [c for c in shard.citations if c.pmid not in in_file]
    assert len(docs) == 58 and [d.doc_id for d in docs] == [c.pmid for c in expected]
    for doc, citation in zip(docs, expected, strict=True):
        assert doc.title == citation.title
        assert [(p.infons.get("label", ""), p.text) for p in doc.passages[1:]] == citation.sections
        assert doc.metadata["year"] == citation.year
        assert [h["ui"] for h in doc.metadata["mesh_headings"]] == citation.mesh
        _offsets_consistent(doc)
    assert any(len(c.sections) == 4 for c in expected) and any(len(c.sections) == 1 for c in expected)
    assert {d.doc_id for d in report.deletions if d.in_file} == in_file
    assert len(report.deletions) == 4


def test_import_without_mentions_and_cli(tmp_path: Path, capsys) -> None:
    shard = write_synthetic_pubmed(tmp_path / "shard.xml", citations=12, delete_in_file=1, delete_elsewhere=1)
    with Project.create(tmp_path / "p") as project:
        summary = project.documents.import_documents(read_corpus(shard.path, "pubmed-xml"), source=str(shard.path))
        assert (summary.added, summary.mentions) == (11, 0)
        stored = project.documents.document("30000002")
        assert stored.mentions == () and stored.metadata["mesh_headings"]
        assert stored.passages[0].kind == "title"
    p = ["-p", str(tmp_path / "q")]
    assert main(["init", p[1]]) == 0
    assert main([*p, "corpus", "import", str(shard.path), "--format", "pubmed-xml"]) == 0
    out = capsys.readouterr().out
    assert "11 documents (0 mentions) added" in out
    assert "2 citation(s) deleted by the file (DeleteCitation)" in out and "1 of them were in the file" in out
    assert main([*p, "export", "--format", "pubmed-xml", "--out", str(tmp_path / "x.xml")]) == EXIT_ERROR
    assert "pubmed-xml is read-only" in capsys.readouterr().err
    assert not (tmp_path / "x.xml").exists()


def test_real_files_round_trip_through_jsonl_and_the_store(realworld: Path, tmp_path: Path) -> None:
    from core.formats import write_corpus
    from core.formats.jsonl import to_json

    docs = [
        *read_corpus(realworld / "pubmed-29768149.xml", "pubmed-xml"),
        *read_corpus(realworld, "jats"),
    ]
    write_corpus(docs, tmp_path / "all.jsonl", "jsonl")
    assert [to_json(d) for d in read_corpus(tmp_path / "all.jsonl", "jsonl")] == [to_json(d) for d in docs]
    with Project.create(tmp_path / "p") as project:
        project.documents.import_documents(iter(docs))
        assert [to_json(project.documents.document(d.doc_id)) for d in docs] == [to_json(d) for d in docs]
