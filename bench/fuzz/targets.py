"""What the reader fuzzers (the hypothesis property tests and `python -m bench.fuzz.readers`)
feed and run: one small valid file per corpus and vocabulary format, a way to write any bytes as an input
of a format, and a run of the reader to its end.

The contract they check: on any bytes a reader either reads the file or raises a `CuralinkError` (an
InputError naming the file and the problem); nothing else escapes (no RecursionError, TypeError,
MemoryError, UnicodeError), nothing hangs, and what is read stays within what the file holds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

CORPUS_FORMATS = ("pubtator", "bioc-xml", "bioc-json", "brat", "jsonl", "text", "pubmed-xml", "jats")
KB_FORMATS = ("mesh-xml", "umls-rrf", "ctd", "medic", "obo", "tsv")

_PUBTATOR = (
    "1000001|t|Acute kidney injury and seizures after methotrexate.\n"
    "1000001|a|A woman with breast cancer developed acute kidney injury|seizures.\n"
    "1000001\t0\t19\tAcute kidney injury\tDisease\tD058186\n"
    "1000001\t24\t32\tseizures\tDisease\tD012640|D004827\n"
    "1000001\t39\t51\tmethotrexate\tChemical\tD008727\n"
    "1000001\tCID\tD008727\tD058186\n"
    "\n"
    "1000002|t|Paragraph one.\n"
    "1000002|a|Colon cancer.\n"
    "1000002\t15\t27\tColon cancer\tDisease\tD003110\n"
    "1000002|t|Paragraph two.\n"
    "1000002|a|\n"
)
_BIOC_DOCUMENT = {
    "id": "3000001",
    "infons": {"year": "2024"},
    "passages": [
        {
            "offset": 0,
            "infons": {"type": "title"},
            "text": "Cystic fibrosis in two siblings.",
            "annotations": [
                {
                    "id": "1",
                    "infons": {"type": "Disease", "identifier": "MESH:D003550"},
                    "text": "Cystic fibrosis",
                    "locations": [{"offset": 0, "length": 15}],
                }
            ],
            "relations": [],
        },
        {
            "offset": 33,
            "infons": {"type": "abstract"},
            "text": "Both had pancreatic insufficiency.",
            "annotations": [
                {
                    "id": "2",
                    "infons": {"type": "Disease", "identifier": "MESH:D010188"},
                    "text": "pancreatic insufficiency",
                    "locations": [{"offset": 42, "length": 24}],
                }
            ],
            "relations": [],
        },
    ],
    "relations": [{"id": "R1", "infons": {"type": "Association"}, "nodes": [{"refid": "1", "role": "a"}]}],
}
_BIOC_XML = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE collection [<!ENTITY alpha "&#945;">]>
<collection><source>PubTator</source><date>2024</date><key>k</key><infon key="x">y</infon>
<document><id>3000001</id><infon key="year">2024</infon>
<passage><infon key="type">title</infon><offset>0</offset><text>Cystic fibrosis &amp; &alpha;.</text>
<annotation id="1"><infon key="type">Disease</infon><infon key="identifier">MESH:D003550</infon>
<location offset="0" length="15"/><text>Cystic fibrosis</text></annotation></passage>
<passage><infon key="type">abstract</infon><offset>22</offset><text>Pancreatic insufficiency.</text>
<sentence><offset>22</offset><text>Pancreatic insufficiency.</text></sentence>
<annotation id="2"><infon key="type">Disease</infon><location offset="22" length="10"/>
<location offset="33" length="13"/><text>Pancreatic insufficiency</text></annotation></passage>
<relation id="R1"><infon key="type">Association</infon><node refid="1" role="a"/><node refid="2" role="b"/>
</relation></document>
</collection>
"""
_BRAT_TEXT = "Breast cancer and colon cancer in one family.\nA second line.\n"
_BRAT_ANN = (
    "T1\tDisease 0 13\tBreast cancer\n"
    "T2\tDisease 18 23;24 30\tcolon cancer\n"
    "N1\tReference T1 MESH:D001943\tBreast Neoplasms\n"
    "R1\tRelated Arg1:T1 Arg2:T2\n"
    "E1\tOccurs:T1 Theme:T2\n"
    "*\tEquiv T1 T2\n"
    "A1\tNegated T2\n"
    "#1\tAnnotatorNotes T1\ta note\n"
)
_JSONL = {
    "doc_id": "1",
    "passages": [{"offset": 0, "text": "Breast cancer.", "kind": "title"}, {"offset": 15, "text": "Colon."}],
    "mentions": [
        {"start": 0, "end": 13, "text": "Breast cancer", "concept_id": "D001943", "infons": {"a": [1]}}
    ],
    "relations": [{"type": "R", "arguments": ["a", "b"], "roles": ["x", "y"]}],
    "metadata": {"year": 2024},
}
_MESH_XML = """<?xml version="1.0"?>
<!DOCTYPE DescriptorRecordSet SYSTEM "desc2015.dtd">
<DescriptorRecordSet LanguageCode = "eng">
<DescriptorRecord DescriptorClass = "1">
 <DescriptorUI>D000001</DescriptorUI>
 <DescriptorName><String>Calcimycin</String></DescriptorName>
 <TreeNumberList><TreeNumber>D03.633.100</TreeNumber></TreeNumberList>
 <ConceptList><Concept PreferredConceptYN="Y"><ScopeNote>An ionophore.</ScopeNote>
  <TermList><Term IsPermutedTermYN="N"><String>A-23187</String></Term></TermList></Concept></ConceptList>
</DescriptorRecord>
<DescriptorRecord DescriptorClass = "1">
 <DescriptorUI>D000002</DescriptorUI>
 <DescriptorName><String>Temefos</String></DescriptorName>
</DescriptorRecord>
</DescriptorRecordSet>
"""
_MRCONSO = "".join(
    f"C000000{n}|ENG|{'P' if k == 0 else 'S'}|L000000{n}|PF|S000000{n}|Y|A00000{n}{k}||M000000{n}|D00000{n}|MSH|MH|"
    f"D00000{n}|{name}|0|N|256|\n"
    for n, names in ((1, ("Calcimycin", "A-23187")), (2, ("Temefos",)), (5, ("Albumin",)))
    for k, name in enumerate(names)
)
_CTD = (
    "# Fields:\n"
    "# DiseaseName\tDiseaseID\tAltDiseaseIDs\tDefinition\tParentIDs\tTreeNumbers\tParentTreeNumbers\tSynonyms"
    "\tSlimMappings\n"
    "Breast Neoplasms\tMESH:D001943\tOMIM:114480\tTumors of the breast.\tMESH:D009371\tC04.588.180\tC04.588"
    "\tBreast Cancer|Breast Tumor\tCancer\n"
    "Colonic Neoplasms\tMESH:D003110\t\t\tMESH:D015179\tC04.588.274\tC04.588\tColon Cancer\tCancer\n"
)
_MEDIC = (
    "C535575|275355||Carcinoma, squamous cell of head and neck|HNSCC\n"
    "D003924|125853||Diabetes Mellitus, Type 2|NIDDM\n"
    "D003924|125853||Type 2 diabetes\n"
    "400045||46,XX Sex Reversal 1|SRXX1\n"
)
_OBO = """format-version: 1.2
ontology: hp

[Term]
id: HP:0000001
name: All

[Term]
id: HP:0000118
name: Phenotypic abnormality
def: "A phenotypic abnormality." [HPO:probinson]
synonym: "Organ abnormality" EXACT []
synonym: "Broad thing" BROAD []
alt_id: HP:0000005
is_a: HP:0000001 ! All

[Term]
id: HP:0000002
name: old
is_obsolete: true

[Typedef]
id: part_of
name: part of
"""
_TSV = "mesh_id\tmesh_name\tsynonyms\ttree_number\nD000001\tCalcimycin\tA-23187|A23187\tD03.633\nD000002\tTemefos\t\tD02\n"

