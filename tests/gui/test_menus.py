"""The File and Edit menu paths that write files or settings, driven through their real actions; only
the Browse… file dialogs are bypassed, by typing the path into the dialog's field."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QDialogButtonBox

from app.gui.settings import AppSettings

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "formats"


def _press_ok(dialog) -> None:
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok).click()


def _run_file_dialog(window, qtbot, action, path: Path, fmt: str, **extra):
    """Trigger a menu action, fill its dialog as a curator would, press OK, wait for the job."""
    action.trigger()
    dialog = window.menu_dialog
    assert dialog is not None and dialog.isVisible()
    dialog.path_edit.setText(str(path))
    dialog.format_box.setCurrentText(fmt)
    for name, value in extra.items():
        widget = getattr(dialog, name)
        if isinstance(value, bool):
            widget.setChecked(value)
        else:
            widget.setCurrentText(value)
    _press_ok(dialog)
    job = window.menu_job
    assert job is not None
    qtbot.waitUntil(job.done.is_set, timeout=30000)
    return job


def test_export_accepted_only_pubtator_and_jsonl(window, demo_project, qtbot, tmp_path):
    first, second = window.model.mention_ids[:2]
    accepted = demo_project.curation.suggestions(first)[0]
    window.curation.accept_rank(1)  # first mention: accepted, top candidate
    window.curation.decide("reject")  # second mention: rejected, so left out of an accepted-only export
    assert demo_project.curation.current_decisions()[second].action == "reject"
    mention = window.model.doc.mentions[0]

    out = tmp_path / "accepted.pubtator"
    _run_file_dialog(window, qtbot, window.files.act_export, out, "pubtator", accepted_only=True)
    lines = out.read_text(encoding="utf-8").splitlines()
    annotations = [line.split("\t") for line in lines if "\t" in line]
    assert annotations == [
        [
            window.model.doc.doc_id,
            str(mention.start),
            str(mention.end),
            mention.text,
            mention.type,
            accepted.concept_id,
        ]
    ]
    assert any(line.startswith(f"{window.model.doc.doc_id}|t|") for line in lines)

    out = tmp_path / "accepted.jsonl"
    _run_file_dialog(window, qtbot, window.files.act_export, out, "jsonl", accepted_only=True)
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["doc_id"] for r in records] == [window.model.doc.doc_id]  # only the document with an accept
    linked = [m for record in records for m in record["mentions"]]
    assert len(linked) == 1
    text = json.dumps(linked[0])
    assert accepted.concept_id in text and "tester" in text and '"accept"' in text


def test_import_corpus_from_the_menu(window, demo_project, qtbot):
    before = set(demo_project.documents.document_ids())
    _run_file_dialog(
        window,
        qtbot,
        window.files.act_import_corpus,
        FIXTURES / "composite.pubtator",
        "pubtator",
        split_box="dev",
    )
    qtbot.waitUntil(lambda: "1000001" in window.queue.visible_ids(), timeout=5000)
    assert set(demo_project.documents.document_ids()) - before == {"1000001", "1000002"}
    assert demo_project.documents.document_ids(split="dev") == ["1000001", "1000002"]
    imported = demo_project.documents.document("1000001")
    assert imported.title.startswith("Acute kidney injury and seizures")
    assert [m.text for m in imported.mentions][:2] == ["Acute kidney injury", "seizures"]
    assert "documents added" in window.statusBar().currentMessage()


def test_settings_persist_through_the_dialog(window, qtbot, tmp_path):
    window.act_settings.trigger()
    dialog = window.menu_dialog
    assert dialog.curator.text() == "tester"
    dialog.curator.setText("  ada  ")
    dialog.candidates.setValue(24)
    dialog.device.setCurrentText("cpu")
    dialog.use_reranker.setChecked(False)
    dialog.prefetch.setValue(2)
    _press_ok(dialog)
    assert (window.service.device, window.service.candidates, window.service.use_reranker) == (
        "cpu",
        24,
        False,
    )
    # A fresh QSettings on the same file (what the next start reads) sees every value.
    reread = AppSettings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    assert (reread.curator, reread.candidates, reread.device, reread.use_reranker, reread.prefetch) == (
        "ada",
        24,
        "cpu",
        False,
        2,
    )
    # The next decision is signed with the new name.
    window.curation.accept_rank(1)
    decision = window.project.curation.current_decisions()[window.model.mention_ids[0]]
    assert decision.curator == "ada"


def test_open_project_shows_it_in_a_new_window_and_closes_this_one(window, qtbot, tmp_path):
    """File > Open project: the window the File menu makes for the project (a factory the window hands
    it, so app/gui/desk_files.py never imports the window) shows that project; this one closes."""
    from core.store import Project

    folder = tmp_path / "other project"
    Project.create(folder).close()
    opened = window.files.switch_project(Project.open(folder))
    qtbot.addWidget(opened)
    try:
        assert type(opened) is type(window) and opened is not window
        assert opened.project.path == folder and opened.isVisible()
        assert opened.windowTitle() == "Curalink — other project"
        assert window.settings.last_project == folder
        qtbot.waitUntil(lambda: not window.isVisible(), timeout=5000)
    finally:
        opened.close()
        opened.service.shutdown()
