"""Issue 11, items 4, 6, 7 and 8 for the corpus readers: a tiny file cannot allocate gigabytes, deep
nesting is an error and not a RecursionError, a file cut short is not imported silently, ids are
checked, and XML errors name the right line. Each case is a crafted file; each error must name the file,
the line or item, and the problem."""

from __future__ import annotations

import json
import re
import tracemalloc
from pathlib import Path

import pytest

from core.errors import InputError
from core.formats import FormatReport, read_corpus
from core.store import Project

PUBTATOR = (
    "1|t|Breast cancer\n"
    "1|a|A study.\n"
    "1\t0\t13\tBreast cancer\tDisease\tD001943\n"
    "\n"
    "2|t|Colon cancer\n"
    "2|a|Another study.\n"
    "2\t0\t12\tColon cancer\tDisease\tD003110\n"
)


def _write(path: Path, data: str | bytes) -> Path:
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


def _read(path: Path, fmt: str, report: FormatReport | None = None) -> list:
    return list(read_corpus(path, fmt, report=report))


def _peak_mb(function) -> float:
    tracemalloc.start()
    try:
        function()
    except InputError:
        pass
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak / 1e6


# --- item 4: offsets bounded by what the file holds ------------------------------------------------


def test_a_passage_offset_far_beyond_the_text_is_refused_without_allocating_it(tmp_path: Path) -> None:
    # 50,000,000: the 478 MB document of the issue, a tenth the size (the old code allocates it)
    path = _write(
        tmp_path / "far.jsonl", '{"doc_id": "1", "passages": [{"offset": 50000000, "text": "x"}]}\n'
    )
    with pytest.raises(InputError, match=r"far\.jsonl, line 1, document 1: passage offsets reach 50,000,000"):
        _read(path, "jsonl")
    assert _peak_mb(lambda: _read(path, "jsonl")) < 20


def test_an_offset_of_a_trillion_is_an_error_not_a_memory_error(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "huge.jsonl", '{"doc_id": "1", "passages": [{"offset": 1000000000000, "text": "x"}]}\n'
    )
    with pytest.raises(InputError, match=r"huge\.jsonl, line 1, document 1: passage offsets reach"):
        _read(path, "jsonl")


def test_a_150_byte_bioc_file_cannot_add_a_hundred_megabytes(tmp_path: Path) -> None:
    xml = (
        '<?xml version="1.0"?>\n<collection><source/>\n'
        "<document><id>7</id><passage><offset>100000000</offset><text>x</text></passage></document>\n"
        "</collection>\n"
    )
    path = _write(tmp_path / "far.xml", xml)
    with pytest.raises(InputError, match=r"far\.xml, line 3, document 7: passage offsets reach 100,000,000"):
        _read(path, "bioc-xml")
    as_json = {"documents": [{"id": "7", "passages": [{"offset": 100000000, "text": "x"}]}]}
    json_path = _write(tmp_path / "far.json", json.dumps(as_json))
    with pytest.raises(InputError, match=r"far\.json, document 7: passage offsets reach 100,000,000"):
        _read(json_path, "bioc-json")
    with Project.create(tmp_path / "p") as project, pytest.raises(InputError):
        project.documents.import_documents(read_corpus(path, "bioc-xml"), source=str(path))
    assert (tmp_path / "p" / "curalink.db").stat().st_size < 5_000_000


def test_gaps_a_real_document_has_are_accepted(tmp_path: Path) -> None:
    """A full-text document of which only two passages are given: a 40,000-character gap is fine."""
    document = {
        "doc_id": "PMC1",
        "passages": [{"offset": 0, "text": "Title"}, {"offset": 40000, "text": "A caption."}],
        "mentions": [{"start": 40002, "end": 40009, "text": "caption"}],
    }
    path = _write(tmp_path / "excerpt.jsonl", json.dumps(document) + "\n")
    [read] = _read(path, "jsonl")
    assert len(read.text) == 40010 and read.mentions[0].text == "caption"