_PUBMED = (
    '<?xml version="1.0"?>\n<PubmedArticleSet>\n<PubmedArticle><MedlineCitation><PMID Version="1">101</PMID>'
    "<Article><Journal><JournalIssue><PubDate><Year>2001</Year></PubDate></JournalIssue></Journal>"
    '<ArticleTitle>Fever in <i>sheep</i>.</ArticleTitle><Abstract><AbstractText Label="AIM">To look.'
    '</AbstractText><AbstractText Label="RESULTS">H<sub>2</sub>O &#946;.</AbstractText></Abstract></Article>'
    '<MeshHeadingList><MeshHeading><DescriptorName UI="D1" MajorTopicYN="Y">Fever</DescriptorName>'
    "</MeshHeading></MeshHeadingList></MedlineCitation></PubmedArticle>\n"
    "<DeleteCitation><PMID>7</PMID></DeleteCitation>\n</PubmedArticleSet>\n"
)
_JATS = (
    '<article><front><article-meta><article-id pub-id-type="pmc">42</article-id><title-group>'
    "<article-title>Rift <italic>Valley</italic> fever</article-title></title-group><abstract><sec><title>Aim"
    '</title><p>To look.</p></sec></abstract></article-meta></front><body><p>Intro.</p><sec sec-type="methods">'
    '<title>Methods</title><p>Sheep <xref ref-type="bibr">[1]</xref>.<fig><label>Figure 1</label><caption>'
    "<title>Map.</title><p>Sites.</p></caption></fig></p><table-wrap><caption><p>Counts.</p></caption><table>"
    "<tr><td>1</td></tr></table></table-wrap></sec></body></article>\n"
)

