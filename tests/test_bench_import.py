"""`curalink bench import` never reports a missing input as a measured (and passing) 0.00 s."""

from __future__ import annotations

import json

from app.cli import main


def test_missing_inputs_are_reported_as_skipped_not_timed(tmp_path, capsys):
    assert (
        main(["bench", "import", "--data", str(tmp_path / "nothing-here"), "--umls-rows", "2000", "--json"])
        == 0
    )
    rows = json.loads(capsys.readouterr().out)["rows"]
    by_format = {row["what"].rsplit("(", 1)[1].rstrip(")"): row for row in rows}
    for fmt in ("ctd", "medic", "pubtator"):
        row = by_format[fmt]
        assert row["status"] == "skipped" and row["seconds"] is None and "not found" in row["reason"]
    measured = by_format["umls-rrf"]  # the synthetic MRCONSO is always there
    assert measured["status"] in ("met", "missed") and measured["seconds"] > 0 and measured["count"] > 0


def test_the_table_says_skipped(tmp_path, capsys):
    main(["bench", "import", "--data", str(tmp_path), "--umls-rows", "1000"])
    out = capsys.readouterr().out
    assert out.count("skipped") == 3 and "0.00" not in out
