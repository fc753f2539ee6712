"""Issue 34's KB import written once: the desk's File ▸ Import knowledge base goes through
core.jobs.io.kb_import as `curalink kb import` and the demo do, so it shows the OBO warnings the CLI
prints and honours names-only; the three front ends store the same concepts and names for one file."""

from __future__ import annotations

import shutil
from pathlib import Path

from PySide6.QtWidgets import QMessageBox

from app.cli import main
from app.resources import demo_dir
from core.kb import load_kb
from core.store import Project

IMPORTED = "http://purl.obolibrary.org/obo/uo.obo"
OBO = (
    f"format-version: 1.2\nimport: {IMPORTED}\n\n"
    "[Term]\nid: XT:0000001\nname: thirst of the test\nsynonym: \"test thirst\" EXACT []\n"
)
NAMES = (
    "format-version: 1.2\n\n"
    "[Term]\nid: XT:0000001\nname: a second name for the test thirst\n\n"
    "[Term]\nid: XT:0000002\nname: a concept the project does not have\n"
)


def _import(window, qtbot, path: Path, fmt: str, **options):
    job = window.files.import_kb_from(path, fmt, **options)
    reports = []
    job.signals.returned.connect(reports.append)
    qtbot.waitUntil(lambda: bool(reports), timeout=30000)
    return reports[0]


def test_the_desk_shows_the_obo_warnings_and_honours_names_only(window, qtbot, tmp_path) -> None:
    obo = tmp_path / "thirst.obo"
    obo.write_text(OBO, encoding="utf-8")
    report = _import(window, qtbot, obo, "obo")
    assert (report.added, report.names) == (1, 2)
    qtbot.waitUntil(lambda: getattr(window, "report_dialog", None) is not None, timeout=5000)
    box = window.report_dialog
    assert isinstance(box, QMessageBox) and box.windowTitle() == "Import knowledge base"
    shown = box.text() + "\n" + box.informativeText()
    assert "1 concepts added" in shown
    assert "not kept:" in shown and f"'import: {IMPORTED}' is not followed" in shown
    assert "1 concepts, 2 names added" in window.statusBar().currentMessage()

    concepts_before = window.project.desk.stats()["concepts"]
    names = tmp_path / "names.obo"
    names.write_text(NAMES, encoding="utf-8")
    report = _import(window, qtbot, names, "obo", names_only=True)
    assert (report.added, report.present, report.names, report.unmatched) == (0, 1, 1, 1)
    assert window.project.desk.stats()["concepts"] == concepts_before, "names only adds no concept"
    assert window.project.kb.concept("XT:0000002") is None
    assert "a second name for the test thirst" in window.project.kb.concept("XT:0000001").synonyms
    assert "1 names added to 1 concepts" in window.statusBar().currentMessage()


def test_the_import_kb_dialog_offers_names_only(window) -> None:
    dialog = window.files.import_kb()
    try:
        assert not dialog.names_only.isChecked()
        dialog.names_only.setChecked(True)
        assert dialog.names_only.isChecked()
    finally:
        dialog.reject()


def test_cli_desk_and_demo_import_a_kb_through_one_operation(
    qtbot, app_settings, tmp_path, monkeypatch
) -> None:
    import core.jobs.io.kb_import as kb_import
    from app.demo import import_demo_sources
    from app.gui.main_window import MainWindow

    calls: list[str] = []
    real = kb_import.import_kb

    def spy(project, path, fmt, **options):
        calls.append(Path(path).name)
        return real(project, path, fmt, **options)

    monkeypatch.setattr(kb_import, "import_kb", spy)
    kb_file = demo_dir() / "kb.tsv"
    expected = list(load_kb(kb_file, "tsv"))  # the file's own concepts and names, read without a project
    expected_names = sum(len(c.names) for c in expected)

    cli = tmp_path / "cli"
    assert main(["init", str(cli)]) == 0
    assert main(["-p", str(cli), "kb", "import", str(kb_file), "--format", "tsv"]) == 0

    demo_source = tmp_path / "demo-source"
    shutil.copytree(demo_dir(), demo_source)
    with Project.create(tmp_path / "demo") as demo:
        import_demo_sources(demo, demo_source)

    desk_project = Project.create(tmp_path / "desk")
    window = MainWindow(desk_project, app_settings, background=False)
    qtbot.addWidget(window)
    try:
        _import(window, qtbot, kb_file, "tsv")
    finally:
        window.close()
        window.service.shutdown()
    desk_project.close()

    assert calls == ["kb.tsv"] * 3, "each front end called core.jobs.io.kb_import.import_kb once"
    sizes = {}
    for name in ("cli", "demo", "desk"):
        with Project.open(tmp_path / name) as project:
            sizes[name] = project.desk.kb_size()
    assert sizes["cli"] == sizes["demo"] == sizes["desk"]
    concepts, names = sizes["cli"]
    assert concepts == len(expected)
    assert names == expected_names
