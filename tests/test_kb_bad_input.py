"""Issue 11, items 6, 7 and 8 for the vocabulary readers: a vocabulary cut short is not imported
silently, UTF-16 or binary OBO is an error and not a TypeError, one bad CUI does not make an MRCONSO
"look like a MEDIC file", ids are checked, and KB import progress keeps to one unit."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli import EXIT_ERROR, main
from core.errors import InputError
from core.kb import load_kb
from core.store import Project

MEDIC = "".join(
    f"MESH:D{n:06d}|OMIM:{100000 + n}||Disease number {n}|Disease synonym {n}\n" for n in range(50)
)


def _write(path: Path, data: str | bytes) -> Path:
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


def _rrf_row(cui: str, name: str) -> str:
    return f"{cui}|ENG|P|L0000001|PF|S0000001|Y|A00000001||M0000001|D000001|MSH|MH|D000001|{name}|0|N|256|\n"


# --- item 7: a vocabulary cut short ----------------------------------------------------------------


def test_a_medic_file_cut_mid_line_is_an_error_not_28_of_50_concepts(tmp_path: Path) -> None:
    cut = MEDIC[: MEDIC.index("Disease number 28") + 10]
    path = _write(tmp_path / "medic.txt", cut)
    assert len(cut.splitlines()) == 29
    with pytest.raises(InputError, match=r"medic\.txt, line 29: the file ends in the middle of this line"):
        list(load_kb(path, "medic"))


@pytest.mark.parametrize(
    ("name", "fmt", "text"),
    [
        ("ctd.tsv", "ctd", "Disease A\tMESH:D000001\t\t\t\t\t\t\nDisease B\tMESH:D000002\t\t\t\t\t\tSyn|Sy"),
        ("terms.tsv", "tsv", "D000001\tDisease A\nD000002\tDisease B\nD000003\tDise"),
    ],
)
def test_other_line_vocabularies_cut_short_are_errors(tmp_path: Path, name: str, fmt: str, text: str) -> None:
    path = _write(tmp_path / name, text)
    with pytest.raises(InputError, match=rf"{name}, line \d: the file ends in the middle of this line"):
        list(load_kb(path, fmt))


def test_a_whole_vocabulary_reads_as_before(tmp_path: Path) -> None:
    concepts = list(load_kb(_write(tmp_path / "medic.txt", MEDIC), "medic"))
    assert len(concepts) == 50 and concepts[-1].concept_id == "D000049"


@pytest.mark.parametrize(
    ("name", "fmt", "text", "problem"),
    [
        (
            "ctl.txt",
            "medic",
            "D000001\u0001||Disease\n",
            r"line 1: id 'D000001\\x01' contains the control character",
        ),
        (
            "ctl.tsv",
            "tsv",
            "D000001\u009f\tDisease\n",
            r"line 1: id .* contains the control character U\+009F",
        ),
        ("long.tsv", "tsv", "D" + "1" * 300 + "\tDisease\n", r"line 1: id is 301 characters long"),
    ],
)
def test_vocabulary_ids_are_checked(tmp_path: Path, name: str, fmt: str, text: str, problem: str) -> None:
    path = _write(tmp_path / name, text)
    with pytest.raises(InputError, match=problem):
        list(load_kb(path, fmt, check_format=False))


# --- item 6: UTF-16 and binary OBO ---------------------------------------------------------------

OBO = "format-version: 1.2\n\n[Term]\nid: HP:0000001\nname: All\n"


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (OBO.encode("utf-16"), r"line 1: the file is UTF-16 text, not UTF-8"),
        (OBO.encode("utf-16-le"), r"line 1: the file is UTF-16 text, not UTF-8"),
        (OBO.encode() + bytes(range(256)), r"line 6: a NUL byte"),
        (b"format-version: 1.2\n\xff\xfe\n", r"line 2: not valid UTF-8"),
    ],
)
def test_utf16_and_binary_obo_are_errors_not_type_errors(tmp_path: Path, data: bytes, problem: str) -> None:
    path = _write(tmp_path / "bad.obo", data)
    with pytest.raises(InputError, match=r"bad\.obo, " + problem):
        list(load_kb(path, "obo", check_format=False))


def test_an_obo_file_cut_in_its_last_line_says_so(tmp_path: Path) -> None:
    path = _write(tmp_path / "cut.obo", OBO[:-4])
    with pytest.raises(InputError, match=r"cut\.obo, line 5: the file ends in the middle of this line"):
        list(load_kb(path, "obo"))


def test_an_obo_id_that_makes_fastobo_panic_is_an_error(tmp_path: Path) -> None:
    """Found by `curalink bench fuzz`: control characters in an id make fastobo (Rust) panic, which pyo3
    raises as a PanicException, a BaseException that no `except Exception` catches."""
    data = (
        b"format-version: 1.2\n\n[Term]\nid:EE\x1c\x1c\x1c\n!name: nll\n\n[Term]\nid: HP:0000001\nname: All\n"
    )
    path = _write(tmp_path / "panic.obo", data)
    with pytest.raises(InputError, match=r"panic\.obo, line 4: control character U\+001C"):
        list(load_kb(path, "obo"))


# --- item 8: an MRCONSO with one bad CUI ------------------------------------------------------------


def test_an_mrconso_with_one_bad_cui_names_that_line(tmp_path: Path, capsys) -> None:
    rows = [_rrf_row(f"C{n:07d}", f"name {n}") for n in range(1, 20)]
    rows[6] = _rrf_row("CX000007", "name 7")
    path = _write(tmp_path / "MRCONSO.RRF", "".join(rows))
    with pytest.raises(
        InputError, match=r"MRCONSO\.RRF, line 7: CUI 'CX000007' is not 'C' followed by 7 digits"
    ):
        list(load_kb(path, "umls-rrf"))
    assert main(["init", str(tmp_path / "p")]) == 0
    capsys.readouterr()
    assert main(["-p", str(tmp_path / "p"), "kb", "import", str(path), "--format", "umls-rrf"]) == EXIT_ERROR
    error = capsys.readouterr().err
    assert "line 7" in error and "medic" not in error


# --- item 8: KB import progress --------------------------------------------------------------------


def test_kb_import_progress_never_divides_concepts_by_bytes(tmp_path: Path, monkeypatch) -> None:
    """The CLI and the desk hand one callback to the loader and the store: every report must be in
    bytes of the file (the loader's unit, the only one with a known end), with the count in words."""
    import core.kb.source_file as source_file

    monkeypatch.setattr(source_file, "BATCH_LINES", 7)  # several reports from 50 lines
    path = _write(tmp_path / "medic.txt", MEDIC)
    size = path.stat().st_size
    reports: list[tuple[int, int | None, str]] = []

    def progress(done: int, total: int | None, message: str = "") -> None:
        reports.append((done, total, message))

    with Project.create(tmp_path / "p") as project:
        summary = project.kb.import_concepts(
            load_kb(path, "medic", progress=progress), batch_size=10, progress=progress
        )
    assert summary.added == 50
    assert len(reports) > 5
    assert all(total == size and 0 <= done <= size for done, total, _ in reports), reports
    assert "50 concepts" in reports[-1][2]


# --- item 6: a gzip stream damaged inside (found by `curalink bench fuzz`) --------------------------

# A 277-byte CTD file the atheris run produced: gzip's magic, then a deflate stream whose stored block
# has wrong lengths. zlib raises its own `zlib.error` (not an OSError), which the sniffer let through.
DAMAGED_GZIP = bytes.fromhex(
    "1f8b08506423204669654469736561736549447309446566696e6974696f6e09506172656e7449447309547265654e756d626572730950617267730a427265617374204e656f706c61736d73094d4500000000000000000000000000000000000000000000000000000000000000000000000048533a4430303139348bbb322932094f4d494d3a3131343438300954756d6f7273206f6620746865206272656173742e094d4553483a44303039333731094330342e3538382e313830090330342e353838094272656173742043616e6365727c4272656173742054756d6f720943616e6365720a436f6c6f6e094330342e3538382e323734094330342e35383809436f6c6f6e2043616e6365720943616e6365720a"
)


@pytest.mark.parametrize("fmt", ["ctd", "mesh-xml", "medic", "tsv"])
def test_a_gzip_stream_damaged_inside_is_one_line_error(tmp_path: Path, fmt: str) -> None:
    path = _write(tmp_path / "vocabulary.gz", DAMAGED_GZIP)
    with pytest.raises(InputError) as error:
        list(load_kb(path, fmt))
    message = str(error.value)
    assert "\n" not in message and str(path) in message and "damaged or truncated gzip data" in message