# format -> (file name, seed bytes); brat and umls-rrf inputs are folders holding that file
SEEDS: dict[str, tuple[str, bytes]] = {
    "pubtator": ("corpus.pubtator", _PUBTATOR.encode()),
    "bioc-xml": ("corpus.xml", _BIOC_XML.encode()),
    "bioc-json": ("corpus.json", json.dumps({"source": "s", "documents": [_BIOC_DOCUMENT]}).encode()),
    "brat": ("doc.ann", _BRAT_ANN.encode()),
    "jsonl": ("corpus.jsonl", (json.dumps(_JSONL) + "\n").encode()),
    "text": ("abstract.txt", b"Breast cancer.\n\nA second paragraph\nwith two lines.\n"),
    "pubmed-xml": ("pubmed.xml", _PUBMED.encode()),
    "jats": ("article.nxml", _JATS.encode()),
    "mesh-xml": ("desc.xml", _MESH_XML.encode()),
    "umls-rrf": ("MRCONSO.RRF", _MRCONSO.encode()),
    "ctd": ("CTD_diseases.tsv", _CTD.encode()),
    "medic": ("medic.txt", _MEDIC.encode()),
    "obo": ("hp.obo", _OBO.encode()),
    "tsv": ("terms.tsv", _TSV.encode()),
}


@dataclass(frozen=True)
class ReadResult:
    """What a reader made of a file: items read, characters of text laid out, or the error it gave."""

    items: int = 0
    characters: int = 0
    error: str = ""


def write_input(folder: Path, fmt: str, data: bytes) -> Path:
    """Write `data` as an input of `fmt` in `folder` (an empty folder); returns the path to read.
    brat: `data` is the `.ann` next to a fixed `.txt`; umls-rrf: `data` is the MRCONSO.RRF."""
    name, _ = SEEDS[fmt]
    (folder / name).write_bytes(data)
    if fmt == "brat":
        (folder / "doc.txt").write_bytes(_BRAT_TEXT.encode())
        return folder
    return folder / name


def read_all(path: Path, fmt: str, *, lenient: bool = False, check_format: bool = True) -> ReadResult:
    """Run the reader of `fmt` over `path` to its end; a CuralinkError becomes `ReadResult.error`, any
    other exception propagates (that is a defect). `lenient` reads a corpus with a FormatReport."""
    from core.errors import CuralinkError
    from core.formats import FormatReport, read_corpus
    from core.kb import load_kb

    items = characters = 0
    try:
        if fmt in CORPUS_FORMATS:
            report = FormatReport() if lenient else None
            for document in read_corpus(path, fmt, report=report):
                items += 1
                characters += len(document.text)
        else:
            for concept in load_kb(path, fmt, check_format=check_format):
                items += 1
                characters += sum(len(name) for name in concept.names)
    except CuralinkError as error:
        return ReadResult(items, characters, str(error).splitlines()[0])
    return ReadResult(items, characters)


def reader(fmt: str) -> Callable[[Path], ReadResult]:
    """`read_all` for one format, for fuzzers that take a one-argument target."""
    return lambda path: read_all(path, fmt)