# --- item 6: tracebacks --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "fmt", "data"),
    [
        ("deep.json", "bioc-json", "[" * 100_000 + "]" * 100_000),
        (
            "deep-infons.json",
            "bioc-json",
            '{"documents": [{"id": "1", "infons": {"a": '
            + "[" * 990
            + "]" * 990
            + '}, "passages": [{"offset": 0, "text": "x"}]}]}',
        ),
        (
            "deep.jsonl",
            "jsonl",
            '{"doc_id": "1", "passages": [], "metadata": {"a": ' + "[" * 5000 + "]" * 5000 + "}}\n",
        ),
    ],
)
def test_deeply_nested_json_is_an_error_naming_the_file(
    tmp_path: Path, name: str, fmt: str, data: str
) -> None:
    path = _write(tmp_path / name, data)
    with pytest.raises(InputError, match=re.escape(name) + r".*: JSON nested more than \d+ levels deep"):
        _read(path, fmt)


# --- item 7: accepted silently -------------------------------------------------------------------


def test_a_pubtator_file_cut_in_its_last_line_is_an_error(tmp_path: Path) -> None:
    cut = PUBTATOR[: PUBTATOR.rindex("D003110") + 4]  # ... Disease<TAB>D003 (the issue's `D006`)
    path = _write(tmp_path / "cut.pubtator", cut)
    with pytest.raises(InputError, match=r"cut\.pubtator, line 7: the file ends in the middle of this line"):
        _read(path, "pubtator")
    report = FormatReport()
    docs = _read(path, "pubtator", report)
    assert [m.concept_id for d in docs for m in d.mentions] == ["D001943"]  # the cut annotation is skipped
    assert [(p.line, p.reason[:40]) for p in report.problems] == [
        (7, "the file ends in the middle of this line")
    ]


def test_a_pubtator_file_cut_in_an_abstract_skips_that_document(tmp_path: Path) -> None:
    path = _write(tmp_path / "cut.pubtator", PUBTATOR[: PUBTATOR.index("Another") + 3])
    with pytest.raises(InputError, match=r"line 6: the file ends in the middle"):
        _read(path, "pubtator")
    report = FormatReport()
    assert [d.doc_id for d in _read(path, "pubtator", report)] == ["1"]
    assert report.problem_count == 1


def test_a_whole_pubtator_file_without_a_last_blank_line_still_reads(tmp_path: Path) -> None:
    path = _write(tmp_path / "whole.pubtator", PUBTATOR)
    assert [d.doc_id for d in _read(path, "pubtator")] == ["1", "2"]


def test_a_brat_annotation_file_cut_short_is_an_error(tmp_path: Path) -> None:
    folder = tmp_path / "brat"
    folder.mkdir()
    _write(folder / "d1.txt", "Breast cancer and colon cancer.")
    _write(
        folder / "d1.ann",
        "T1\tDisease 0 13\tBreast cancer\nT2\tDisease 18 30\tcolon cancer\nN1\tReference T2 MESH:D00",
    )
    with pytest.raises(InputError, match=r"d1\.ann, line 3: the file ends in the middle of this line"):
        _read(folder, "brat")


@pytest.mark.parametrize(
    ("doc_id", "problem"),
    [
        ("", "empty doc_id"),
        (" 12", "begins or ends with whitespace"),
        ("12\u0007", "control character U\\+0007"),
        ("1" * 201, "201 characters long"),
    ],
)
def test_jsonl_doc_ids_are_checked(tmp_path: Path, doc_id: str, problem: str) -> None:
    path = _write(
        tmp_path / "ids.jsonl",
        json.dumps({"doc_id": doc_id, "passages": [{"offset": 0, "text": "x"}]}) + "\n",
    )
    with pytest.raises(InputError, match=rf"ids\.jsonl, line 1, doc_id: .*{problem}"):
        _read(path, "jsonl")


