"""File > Export knowledge base… writes the project's KB, curator synonyms included, through the same core
function as `curalink kb export` (offscreen Qt, the real window and file dialog)."""

from __future__ import annotations

from PySide6.QtWidgets import QFileDialog


def test_export_knowledge_base_from_the_file_menu(window, demo_project, qtbot, tmp_path):
    from core.kb import load_kb
    from core.learn.synonyms import learn_synonyms

    document, mention_ids = next(demo_project.documents.documents_with_mention_ids())
    mention = next(m for m in document.mentions if len(m.concept_ids) == 1)
    curator_name = "a curator's own name for it"
    demo_project.kb.add_names(mention.concept_id, [curator_name], source="curator")
    learn_synonyms(demo_project)

    file_menu = window.menuBar().actions()[0].menu()
    assert window.files.act_export_kb in file_menu.actions()
    assert window.files.act_export_kb.text() == "Export knowledge base…"
    window.files.act_export_kb.trigger()
    dialog = window.menu_dialog
    assert isinstance(dialog, QFileDialog) and dialog.isVisible()
    out = tmp_path / "exported.obo"
    dialog.selectNameFilter("OBO (*.obo)")
    dialog.selectFile(str(out))
    dialog.accept()
    qtbot.waitUntil(lambda: window.menu_job is not None and window.menu_job.done.is_set(), timeout=30000)

    reread = {c.concept_id: c for c in load_kb(out, "obo")}
    kb = demo_project.kb.knowledge_base()
    assert set(reread) == set(kb.concepts)
    assert curator_name in reread[kb.resolve(mention.concept_id)].synonyms
    qtbot.waitUntil(
        lambda: f"exported {len(kb)} concepts" in window.statusBar().currentMessage(), timeout=5000
    )
