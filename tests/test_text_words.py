"""Word snapping and word-wise span edges (issue 12 item 4.3), against spans read off by hand."""

from __future__ import annotations

from core.text.words import end_word_left, end_word_right, snap_to_words, start_word_left, start_word_right

TEXT = "Risk of non-Hodgkin lymphoma, (AT) and breast cancer."


def _span(piece: str) -> tuple[int, int]:
    start = TEXT.index(piece)
    return start, start + len(piece)


def test_a_selection_inside_words_grows_to_whole_words_without_punctuation() -> None:
    assert snap_to_words(TEXT, *_span("odgkin lymph")) == _span("Hodgkin lymphoma")
    assert snap_to_words(TEXT, *_span("n-Hodg")) == _span("non-Hodgkin")
    assert snap_to_words(TEXT, _span(" breast")[0], len(TEXT)) == _span("breast cancer.")
    assert snap_to_words(TEXT, *_span("lymphoma, ")) == _span("lymphoma,")  # selected punctuation stays
    assert snap_to_words(TEXT, *_span("AT")) == _span("AT")
    assert snap_to_words(TEXT, *_span("reast canc")) == _span("breast cancer")
    assert snap_to_words(TEXT, *_span(" ")) is None


def test_edges_move_a_word_at_a_time() -> None:
    start, end = _span("breast")
    assert end_word_right(TEXT, start, end) == _span("breast cancer")[1]
    assert end_word_right(TEXT, *_span("cancer.")) is None
    assert end_word_left(TEXT, *_span("breast cancer")) == _span("breast")[1]
    assert end_word_left(TEXT, *_span("breast")) is None
    assert end_word_left(TEXT, *_span("lymphoma,")) == _span("lymphoma")[1]
    assert start_word_left(TEXT, *_span("lymphoma")) == _span("Hodgkin")[0]
    assert start_word_left(TEXT, *_span("breast")) == _span("and")[0]
    assert start_word_left(TEXT, *_span("Risk")) is None
    assert start_word_right(TEXT, *_span("and breast")) == _span("breast")[0]
    assert start_word_right(TEXT, *_span("(AT) and")) == _span("AT) and")[0]
    assert start_word_right(TEXT, *_span("breast")) is None
