"""Crafted bad files, one builder each: `CASES[name](folder) -> (path, format)` writes the file (or
brat / UMLS folder) into `folder` and says which format to import it as. `WHERE[name]` is the line or
element the error must name ("line 7", "document 7"), or None when the problem is the file as a whole.

The cases are the kinds of damage found in issue 11's probe and in real downloads: files cut short, wrong
encodings, binary data, offsets far beyond the text, deep nesting, entity tricks, bad ids, wrong formats,
damaged gzip. bench.fuzz.bad_inputs imports each into a project and counts the clear errors.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path

Builder = Callable[[Path], tuple[Path, str]]

CASES: dict[str, Builder] = {}
WHERE: dict[str, str | None] = {}

_PUBTATOR = (
    "1|t|Breast cancer\n1|a|A study of breast cancer.\n1\t0\t13\tBreast cancer\tDisease\tD001943\n\n"
    "2|t|Colon cancer\n2|a|Another study.\n2\t0\t12\tColon cancer\tDisease\tD003110\n"
)
_MEDIC = "".join(f"MESH:D{n:06d}||Disease number {n}|Synonym {n}\n" for n in range(50))
_RRF = "".join(
    f"C{n:07d}|ENG|P|L0000001|PF|S0000001|Y|A00000001||M0000001|D000001|MSH|MH|D000001|name {n}|0|N|256|\n"
    for n in range(1, 20)
)
_OBO = "format-version: 1.2\n\n[Term]\nid: HP:0000001\nname: All\n\n[Term]\nid: HP:0000002\nname: Other\n"
_CTD_HEADER = (
    "# Fields:\n# DiseaseName\tDiseaseID\tAltDiseaseIDs\tDefinition\tParentIDs\tTreeNumbers\tParentTreeNumbers"
    "\tSynonyms\tSlimMappings\n"
)
_CTD_ROW = "Breast Neoplasms\tMESH:D001943\t\t\t\tC04.588.180\t\tBreast Cancer\tCancer\n"
_MESH = (
    '<?xml version="1.0"?>\n<DescriptorRecordSet>\n<DescriptorRecord>\n<DescriptorUI>D000001</DescriptorUI>\n'
    "<DescriptorName><String>Calcimycin</String></DescriptorName>\n</DescriptorRecord>\n"
)


def _case(name: str, file: str, fmt: str, data: str | bytes, where: str | None) -> None:
    """A case that is one file."""

    def build(folder: Path) -> tuple[Path, str]:
        path = folder / file
        path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
        return path, fmt

    CASES[name] = build
    WHERE[name] = where


def _brat(name: str, text: str, ann: str, where: str | None, stem: str = "doc") -> None:
    def build(folder: Path) -> tuple[Path, str]:
        brat = folder / "brat"
        brat.mkdir()
        (brat / f"{stem}.txt").write_text(text, encoding="utf-8")
        (brat / f"{stem}.ann").write_text(ann, encoding="utf-8")
        return brat, "brat"

    CASES[name] = build
    WHERE[name] = where


def _bioc_xml(body: str, doctype: str = "") -> str:
    return f'<?xml version="1.0"?>\n{doctype}<collection><source>x</source>\n{body}\n</collection>\n'


def _xml_document(offset: str = "0", text: str = "Breast cancer", doc_id: str = "7", extra: str = "") -> str:
    return (
        f"<document><id>{doc_id}</id><passage><offset>{offset}</offset><text>{text}</text>{extra}"
        "</passage></document>"
    )


def _bioc_json(document: dict) -> str:
    return json.dumps({"source": "x", "documents": [document]})


def _json_document(**changes) -> dict:
    document = {
        "id": "7",
        "infons": {},
        "passages": [{"offset": 0, "text": "Breast cancer", "annotations": []}],
    }
    document.update(changes)
    return document


def _jsonl(**changes) -> str:
    line = {"doc_id": "7", "passages": [{"offset": 0, "text": "Breast cancer"}]}
    line.update(changes)
    return json.dumps(line) + "\n"


def _cut_gzip(data: bytes) -> bytes:
    compressed = gzip.compress(data)
    return compressed[: len(compressed) // 2]


_LAUGHS = "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">\n' for i in range(1, 10))

# --- PubTator -----------------------------------------------------------------------------------
_case(
    "pubtator-cut-in-id", "cut.pubtator", "pubtator", _PUBTATOR[: _PUBTATOR.rindex("D003110") + 4], "line 7"
)
_case(
    "pubtator-cut-in-abstract",
    "cut.pubtator",
    "pubtator",
    _PUBTATOR[: _PUBTATOR.index("Another") + 4],
    "line 6",
)
_case(
    "pubtator-cut-in-title", "cut.pubtator", "pubtator", _PUBTATOR[: _PUBTATOR.index("Colon") + 3], "line 5"
)
_case(
    "pubtator-offsets-past-text", "o.pubtator", "pubtator", _PUBTATOR.replace("0\t12\t", "0\t99\t"), "line 7"
)
_case(
    "pubtator-text-mismatch",
    "m.pubtator",
    "pubtator",
    _PUBTATOR.replace("\tColon cancer\tD", "\tColon cancre\tD"),
    "line 7",
)
_case(
    "pubtator-non-integer-offset",
    "n.pubtator",
    "pubtator",
    _PUBTATOR.replace("0\t12\t", "0\t1.2\t"),
    "line 7",
)
_case(
    "pubtator-huge-offset",
    "h.pubtator",
    "pubtator",
    _PUBTATOR.replace("0\t12\t", "0\t999999999999\t"),
    "line 7",
)
_case(
    "pubtator-eight-fields",
    "f.pubtator",
    "pubtator",
    _PUBTATOR.replace("D003110\n", "D003110\tx\ty\n"),
    "line 7",
)
_case(
    "pubtator-annotation-of-other-pmid",
    "a.pubtator",
    "pubtator",
    _PUBTATOR.replace("2\t0\t12", "3\t0\t12"),
    "line 7",
)
_case(
    "pubtator-control-character-pmid", "c.pubtator", "pubtator", _PUBTATOR.replace("2|", "2\x01|"), "line 5"
)
_case(
    "pubtator-control-character-id",
    "i.pubtator",
    "pubtator",
    _PUBTATOR.replace("D003110", "D00\x7f3110"),
    "line 7",
)
_case(
    "pubtator-latin1",
    "l.pubtator",
    "pubtator",
    _PUBTATOR.replace("Another", "Anoth\xe9r").encode("latin-1"),
    "line 6",
)
_case("pubtator-utf16", "u.pubtator", "pubtator", _PUBTATOR.encode("utf-16"), None)
_case("pubtator-binary", "b.pubtator", "pubtator", bytes(range(256)) * 8, None)
_case("pubtator-empty", "e.pubtator", "pubtator", b"", None)
_case("pubtator-blank-lines-only", "blank.pubtator", "pubtator", "\n\n  \n", None)
_case("pubtator-gzip-truncated", "t.pubtator.gz", "pubtator", _cut_gzip(_PUBTATOR.encode() * 50), None)
_case("pubtator-given-bioc-xml", "x.pubtator", "pubtator", _bioc_xml(_xml_document()), None)

# --- JSONL --------------------------------------------------------------------------------------
_case(
    "jsonl-offset-500-million",
    "far.jsonl",
    "jsonl",
    _jsonl(passages=[{"offset": 500_000_000, "text": "x"}]),
    "line 1",
)
_case(
    "jsonl-offset-1e12", "huge.jsonl", "jsonl", _jsonl(passages=[{"offset": 10**12, "text": "x"}]), "line 1"
)
_case("jsonl-negative-offset", "neg.jsonl", "jsonl", _jsonl(passages=[{"offset": -4, "text": "x"}]), "line 1")
_case(
    "jsonl-fractional-offset",
    "frac.jsonl",
    "jsonl",
    _jsonl(passages=[{"offset": 1.5, "text": "x"}]),
    "line 1",
)
_case("jsonl-empty-doc-id", "empty-id.jsonl", "jsonl", _jsonl(doc_id=""), "line 1")
_case("jsonl-control-character-doc-id", "ctl-id.jsonl", "jsonl", _jsonl(doc_id="7\x1b[31m"), "line 1")
_case("jsonl-long-doc-id", "long-id.jsonl", "jsonl", _jsonl(doc_id="7" * 5000), "line 1")
_case(
    "jsonl-nested-100k",
    "deep.jsonl",
    "jsonl",
    '{"doc_id": "7", "passages": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
    "line 1",
)
_case("jsonl-invalid-json", "bad.jsonl", "jsonl", _jsonl() + '{"doc_id": "8", "passages": [\n', "line 2")
_case("jsonl-passages-not-a-list", "pl.jsonl", "jsonl", _jsonl(passages={"offset": 0}), "line 1")
_case("jsonl-mention-past-text", "mp.jsonl", "jsonl", _jsonl(mentions=[{"start": 5, "end": 500}]), "line 1")
_case("jsonl-text-not-a-string", "ts.jsonl", "jsonl", _jsonl(passages=[{"offset": 0, "text": 12}]), "line 1")
_case("jsonl-cut-mid-object", "cut.jsonl", "jsonl", _jsonl() + _jsonl(doc_id="8")[:30], "line 2")

# --- BioC XML -----------------------------------------------------------------------------------
_case("bioc-xml-offset-100-million", "far.xml", "bioc-xml", _bioc_xml(_xml_document("100000000")), "line 3")
_case("bioc-xml-fractional-offset", "frac.xml", "bioc-xml", _bioc_xml(_xml_document("1.5")), "line 3")
_case("bioc-xml-negative-offset", "neg.xml", "bioc-xml", _bioc_xml(_xml_document("-3")), "line 3")
_case(
    "bioc-xml-undefined-entity",
    "entity.xml",
    "bioc-xml",
    _bioc_xml(_xml_document(text="a &foo; b")),
    "line 3",
)
_case(
    "bioc-xml-external-entity",
    "xxe.xml",
    "bioc-xml",
    _bioc_xml(_xml_document(text="&x;"), '<!DOCTYPE collection [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'),
    "line 4",
)
_case(
    "bioc-xml-billion-laughs",
    "laughs.xml",
    "bioc-xml",
    _bioc_xml(_xml_document(text="&l9;"), f'<!DOCTYPE collection [\n<!ENTITY l0 "lol">\n{_LAUGHS}]>\n'),
    None,
)
_case("bioc-xml-deep-nesting", "deep.xml", "bioc-xml", _bioc_xml("<a>" * 200_000 + "</a>" * 200_000), None)
_case("bioc-xml-truncated", "cut.xml", "bioc-xml", _bioc_xml(_xml_document())[:-40], None)
_case("bioc-xml-no-id", "noid.xml", "bioc-xml", _bioc_xml(_xml_document(doc_id="")), "line 3")
_case(
    "bioc-xml-location-past-text",
    "loc.xml",
    "bioc-xml",
    _bioc_xml(
        _xml_document(
            extra='<annotation id="1"><location offset="5" length="900"/><text>x</text></annotation>'
        )
    ),
    "document 7",
)
_case(
    "bioc-xml-control-character", "ctl.xml", "bioc-xml", _bioc_xml(_xml_document(text="a &#1; b")), "line 3"
)
# refused before parsing with "looks like pubmed-xml: try --format pubmed-xml" (the file as a whole)
_case("bioc-xml-pubmed-root", "pubmed.xml", "bioc-xml", '<?xml version="1.0"?>\n<PubmedArticleSet/>\n', None)

# --- PubMed citation XML ------------------------------------------------------------------------
_PUBMED_HEAD = '<?xml version="1.0"?>\n<PubmedArticleSet>\n'
_PUBMED_ARTICLE = (
    "<PubmedArticle><MedlineCitation><PMID>{pmid}</PMID><Article><ArticleTitle>{title}</ArticleTitle>"
    "</Article></MedlineCitation></PubmedArticle>\n"
)
_case(
    "pubmed-xml-no-pmid",
    "nopmid.xml",
    "pubmed-xml",
    _PUBMED_HEAD
    + _PUBMED_ARTICLE.format(pmid="1", title="A.")
    + _PUBMED_ARTICLE.format(pmid="", title="B.")
    + "</PubmedArticleSet>\n",
    "line 4",
)
_case(
    "pubmed-xml-cut-short",
    "cut.xml",
    "pubmed-xml",
    _PUBMED_HEAD
    + _PUBMED_ARTICLE.format(pmid="1", title="A.")
    + _PUBMED_ARTICLE.format(pmid="2", title="B")[:90],
    "line 4",
)
_case(
    "pubmed-xml-external-entity",
    "entity.xml",
    "pubmed-xml",
    '<?xml version="1.0"?>\n<!DOCTYPE PubmedArticleSet [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'
    "<PubmedArticleSet>\n" + _PUBMED_ARTICLE.format(pmid="1", title="&x;") + "</PubmedArticleSet>\n",
    "line 4",
)

# --- BioC JSON ----------------------------------------------------------------------------------
_case("bioc-json-nested-100k", "deep.json", "bioc-json", "[" * 100_000 + "]" * 100_000, None)
_case(
    "bioc-json-offset-100-million",
    "far.json",
    "bioc-json",
    _bioc_json(_json_document(passages=[{"offset": 10**8, "text": "x"}])),
    "document 7",
)
_case(
    "bioc-json-fractional-offset",
    "frac.json",
    "bioc-json",
    _bioc_json(_json_document(passages=[{"offset": 1.5, "text": "x"}])),
    "document 7",
)
_case(
    "bioc-json-infons-a-number",
    "infons.json",
    "bioc-json",
    _bioc_json(_json_document(infons=100)),
    "documents[0]",
)
_case(
    "bioc-json-annotations-not-a-list",
    "ann.json",
    "bioc-json",
    _bioc_json(_json_document(passages=[{"offset": 0, "text": "x", "annotations": 5}])),
    "documents[0]",
)
_case(
    "bioc-json-text-a-list",
    "tl.json",
    "bioc-json",
    _bioc_json(_json_document(passages=[{"offset": 0, "text": ["Breast cancer"]}])),
    "document 7",
)
_case("bioc-json-empty-id", "noid.json", "bioc-json", _bioc_json(_json_document(id="")), "document")
_case(
    "bioc-json-invalid-json",
    "bad.json",
    "bioc-json",
    '{"documents": [\n{"id": "7",\n"passages": [}\n',
    "line 3",
)
_case("bioc-json-not-bioc", "other.json", "bioc-json", '{"hello": "world"}', None)

# --- brat ---------------------------------------------------------------------------------------
_TEXT = "Breast cancer and colon cancer.\n"
_brat("brat-ann-cut-in-id", _TEXT, "T1\tDisease 0 13\tBreast cancer\nN1\tReference T1 MESH:D00", "line 2")
_brat(
    "brat-ann-cut-in-text", _TEXT, "T1\tDisease 0 13\tBreast cancer\nT2\tDisease 18 30\tcolon can", "line 2"
)
_brat("brat-offsets-past-text", _TEXT, "T1\tDisease 0 130\tBreast cancer\n", "line 1")
_brat("brat-unknown-line", _TEXT, "T1\tDisease 0 13\tBreast cancer\nX1\tsomething\n", "line 2")
_brat("brat-normalisation-to-unknown", _TEXT, "N1\tReference T9 MESH:D001943\tBreast\n", "line 1")
_brat(
    "brat-control-character-id",
    _TEXT,
    "T1\tDisease 0 13\tBreast cancer\nN1\tReference T1 MESH:D00\x011943\tx\n",
    "line 2",
)
_brat("brat-control-character-file-name", _TEXT, "T1\tDisease 0 13\tBreast cancer\n", None, stem="doc\x07")

# --- plain text ---------------------------------------------------------------------------------
_case("text-utf16", "abstract.txt", "text", "Breast cancer in two sisters.".encode("utf-16"), None)
_case("text-binary", "abstract.txt", "text", bytes(range(256)) * 4, None)
_case("text-whitespace-only", "abstract.txt", "text", "  \n\n \t\n", None)

# --- vocabularies -------------------------------------------------------------------------------
_case("medic-cut-mid-line", "medic.txt", "medic", _MEDIC[: _MEDIC.index("Disease number 28") + 10], "line 29")
_case(
    "medic-tab", "medic.txt", "medic", _MEDIC.replace("||Disease number 7|", "||Disease\tnumber 7|"), "line 8"
)
_case("medic-no-separator", "medic.txt", "medic", _MEDIC.replace("MESH:D000007||", "MESH:D000007|"), "line 8")
_case(
    "medic-control-character-id",
    "medic.txt",
    "medic",
    _MEDIC.replace("MESH:D000007", "MESH:D00\x010007"),
    "line 8",
)
_case("ctd-cut-mid-line", "CTD_diseases.tsv", "ctd", _CTD_HEADER + _CTD_ROW * 3 + _CTD_ROW[:30], "line 6")
_case(
    "ctd-missing-column",
    "CTD_diseases.tsv",
    "ctd",
    _CTD_HEADER + _CTD_ROW + "Colon\tMESH:D003110\n",
    "line 4",
)
_case(
    "ctd-bad-curie",
    "CTD_diseases.tsv",
    "ctd",
    _CTD_HEADER + _CTD_ROW.replace("MESH:D001943", "D001943"),
    "line 3",
)
_case("tsv-cut-mid-line", "terms.tsv", "tsv", "D000001\tCalcimycin\nD000002\tTemefos\nD000003\tTem", "line 3")
_case("tsv-id-with-space", "terms.tsv", "tsv", "D000001\tCalcimycin\nD 000002\tTemefos\n", "line 2")
_case("tsv-long-id", "terms.tsv", "tsv", "D000001\tCalcimycin\n" + "D" * 300 + "\tTemefos\n", "line 2")
_case("obo-utf16", "hp.obo", "obo", _OBO.encode("utf-16"), "line 1")
_case("obo-binary", "hp.obo", "obo", _OBO.encode() + bytes(range(256)), "line 10")
_case("obo-cut-mid-line", "hp.obo", "obo", _OBO[:-3], "line 9")
_case("obo-syntax-error", "hp.obo", "obo", _OBO.replace("name: Other", "name Other"), "line 9")
_case("obo-control-character-id", "hp.obo", "obo", _OBO.replace("id: HP:0000002", "id:EE\x1c\x1c"), None)
_case(
    "obo-id-that-panics-fastobo",
    "hp.obo",
    "obo",
    _OBO.replace("id: HP:0000002\nname: Other", "id:EE\x1c\x1c\x1c\n!name: nll"),
    "line 8",
)
_case("umls-bad-cui", "MRCONSO.RRF", "umls-rrf", _RRF.replace("C0000007|", "CX000007|"), "line 7")
_case(
    "umls-wrong-field-count",
    "MRCONSO.RRF",
    "umls-rrf",
    _RRF.replace("|name 7|0|N|256|", "|name 7|0|N|"),
    "line 7",
)
_case("umls-cut-mid-line", "MRCONSO.RRF", "umls-rrf", _RRF[:-20], "line 19")
_case("mesh-xml-truncated", "desc.xml", "mesh-xml", _MESH, "line 7")
_case("mesh-xml-wrong-root", "desc.xml", "mesh-xml", '<?xml version="1.0"?>\n<QualifierRecordSet/>\n', None)
_case(
    "mesh-xml-no-ui",
    "desc.xml",
    "mesh-xml",
    _MESH.replace("<DescriptorUI>D000001</DescriptorUI>\n", "") + "</DescriptorRecordSet>\n",
    "line 3",
)
_case("kb-gzip-damaged", "medic.txt.gz", "medic", _cut_gzip(_MEDIC.encode()), None)
_case("kb-given-the-wrong-format", "medic.txt", "ctd", _MEDIC, None)