def test_an_empty_doc_id_no_longer_breaks_every_later_export(tmp_path: Path) -> None:
    good = {"doc_id": "1", "passages": [{"offset": 0, "text": "Breast cancer"}]}
    bad = {"doc_id": "", "passages": [{"offset": 0, "text": "Colon cancer"}]}
    path = _write(tmp_path / "two.jsonl", json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    report = FormatReport()
    with Project.create(tmp_path / "p") as project:
        project.documents.import_documents(read_corpus(path, "jsonl", report=report), on_invalid="skip", report=report)
        from core.formats import write_corpus

        for fmt, target in (("pubtator", tmp_path / "out.pubtator"), ("brat", tmp_path / "out-brat")):
            assert write_corpus(project.documents.documents(), target, fmt) == 1
    assert [p.line for p in report.problems] == [2]


def test_control_characters_in_pubtator_ids_are_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "ctl.pubtator", "1\u0001|t|Title\n1\u0001|a|Abstract\n\n")
    with pytest.raises(InputError, match=r"ctl\.pubtator, line 1: PMID .*control character"):
        _read(path, "pubtator")
    path = _write(tmp_path / "cid.pubtator", "1|t|Title\n1|a|Abstract\n1\t0\t5\tTitle\tX\tD00\u00011\n\n")
    with pytest.raises(
        InputError, match=r"cid\.pubtator, line 3, document 1: concept id .*control character"
    ):
        _read(path, "pubtator")


@pytest.mark.parametrize("offset", [1.5, "1.5", "1e3"])
def test_a_fractional_bioc_offset_is_an_error_not_rounded(tmp_path: Path, offset) -> None:
    obj = {"documents": [{"id": "1", "passages": [{"offset": offset, "text": "abc"}]}]}
    path = _write(tmp_path / "frac.json", json.dumps(obj))
    with pytest.raises(InputError, match=r"frac\.json, document 1: passage offset must be an integer"):
        _read(path, "bioc-json")
    located = {
        "documents": [
            {
                "id": "1",
                "passages": [
                    {
                        "offset": 0,
                        "text": "abcdef",
                        "annotations": [
                            {"id": "a", "text": "bc", "locations": [{"offset": offset, "length": 2}]}
                        ],
                    }
                ],
            }
        ]
    }
    path = _write(tmp_path / "frac-location.json", json.dumps(located))
    with pytest.raises(InputError, match=r"annotation a: location offset must be an integer"):
        _read(path, "bioc-json")


def test_an_integral_number_is_still_an_offset(tmp_path: Path) -> None:
    obj = {"documents": [{"id": "1", "passages": [{"offset": 4.0, "text": "abc"}]}]}
    [document] = _read(_write(tmp_path / "four.json", json.dumps(obj)), "bioc-json")
    assert document.passages[0].offset == 4


# --- item 8: misleading XML errors ---------------------------------------------------------------


def _bioc_xml(doctype: str, text: str) -> str:
    return (
        f'<?xml version="1.0"?>\n{doctype}<collection>\n<source>PubTator</source>\n'
        f"<document><id>1</id><passage><offset>0</offset><text>{text}</text></passage></document>\n"
        "</collection>\n"
    )


def test_an_undefined_entity_is_reported_on_its_own_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "entity.xml", _bioc_xml("", "a &foo; b"))  # on line 4
    with pytest.raises(InputError, match=r"entity\.xml, line 4: malformed XML: Entity 'foo' not defined"):
        _read(path, "bioc-xml")


def test_an_internal_dtd_entity_is_expanded(tmp_path: Path) -> None:
    doctype = '<!DOCTYPE collection [\n<!ENTITY alpha "\u03b1">\n]>\n'
    path = _write(tmp_path / "benign.xml", _bioc_xml(doctype, "&alpha;-synuclein &amp; tau"))
    [document] = _read(path, "bioc-xml")
    assert document.passages[0].text == "\u03b1-synuclein & tau"


