"""Issue 22's import/export seam: the desk imports and exports through core.jobs.io.corpus as the CLI does. A
file with a bad item stores nothing and offers "Skip and report", which imports the rest and writes the
report the CLI writes; an export to a format that cannot keep something shows the lines the CLI prints."""

from __future__ import annotations

import csv
from pathlib import Path

from PySide6.QtWidgets import QMessageBox

from app.cli import main
from core.store import Project

BAD = (
    "7000001|t|Breast cancer in women\n"
    "7000001|a|A study.\n"
    "7000001\t0\t13\tBreast cancer\tDisease\tD001943\n"
    "\n"
    "7000002|t|Colon cancer\n"
    "7000002|a|Another study.\n"
    "7000002\t0\t12\tColon tumour\tDisease\tD003110\n"  # the bad item: not the text at 0-12
    "7000002\t0\t12\tColon cancer\tDisease\tD003110\n"
    "\n"
)


def _rows(folder: Path) -> list[list[str]]:
    (report,) = sorted(folder.glob("import-*.skipped.tsv"))
    with report.open(encoding="utf-8", newline="") as handle:
        return list(csv.reader(handle, delimiter="\t"))


def _dialog(window, qtbot, title: str) -> QMessageBox:
    qtbot.waitUntil(
        lambda: (
            getattr(window, "report_dialog", None) is not None
            and window.report_dialog.isVisible()
            and window.report_dialog.windowTitle() == title
        ),
        timeout=30000,
    )
    return window.report_dialog


def test_a_bad_item_offers_skip_and_report_and_writes_the_cli_report(
    window, demo_project, qtbot, tmp_path, capsys
):
    corpus = tmp_path / "bad.pubtator"
    corpus.write_text(BAD, encoding="utf-8")
    cli_project = tmp_path / "cli"
    Project.create(cli_project).close()
    assert (
        main(
            [
                "-p",
                str(cli_project),
                "corpus",
                "import",
                str(corpus),
                "--format",
                "pubtator",
                "--on-invalid",
                "skip",
            ]
        )
        == 0
    )
    cli_rows = _rows(cli_project / "logs")
    assert [row[1:3] for row in cli_rows[1:]] == [["7", "document 7000002"]]

    before = set(demo_project.documents.document_ids())
    job = window.files.import_corpus_from(corpus, "pubtator")
    qtbot.waitUntil(job.done.is_set, timeout=30000)
    offer = _dialog(window, qtbot, "Bad items in the file")
    assert "1 item cannot be read; nothing was imported" in offer.text()
    assert "line 7, document 7000002: mention text 'Colon tumour' does not match" in offer.detailedText()
    assert set(demo_project.documents.document_ids()) == before  # nothing stored yet
    (skip,) = [button for button in offer.buttons() if button.text() == "Skip and report"]
    skip.click()
    qtbot.waitUntil(lambda: window.menu_job is not job and window.menu_job.done.is_set(), timeout=30000)
    summary = _dialog(window, qtbot, "Import")
    assert set(demo_project.documents.document_ids()) - before == {"7000001", "7000002"}
    assert [m.text for m in demo_project.documents.document("7000002").mentions] == ["Colon cancer"]
    assert _rows(demo_project.path / "logs") == cli_rows
    assert "1 invalid item(s) skipped" in summary.informativeText()
    summary.accept()


def test_an_export_shows_what_the_format_could_not_keep(window, demo_project, qtbot, tmp_path, capsys):
    window.curation.accept_rank(
        1
    )  # a decided mention carries decision infons, which PubTator has no place for
    out = tmp_path / "desk.pubtator"
    job = window.files.export_to(out, "pubtator")
    qtbot.waitUntil(job.done.is_set, timeout=30000)
    shown = _dialog(window, qtbot, "Export")
    capsys.readouterr()
    assert (
        main(
            [
                "-p",
                str(demo_project.path),
                "export",
                "--format",
                "pubtator",
                "--out",
                str(tmp_path / "cli.pubtator"),
            ]
        )
        == 0
    )
    printed = [
        line.strip() for line in capsys.readouterr().out.splitlines() if line.startswith("  not written: ")
    ]
    assert any("mention infons not written" in line for line in printed)
    assert shown.informativeText().splitlines() == printed
    assert out.read_text(encoding="utf-8") == (tmp_path / "cli.pubtator").read_text(encoding="utf-8")
    shown.accept()
