"""The crafted bad-file corpus (bench.fuzz.bad_input_cases, issue 11's "bad inputs tried"): every
case gets a one-line CuralinkError naming the file and, where there is one, the line or element, and
leaves the project's database as it was. A sample also goes through the `curalink` command itself."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from app.cli import EXIT_ERROR, main
from bench.fuzz.bad_input_cases import CASES, WHERE
from bench.fuzz.bad_inputs import evaluate


def test_every_crafted_bad_input_gets_a_clear_one_line_error(tmp_path: Path) -> None:
    figures = evaluate(tmp_path)
    unclear = [case for case in figures["cases"] if not (case["clear"] and case["one_line"])]
    assert unclear == []
    assert figures["tried"] == len(CASES) >= 80
    assert figures["tracebacks"] == figures["imported"] == 0
    assert figures["store_unchanged"] == figures["tried"]


def _rows(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as connection:
        return [
            (table, connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
            for (table,) in connection.execute(
                "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name"
            )
        ]


@pytest.mark.parametrize(
    "name",
    [
        "pubtator-cut-in-id",
        "jsonl-offset-1e12",
        "bioc-json-nested-100k",
        "obo-utf16",
        "umls-bad-cui",
        "brat-ann-cut-in-id",
    ],
)
def test_the_command_answers_a_bad_input_with_one_line(tmp_path: Path, capsys, name: str) -> None:
    path, fmt = CASES[name](tmp_path)
    project = tmp_path / "p"
    assert main(["init", str(project)]) == 0
    before = _rows(project / "curalink.db")
    capsys.readouterr()
    command = "corpus" if fmt in ("pubtator", "bioc-xml", "bioc-json", "brat", "jsonl", "text") else "kb"
    assert main(["-p", str(project), command, "import", str(path), "--format", fmt]) == EXIT_ERROR
    error = capsys.readouterr().err.strip()  # (a transient progress bar leaves a blank line)
    assert "Traceback" not in error and len(error.splitlines()) == 1
    assert error.startswith("error: ") and path.name in error
    assert WHERE[name] is None or WHERE[name] in error
    assert _rows(project / "curalink.db") == before