def test_external_entities_are_never_read_and_entity_bombs_are_refused(tmp_path: Path) -> None:
    secret = _write(tmp_path / "secret.txt", "SECRET")
    doctype = f'<!DOCTYPE collection [\n<!ENTITY x SYSTEM "file://{secret}">\n]>\n'
    path = _write(tmp_path / "xxe.xml", _bioc_xml(doctype, "a &x; b"))
    with pytest.raises(InputError, match=r"xxe\.xml, line 7: malformed XML: Entity 'x' not defined"):
        _read(path, "bioc-xml")
    laughs = "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">\n' for i in range(1, 10))
    doctype = f'<!DOCTYPE collection [\n<!ENTITY l0 "lol">\n{laughs}]>\n'
    path = _write(tmp_path / "laughs.xml", _bioc_xml(doctype, "&l9;"))
    with pytest.raises(InputError, match=r"laughs\.xml.*entity expansion too large"):
        _read(path, "bioc-xml")


# --- found by the property tests and the crafted-file corpus ----------------------------------------


@pytest.mark.parametrize(
    ("key", "value"), [("infons", 100000000), ("annotations", 5), ("relations", {"a": 1})]
)
def test_bioc_json_values_of_the_wrong_kind_are_errors(tmp_path: Path, key: str, value) -> None:
    document = {"id": "7", "passages": [{"offset": 0, "text": "Breast cancer"}], key: value}
    path = _write(tmp_path / "kind.json", json.dumps({"documents": [document]}))
    with pytest.raises(
        InputError, match=rf'kind\.json, documents\[0\] \(id 7\): malformed BioC document: "{key}" must be'
    ):
        _read(path, "bioc-json")


@pytest.mark.parametrize(
    ("passage", "problem"),
    [
        ({"offset": 0, "text": [{"a": "1"}]}, "passage text must be a string, got list"),
        (
            {"offset": 0, "text": "Breast", "annotations": [{"id": "1", "text": 5, "locations": []}]},
            "annotation text",
        ),
    ],
)
def test_bioc_json_text_that_is_not_a_string_is_an_error(tmp_path: Path, passage: dict, problem: str) -> None:
    """Found by the atheris run (`curalink bench fuzz`): a list as passage text was a TypeError."""
    path = _write(tmp_path / "text.json", json.dumps({"documents": [{"id": "7", "passages": [passage]}]}))
    with pytest.raises(InputError, match=r"text\.json, document 7.*: " + problem):
        _read(path, "bioc-json")


@pytest.mark.parametrize(
    ("fmt", "name"), [("pubtator", "u.pubtator"), ("text", "u.txt"), ("jsonl", "u.jsonl")]
)
def test_utf16_and_binary_corpora_say_what_they_are(tmp_path: Path, fmt: str, name: str) -> None:
    path = _write(tmp_path / name, PUBTATOR.encode("utf-16"))
    with pytest.raises(InputError, match=re.escape(name) + r", line 1: the file is UTF-16 text, not UTF-8"):
        _read(path, fmt)
    path = _write(tmp_path / name, bytes(range(256)) * 8)
    with pytest.raises(InputError, match=re.escape(name) + r", line 1: a NUL byte: this is a binary file"):
        _read(path, fmt)


def test_a_fractional_bioc_xml_offset_is_named_as_such(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "frac.xml", _bioc_xml("", "x").replace("<offset>0</offset>", "<offset>1.5</offset>")
    )
    with pytest.raises(
        InputError, match=r"frac\.xml, line 4, document 1: <passage> offset must be an integer, got '1\.5'"
    ):
        _read(path, "bioc-xml")


def test_a_single_bad_item_is_a_one_line_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "one.pubtator", PUBTATOR.replace("0\t12\tColon", "0\t99\tColon"))
    report = FormatReport()
    with Project.create(tmp_path / "p") as project, pytest.raises(InputError) as raised:
        project.documents.import_documents(read_corpus(path, "pubtator", report=report), report=report)
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(f"{path}, line 7, document 2: offsets 0-99 run past the end")
    assert message.endswith("nothing imported: fix it, or import the rest with --on-invalid skip")
