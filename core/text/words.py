"""Word edges for mention spans: a mouse selection snapped to whole words, and span edges moved a word at
a time from the keyboard (INCEpTION's and brat's token snapping).

A word is a run of letters and digits (`str.isalnum`): punctuation and hyphens end one, so snapping
"Hodg" in "non-Hodgkin" gives "Hodgkin", and a selection ending in "cancer," stays without the comma.
"""

from __future__ import annotations


def _word(text: str, index: int) -> bool:
    return 0 <= index < len(text) and text[index].isalnum()


def snap_to_words(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The selection without surrounding white space, each edge that falls inside a word moved out to
    the word's edge; None when nothing but white space was selected."""
    start, end = max(0, start), min(end, len(text))
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start >= end:
        return None
    while _word(text, start - 1) and _word(text, start):
        start -= 1
    while _word(text, end - 1) and _word(text, end):
        end += 1
    return start, end


def end_word_right(text: str, start: int, end: int) -> int | None:
    """The end moved past the next word (and the gap before it); None at the end of the text."""
    position = end
    while position < len(text) and not _word(text, position):
        position += 1
    while _word(text, position):
        position += 1
    return position if position > end and position <= len(text) else None


def end_word_left(text: str, start: int, end: int) -> int | None:
    """The end moved back to the end of the word before the span's last one; None when the span holds
    one word only."""
    position = end
    while position > start and _word(text, position - 1):
        position -= 1
    while position > start and not _word(text, position - 1):
        position -= 1
    return position if start < position < end else None


def start_word_left(text: str, start: int, end: int) -> int | None:
    """The start moved back to the start of the previous word; None at the start of the text."""
    position = start
    while position > 0 and not _word(text, position - 1):
        position -= 1
    while _word(text, position - 1):
        position -= 1
    return position if position < start and _word(text, position) else None


def start_word_right(text: str, start: int, end: int) -> int | None:
    """The start moved forward to the span's second word; None when the span holds one word only."""
    position = start
    while position < end and _word(text, position):
        position += 1
    while position < end and not _word(text, position):
        position += 1
    return position if start < position < end else None


def word_bounded(text: str, start: int, end: int) -> bool:
    """Whether [start, end) neither starts nor ends inside a word ("HD" in "HD," yes; in "HDL" no)."""
    return not (_word(text, start - 1) and _word(text, start)) and not (
        _word(text, end - 1) and _word(text, end)
    )
