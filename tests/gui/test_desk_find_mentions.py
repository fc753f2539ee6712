"""The desk's "find mentions" on raw text: Ctrl+Shift+M tags the open raw abstract (the project's
detector: here the KB dictionary, as the demo has no span model), shows the new mentions and their
suggestions, leaves a gold abstract alone and says why; uncertain detected spans are drawn apart until
a curator decides them."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCharFormat, QTextCursor

from core.documents import Document, Mention, Passage

RAW_TITLE = "Huntington disease and cystic fibrosis in one family"
RAW_BODY = "A patient with Huntington disease had a sister with cystic fibrosis; asthma was treated."


def _raw_document(doc_id: str = "raw-1") -> Document:
    passages = (Passage(0, RAW_TITLE, "title"), Passage(len(RAW_TITLE) + 1, RAW_BODY, "abstract"))
    return Document(doc_id, passages)


def _spans(text: str, *words: str) -> list[tuple[int, int]]:
    """Every occurrence of each word in `text`, in text order (found here with str.find, not the detector)."""
    found = []
    for word in words:
        at = text.find(word)
        while at >= 0:
            found.append((at, at + len(word)))
            at = text.find(word, at + 1)
    return sorted(found)


def _press_find(window, qtbot):
    qtbot.keyClick(
        window, Qt.Key.Key_M, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )
    return window.links.active_job


def _run(window, qtbot, trigger) -> object:
    with qtbot.waitSignal(window.service.mentionsFound, timeout=60000):
        job = trigger()
    assert job is not None
    qtbot.waitUntil(lambda: job.done.is_set(), timeout=120000)
    qtbot.waitUntil(lambda: window.links.active_job is None, timeout=10000)
    return job


def test_find_mentions_tags_the_raw_abstract_and_links_them(window, demo_project, qtbot) -> None:
    demo_project.documents.import_documents([_raw_document()], source="", split="")
    window.document.reload_queue()
    window.document.open_document("raw-1")
    assert window.model.mention_ids == []

    found = []
    window.service.mentionsFound.connect(lambda pair: found.append(pair[0]))
    _run(window, qtbot, lambda: _press_find(window, qtbot))

    text = window.model.doc.text
    expected = _spans(text, "Huntington disease", "cystic fibrosis", "asthma")
    assert [(m.start, m.end) for m in window.model.doc.mentions] == expected, "shown in the open abstract"
    assert [(m.start, m.end) for m in demo_project.documents.document("raw-1").mentions] == expected, "stored"
    assert all(m.origin == "detected" and m.type for m in window.model.doc.mentions)
    assert found[0].added == len(expected) and "dictionary" in found[0].detector
    assert "found 5 mention(s) in 1 document(s) with the dictionary" in window.statusBar().currentMessage()
    # linked right after: every new mention has suggestions, the KB's concept on top
    qtbot.waitUntil(
        lambda: all(window.model.suggestions.get(m) for m in window.model.mention_ids), timeout=30000
    )
    tops = [window.model.suggestions[m][0].concept_id for m in window.model.mention_ids]
    assert tops == ["D006816", "D003550", "D006816", "D003550", "D001249"]
    assert window.queue.entry("raw-1").mentions == len(expected)


def test_find_mentions_leaves_a_gold_abstract_alone_and_says_why(window, demo_project, qtbot) -> None:
    doc_id = window.model.doc.doc_id
    before = demo_project.documents.document(doc_id).mentions
    _run(window, qtbot, window.detect.find_mentions_here)
    assert demo_project.documents.document(doc_id).mentions == before
    message = window.statusBar().currentMessage()
    assert "found 0 mention(s)" in message and "1 document(s) skipped: annotated by a gold file" in message


def test_find_mentions_in_every_raw_document_skips_the_annotated_ones(window, demo_project, qtbot) -> None:
    demo_project.documents.import_documents([_raw_document("raw-1"), _raw_document("raw-2")], source="", split="")
    window.document.reload_queue()
    job = _run(window, qtbot, window.detect.find_mentions_in_raw)
    assert job is not None
    for doc_id in ("raw-1", "raw-2"):
        assert len(demo_project.documents.document(doc_id).mentions) == 5
    assert window.detect.find_mentions_in_raw() is None, "nothing raw is left"


def _format_at(window, offset: int) -> QTextCharFormat:
    cursor = QTextCursor(window.abstract.document())
    cursor.setPosition(offset + 1)
    return cursor.charFormat()


def test_uncertain_detected_spans_are_drawn_apart_until_decided(window, demo_project, qtbot) -> None:
    document = _raw_document()
    hd, cf = _spans(document.text, "Huntington disease")[0], _spans(document.text, "cystic fibrosis")[0]
    unsure = Mention(
        hd[0], hd[1], "Huntington disease", "Disease", origin="detected", infons={"probability": 0.61}
    )
    sure = Mention(
        cf[0], cf[1], "cystic fibrosis", "Disease", origin="detected", infons={"probability": 0.97}
    )
    demo_project.documents.import_documents([document.with_mentions([unsure, sure])], source="", split="")
    window.document.reload_queue()
    window.document.open_document("raw-1")
    dotted = QTextCharFormat.UnderlineStyle.DotLine
    assert _format_at(window, hd[0]).underlineStyle() == dotted and _format_at(window, hd[0]).fontItalic()
    assert _format_at(window, cf[0]).underlineStyle() != dotted and not _format_at(window, cf[0]).fontItalic()
    tip = window.abstract.tooltip_html(window.abstract.mentions_at(hd[0]))
    assert "probability 0.61" in tip and "uncertain" in tip

    window.document.select_mention(0)
    window.curation.decide("nil")  # any decision settles it
    qtbot.waitUntil(lambda: window.model.mention_ids[0] in window.model.decisions, timeout=10000)
    assert _format_at(window, hd[0]).underlineStyle() != dotted
