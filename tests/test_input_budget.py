"""Issue 33, item 1: every reader streams under one budget (core.limits.LIMITS). Each bomb is built small
with the limit scaled down through its option (the CURALINK_LIMIT_* variable `--limit` sets), and each
refusal is one line naming the file, the item or line, and the limit, read in bounded memory.
"""

from __future__ import annotations

import gzip
import json
import struct
import tracemalloc
from pathlib import Path

import pytest

from core.errors import CuralinkError, InputError, ModelError
from core.formats import FormatReport, read_corpus
from core.kb import load_kb
from core.limits import LIMITS, limit, parse_limit_value
from core.safe_models import safetensors_header

MB = 1 << 20


def _scaled(monkeypatch: pytest.MonkeyPatch, **values: int) -> None:
    for name, value in values.items():
        monkeypatch.setenv("CURALINK_LIMIT_" + name.upper(), str(value))


def _gzip(path: Path, *parts: bytes, repeat: int = 1) -> Path:
    with gzip.open(path, "wb", compresslevel=6) as handle:
        for part in parts[:-1]:
            handle.write(part)
        for _ in range(repeat):
            handle.write(parts[-1])
    return path


def _refusal(function) -> tuple[BaseException | None, float]:
    """What `function` raised and the peak of the Python heap (MB) while it ran."""
    tracemalloc.start()
    raised: BaseException | None = None
    try:
        function()
    except Exception as error:  # noqa: BLE001 - returned for the test to judge
        raised = error
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return raised, peak / MB


def _one_line(error: BaseException | None, *words: str) -> str:
    assert isinstance(error, CuralinkError), repr(error)
    text = str(error)
    assert "\n" not in text and "Traceback" not in text
    for word in words:
        assert word in text, text
    return text


def test_the_options_name_every_limit_and_the_environment_overrides_the_default(monkeypatch) -> None:
    assert limit("text-bytes") == 256 * MB
    monkeypatch.setenv("CURALINK_LIMIT_TEXT_BYTES", "3k")
    assert limit("text-bytes") == 3 * 1024
    assert parse_limit_value("json-nodes", "2M") == 2_000_000
    with pytest.raises(ValueError):
        parse_limit_value("json-nodes", "٣")  # Arabic-Indic digits are not a bound
    assert set(LIMITS) >= {"line-bytes", "text-bytes", "json-nodes", "mentions-per-document", "manifest-bytes"}


def test_a_bioc_json_gz_bomb_is_refused_before_it_is_held(tmp_path: Path, monkeypatch) -> None:
    _scaled(monkeypatch, text_bytes=MB)
    bomb = _gzip(tmp_path / "c.json.gz", b'{"documents": [', b" " * MB, repeat=16)  # 16 MB of spaces
    error, peak = _refusal(lambda: list(read_corpus(bomb, "bioc-json")))
    _one_line(error, str(bomb), "text-bytes=1,048,576")
    assert peak < 4, f"held {peak:.1f} MB of a 16 MB file under a 1 MB limit"


def test_a_bioc_json_of_too_many_values_is_refused_before_json_builds_them(tmp_path: Path, monkeypatch) -> None:
    _scaled(monkeypatch, json_nodes=10_000)
    bomb = _gzip(tmp_path / "c.json", b'{"documents": [', b"{}," * 100_000)
    bomb.write_bytes(gzip.decompress(bomb.read_bytes()) + b"{}]}")
    error, peak = _refusal(lambda: list(read_corpus(bomb, "bioc-json")))
    _one_line(error, str(bomb), "json-nodes=10,000")
    assert peak < 3 * bomb.stat().st_size / MB + 1  # the text, never 100,000 dicts (6.4 MB)


def test_a_gzipped_text_file_and_a_gzip_behind_a_brat_txt_are_bounded(tmp_path: Path, monkeypatch) -> None:
    _scaled(monkeypatch, text_bytes=MB)
    text = _gzip(tmp_path / "abstract.txt.gz", b"x" * MB, repeat=8)
    brat = tmp_path / "brat"
    brat.mkdir()
    _gzip(brat / "d1.txt", b"y" * MB, repeat=8)  # gzip data under a .txt name
    (brat / "d1.ann").write_text("", encoding="utf-8")
    for path, fmt in ((text, "text"), (brat, "brat")):
        error, peak = _refusal(lambda path=path, fmt=fmt: list(read_corpus(path, fmt)))
        _one_line(error, "text-bytes=1,048,576")
        assert peak < 4, f"{fmt}: held {peak:.1f} MB"


