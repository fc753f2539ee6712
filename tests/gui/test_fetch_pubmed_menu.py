"""File ▸ Add PubMed abstracts by PMID (issue 23 item 14), driven through the real menu action and dialog
against the local efetch server of tests/efetch_server.py (no network)."""

from __future__ import annotations

import socket

from PySide6.QtWidgets import QDialogButtonBox, QMessageBox


def _ok(dialog):
    return dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)


def test_abstracts_by_pmid_from_the_file_menu(
    window, demo_project, app_settings, efetch_server, qtbot, tmp_path
):
    app_settings.eutils_url = efetch_server.url
    before = set(demo_project.documents.document_ids())
    file_actions = window.menuBar().actions()[0].menu().actions()
    assert window.menus.fetch_pubmed in file_actions  # after the imports, right before Export
    assert file_actions.index(window.menus.fetch_pubmed) + 1 == file_actions.index(window.files.act_export)
    window.menus.fetch_pubmed.trigger()
    dialog = window.menu_dialog
    assert dialog.isVisible()

    dialog.pmids_edit.setPlainText("91000001, 91000002\nPMID9")
    assert not _ok(dialog).isEnabled()
    assert "the PMID box, line 2, 'PMID9': not a PMID" in dialog.count_label.text()
    listed = tmp_path / "pmids.txt"
    listed.write_text("91000003\n91000001\n", encoding="utf-8")
    dialog.pmids_edit.setPlainText("91000001, 91000002")
    dialog.path_edit.setText(str(listed))
    assert _ok(dialog).isEnabled() and dialog.count_label.text() == "3 PMIDs"
    dialog.api_key_edit.setText("my-key")
    _ok(dialog).click()

    job = window.menu_job
    qtbot.waitUntil(job.done.is_set, timeout=30000)
    qtbot.waitUntil(lambda: "91000003" in window.queue.visible_ids(), timeout=10000)
    assert set(demo_project.documents.document_ids()) - before == {"91000001", "91000002", "91000003"}
    assert demo_project.documents.document("91000002").title == "Ataxia-telangiectasia in two siblings."
    assert "3 PubMed abstracts added" in window.statusBar().currentMessage()
    assert [r.ids for r in efetch_server.requests] == [["91000001", "91000002", "91000003"]]
    assert efetch_server.requests[0].fields["api_key"] == "my-key"
    assert app_settings.ncbi_api_key == "my-key"  # remembered for the next time


def test_offline_shows_one_clear_error_and_stores_nothing(window, demo_project, app_settings, qtbot):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app_settings.eutils_url = f"http://127.0.0.1:{port}/eutils/"
    before = set(demo_project.documents.document_ids())
    window.menus.fetch_pubmed.trigger()
    window.menu_dialog.pmids_edit.setPlainText("91000004")
    _ok(window.menu_dialog).click()
    qtbot.waitUntil(window.menu_job.done.is_set, timeout=30000)

    def error_box():
        boxes = [b for b in window.findChildren(QMessageBox) if b.isVisible()]
        return boxes[0] if boxes else None

    qtbot.waitUntil(lambda: error_box() is not None, timeout=5000)
    assert "cannot reach NCBI E-utilities" in error_box().text()
    assert "offline" in error_box().text()
    assert set(demo_project.documents.document_ids()) == before
