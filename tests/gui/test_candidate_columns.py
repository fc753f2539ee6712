"""The candidate table is readable without clicking each row (issue 23 item 7): long ids and names keep
both ends, every column can be widened, empty columns give their room away, and the score the list is
ordered by is named for the model that produced it."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHeaderView

from app.gui.candidate_panel import FINAL_COLUMN, RETRIEVER_COLUMN, CandidatePanel, order_source
from core.documents import Candidate
from core.kb.concept import Concept

# MEDIC rows as a curator met them: OMIM ids that differ only at the end, names that share a long start.
MEDIC = [
    Candidate("OMIM:613025", "Lupus Erythematosus, Systemic, susceptibility to, 16", "", 0.612, 0.41),
    Candidate("OMIM:613145", "Lupus Erythematosus, Systemic, susceptibility to, 17", "", 0.587, 0.22),
    Candidate("MESH:D008180", "Lupus Erythematosus, Systemic", "systemic lupus", 0.0, 0.18),
]
CONCEPTS = {c.concept_id: Concept(c.concept_id, "MEDIC", c.name) for c in MEDIC}


def _panel(qtbot, candidates, concepts, source, width=520):
    panel = CandidatePanel()
    qtbot.addWidget(panel)
    panel.resize(width, 300)
    panel.show()
    qtbot.waitExposed(panel)
    panel.show_candidates("<b>lupus</b>", candidates, concepts, [], source)
    return panel


def test_long_ids_and_names_keep_both_ends_with_the_whole_text_in_the_tooltip(qtbot):
    panel = _panel(qtbot, MEDIC, CONCEPTS, "ranker")
    view, model = panel.view, panel.model
    assert view.textElideMode() == Qt.TextElideMode.ElideMiddle
    # The id column is wide enough for the whole OMIM id: no two rows read the same.
    metrics = view.fontMetrics()
    shown_ids = [
        metrics.elidedText(c.concept_id, Qt.TextElideMode.ElideMiddle, view.columnWidth(1) - 14)
        for c in MEDIC
    ]
    assert len(set(shown_ids)) == len(MEDIC), shown_ids
    for row, candidate in enumerate(MEDIC):
        assert candidate.name in model.index(row, 2).data(Qt.ItemDataRole.ToolTipRole)
        assert candidate.concept_id in model.index(row, 1).data(Qt.ItemDataRole.ToolTipRole)


def test_every_column_can_be_resized_and_a_dragged_width_is_kept(qtbot):
    panel = _panel(qtbot, MEDIC, CONCEPTS, "ranker")
    header = panel.view.horizontalHeader()
    modes = [header.sectionResizeMode(c) for c in range(panel.model.columnCount())]
    assert all(m in (QHeaderView.ResizeMode.Interactive, QHeaderView.ResizeMode.Stretch) for m in modes), (
        modes
    )
    header.resizeSection(1, 231)  # as a drag of the header's edge does
    panel.resize(600, 300)
    qtbot.waitUntil(lambda: panel.view.viewport().width() > 520)
    panel.show_candidates("<b>lupus</b>", MEDIC, CONCEPTS, [], "ranker")
    assert panel.view.columnWidth(1) == 231


def test_empty_columns_are_hidden_and_come_back_when_they_hold_something(qtbot):
    # wide enough for every text column (narrower, they give their room to the name: issue 31)
    panel = _panel(qtbot, MEDIC, CONCEPTS, "ranker", width=900)
    view = panel.view
    assert view.isColumnHidden(4)  # MEDIC: no tree numbers or semantic types
    assert not view.isColumnHidden(3)  # one row matched a synonym
    mesh = {c.concept_id: Concept(c.concept_id, "MeSH", c.name, tree_numbers=("C17.300.480",)) for c in MEDIC}
    plain = [Candidate(c.concept_id, c.name, c.name, c.retriever_score, None) for c in MEDIC]
    panel.show_candidates("<b>lupus</b>", plain, mesh, [], "retriever")
    assert not view.isColumnHidden(4) and view.isColumnHidden(3)
    assert view.isColumnHidden(FINAL_COLUMN)  # no final score without a ranker or a cross-encoder


def test_the_order_column_is_named_for_its_model_and_candidates_without_a_retriever_score_say_why(qtbot):
    panel = _panel(qtbot, MEDIC, CONCEPTS, order_source(ranker_active=True, reranker_active=False))
    model = panel.model
    title = model.headerData(FINAL_COLUMN, Qt.Orientation.Horizontal)
    assert title.startswith("P(right)")
    assert "calibrated probability" in model.headerData(
        FINAL_COLUMN, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole
    )
    # Row 3 came from TF-IDF or the prior, not the retriever: no misleading 0.000 above the real scores.
    assert model.index(2, RETRIEVER_COLUMN).data() == "—"
    assert "not among the retriever's candidates" in model.index(2, RETRIEVER_COLUMN).data(
        Qt.ItemDataRole.ToolTipRole
    )
    assert [model.index(r, FINAL_COLUMN).data() for r in range(3)] == ["0.410", "0.220", "0.180"]
    assert order_source(False, True) == "cross-encoder"
    panel.show_candidates("<b>lupus</b>", MEDIC, CONCEPTS, [], order_source(False, True))
    assert model.headerData(FINAL_COLUMN, Qt.Orientation.Horizontal).startswith("Cross-enc.")