def test_pubtator_mentions_of_one_document_are_bounded(tmp_path: Path, monkeypatch) -> None:
    _scaled(monkeypatch, mentions_per_document=100)
    mention = b"1\t0\t6\tBreast\tDisease\tD001943\n"
    bomb = _gzip(tmp_path / "c.pubtator.gz", b"1|t|Breast cancer\n1|a|A study.\n", mention, repeat=20_000)
    with gzip.open(bomb, "ab") as handle:
        handle.write(b"\n2|t|Colon cancer\n2|a|Another.\n2\t0\t5\tColon\tDisease\tD003110\n\n")
    error, peak = _refusal(lambda: list(read_corpus(bomb, "pubtator")))
    _one_line(error, str(bomb), "document 1", "mentions-per-document=100", "line 103")
    report = FormatReport()
    kept = list(read_corpus(bomb, "pubtator", report=report))
    assert [d.doc_id for d in kept] == ["2"] and report.problem_count == 1  # the rest read past, once
    assert peak < 3, f"held {peak:.1f} MB"


def test_an_obo_line_over_the_bound_is_refused_before_the_parser_sees_it(tmp_path: Path, monkeypatch) -> None:
    _scaled(monkeypatch, line_bytes=64 * 1024)
    head = b"format-version: 1.4\n\n[Term]\nid: X:1\nname: a\n\n[Term]\nid: X:2\nname: "
    bomb = _gzip(tmp_path / "o.obo.gz", head, b"a" * MB, repeat=4)
    error, _ = _refusal(lambda: list(load_kb(bomb, "obo")))
    _one_line(error, str(bomb), "line 9", "65,536 bytes", "--limit line-bytes")


def test_a_long_obo_file_of_ordinary_lines_reads_through_the_guard(tmp_path: Path, monkeypatch) -> None:
    _scaled(monkeypatch, line_bytes=1024)
    terms = b"".join(b"[Term]\nid: X:%d\nname: term %d\n\n" % (i, i) for i in range(5_000))
    path = _gzip(tmp_path / "o.obo.gz", b"format-version: 1.4\n\n" + terms)
    assert len(list(load_kb(path, "obo"))) == 5_000


def test_a_mesh_xml_flood_of_empty_elements_is_refused_with_the_limit(tmp_path: Path, monkeypatch) -> None:
    _scaled(monkeypatch, xml_tags=20_000)
    record = (
        b"<DescriptorRecord><DescriptorUI>D000001</DescriptorUI><DescriptorName><String>Calcimycin</String>"
        b"</DescriptorName><ConceptList><Concept PreferredConceptYN=\"Y\"><TermList><Term "
        b"ConceptPreferredTermYN=\"Y\"><String>Calcimycin</String></Term></TermList></Concept></ConceptList>"
        b"</DescriptorRecord>\n"
    )
    bomb = _gzip(tmp_path / "desc.xml.gz", b"<DescriptorRecordSet>\n" + record, b"<a/>" * 10_000, repeat=20)
    with gzip.open(bomb, "ab") as handle:
        handle.write(b"</DescriptorRecordSet>\n")
    error, _ = _refusal(lambda: list(load_kb(bomb, "mesh-xml")))
    text = _one_line(error, str(bomb), "20,000 tags", "--limit xml-tags")
    assert "unknown error" not in text


def test_a_safetensors_header_of_empty_lists_is_refused_in_one_line(tmp_path: Path, monkeypatch) -> None:
    _scaled(monkeypatch, json_nodes=1_000)
    header = b'{"a": [' + b"[]," * 100_000 + b"[]]}"
    path = tmp_path / "model.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header)
    error, _ = _refusal(lambda: safetensors_header(path))
    assert isinstance(error, ModelError)
    _one_line(error, str(path), "json-nodes=1,000")
    _scaled(monkeypatch, header_bytes=1_000, json_nodes=10_000_000)
    error, _ = _refusal(lambda: safetensors_header(path))
    _one_line(error, str(path), "header-bytes=1,000")


def test_within_the_limits_a_bioc_json_collection_reads_as_before(tmp_path: Path) -> None:
    document = {"id": "1", "passages": [{"offset": 0, "text": "Breast cancer", "annotations": []}]}
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"source": "x", "documents": [document]}), encoding="utf-8")
    assert [d.doc_id for d in read_corpus(path, "bioc-json")] == ["1"]
    assert isinstance(InputError(path, "x"), CuralinkError)
