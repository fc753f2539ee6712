"""The desk's KB search, driven by keyboard in the real window: forgiving matches, ids, and a concept
pane that follows the highlighted result (definition, types, tree numbers, parents by name, links)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Qt, QUrl, Slot
from PySide6.QtGui import QDesktopServices

from app.gui.concept_pane import ConceptPane
from app.gui.dialogs import KEY_HELP
from core.kb import load_kb
from core.kb.concept import Concept

# One row as MeSH / CTD describe "Carcinoma, Ductal, Breast": a child of Breast Neoplasms (in the demo
# KB) and of Carcinoma, Ductal (not in it: shown by id).
DUCTAL = (
    "id\tname\tsynonyms\tdefinition\tparents\ttree_numbers\tsemantic_types\talt_ids\n"
    "D018270\tCarcinoma, Ductal, Breast\tMammary Ductal Carcinoma|Invasive Ductal Carcinoma, Breast\t"
    "An invasive (infiltrating) carcinoma of the mammary ductal system in the human breast.\t"
    "D001943|D044584\tC04.557.470.200.025.232.500|C17.800.090.500.390\tNeoplastic Process\tDO:DOID:3008\n"
)


def _open_search(window, qtbot, text: str):
    qtbot.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    dialog = window.curation.kb_dialog
    assert dialog is not None and dialog.isVisible()
    dialog.query.clear()
    qtbot.keyClicks(dialog.query, text)
    qtbot.waitUntil(lambda: bool(dialog.result_ids()), timeout=3000)
    return dialog


def test_fuzzy_hit_and_arrow_keys_drive_the_concept_pane(window, demo_project, qtbot):
    dialog = _open_search(window, qtbot, "leukaemia")  # the demo KB spells it Leukemia
    assert dialog.result_ids()[0] == "D007938"
    pane = dialog.concept.toPlainText()
    assert pane.startswith("Leukemia") and "Leucocythaemia" in pane
    assert "MeSH D007938" in pane
    assert "https://meshb.nlm.nih.gov/record/ui?ui=D007938" in dialog.concept.toHtml()

    dialog.query.clear()
    qtbot.keyClicks(dialog.query, "cancer breast")  # word order
    qtbot.waitUntil(lambda: dialog.result_ids()[:1] == ["D001943"], timeout=3000)
    assert dialog.concept.toPlainText().startswith("Breast Neoplasms")

    dialog.query.clear()
    qtbot.keyClicks(dialog.query, "tumour")  # Tumors, then Breast Tumors, Colorectal Tumors
    qtbot.waitUntil(lambda: dialog.result_ids()[:1] == ["D009369"], timeout=3000)
    assert {"D001943", "D015179"} <= set(dialog.result_ids()[1:3])
    assert dialog.concept.toPlainText().startswith("Neoplasms")
    second = dialog.result_ids()[1]
    qtbot.keyClick(dialog.query, Qt.Key.Key_Down)
    assert dialog.results.currentRow() == 1
    assert dialog.concept.toPlainText().startswith(demo_project.kb.concept(second).preferred_name)
    qtbot.keyClick(dialog.query, Qt.Key.Key_Up)
    assert dialog.concept.toPlainText().startswith("Neoplasms")

    dialog.query.clear()
    qtbot.keyClicks(dialog.query, "diabtes")  # a typo
    qtbot.waitUntil(lambda: dialog.result_ids()[:1] == ["D003920"], timeout=3000)
    assert dialog.concept.toPlainText().startswith("Diabetes Mellitus")
    qtbot.keyClick(dialog.query, Qt.Key.Key_Escape)
    assert not dialog.isVisible()


def test_any_id_finds_the_concept_and_enter_links_it(window, demo_project, qtbot):
    mention_id = window.model.mention_ids[0]
    dialog = _open_search(window, qtbot, "mesh:d001943")
    assert dialog.result_ids() == ["D001943"]
    qtbot.keyClick(dialog.query, Qt.Key.Key_Return)
    decision = demo_project.curation.current_decisions()[mention_id]
    assert (decision.action, decision.concept_id) == ("correct", "D001943")


def test_pane_shows_definition_types_tree_and_parents_by_name(window, demo_project, qtbot, tmp_path: Path):
    kb = tmp_path / "ductal.tsv"
    kb.write_text(DUCTAL, encoding="utf-8")
    demo_project.kb.import_concepts(load_kb(kb, "tsv"))
    dialog = _open_search(window, qtbot, "mammary ductal carcinoma")
    assert dialog.result_ids()[0] == "D018270"
    text = dialog.concept.toPlainText()
    assert "An invasive (infiltrating) carcinoma of the mammary ductal system" in text
    assert "Neoplastic Process" in text
    assert "C04.557.470.200.025.232.500" in text
    assert "Breast Neoplasms (D001943)" in text  # a parent in the KB, by name
    assert "D044584" in text and "(D044584)" not in text  # a parent outside it, by id
    assert "Also known as DOID:3008" in text  # the TSV reader keeps Disease Ontology ids as DOID:...


class _Browser(QObject):
    """Stands where the system browser would: QDesktopServices hands it the https links."""

    def __init__(self):
        super().__init__()
        self.opened: list[str] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.opened.append(url.toString())


def test_links_open_in_the_browser_or_show_as_text(qtbot):
    concept = Concept("D001943", "MESH", "Breast Neoplasms", ("Breast Cancer",), alt_ids=("OMIM:114480",))
    pane = ConceptPane()
    qtbot.addWidget(pane)
    pane.links_open = True
    pane.show_concept(concept)
    page = pane.toHtml()
    assert 'href="https://meshb.nlm.nih.gov/record/ui?ui=D001943"' in page
    assert 'href="https://omim.org/entry/114480"' in page
    browser = _Browser()
    QDesktopServices.setUrlHandler("https", browser, "open")
    try:
        pane.anchorClicked.emit(QUrl("https://omim.org/entry/114480"))
    finally:
        QDesktopServices.unsetUrlHandler("https")
    assert browser.opened == ["https://omim.org/entry/114480"]

    pane.links_open = False  # no browser: the addresses as plain, copyable text
    pane.show_concept(concept)
    assert "href=" not in pane.toHtml()
    assert "OMIM 114480: https://omim.org/entry/114480" in pane.toPlainText()


def test_f1_help_lists_the_kb_search():
    keys = dict(KEY_HELP)
    assert "id" in keys["Ctrl+F  or  /"] and "↑/↓" in keys["Ctrl+F  or  /"]
