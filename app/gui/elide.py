"""Eliding a name so that what tells it from its neighbours stays: the words the shown names share (and
common words) are shortened first, the distinguishing ones last.

Qt's middle elision cut "Complement Factor H Deficiency", "… I …" and "… D …" alike to
"Complemen…eficiency" (issue 31): the one letter that differs went. Here the shared words give way,
"Compl. Factor H Defic." then "C. F. H D.", then "… H …", and a plain cut at the end comes last.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from PySide6.QtCore import QModelIndex, QPersistentModelIndex
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

ELLIPSIS = "…"
# Words a name can lose first wherever it stands: they never tell two concepts apart.
COMMON_WORDS = frozenset("a an and as at by due for from in into of on or the to with without type".split())
_WORD = re.compile(r"\S+")
_STRIP = ",;:()[]"


def _key(word: str) -> str:
    return word.strip(_STRIP).lower()


def shared_words(names: Iterable[str]) -> frozenset[str]:
    """Words (lower-cased, stripped of punctuation) found in at least two of `names`: what the names
    have in common, so the part of each one that differs is what remains."""
    seen: dict[str, int] = {}
    for name in names:
        for word in {_key(w) for w in _WORD.findall(name)}:
            seen[word] = seen.get(word, 0) + 1
    return frozenset(word for word, count in seen.items() if count > 1 and word)


def _shorten(word: str, keep: int) -> str:
    """ "Deficiency," → "Defic.," (keep 5); punctuation around the word stays; short words stay."""
    core = word.strip(_STRIP)
    if len(core) <= keep + 1:
        return word
    start = word.index(core)
    return word[:start] + core[:keep] + "." + word[start + len(core) :]


def elide_name(
    text: str, width: float, measure: Callable[[str], float], shared: frozenset[str] = frozenset()
) -> str:
    """`text` made to fit `width` (as `measure` measures), the distinguishing words kept longest: first
    shared and common words are shortened (to 5 letters, then 1), then dropped (a run of them becomes
    one "…"); only then are the other words shortened, the longest first, and at last the end is cut. Returns `text` unchanged when it fits."""
    if measure(text) <= width:
        return text
    words = _WORD.findall(text)
    if not words:
        return text
    weak = [i for i, w in enumerate(words) if _key(w) in shared or _key(w) in COMMON_WORDS]
    # the longest weak words give way first: they free the most room
    weak.sort(key=lambda i: -len(words[i]))
    shown: list[str | None] = list(words)

    def joined() -> str:
        out: list[str] = []
        for word in shown:
            if word is None:
                if not out or out[-1] != ELLIPSIS:
                    out.append(ELLIPSIS)
            else:
                out.append(word)
        return " ".join(out)

    def fits() -> bool:
        return measure(joined()) <= width

    for keep in (5, 1):
        for i in weak:
            shown[i] = _shorten(words[i], keep)
            if fits():
                return joined()
    if len(weak) < len(words):  # drop weak words, never every word
        for i in weak:
            shown[i] = None
            if fits():
                return joined()
    strong = sorted((i for i, w in enumerate(shown) if w is not None), key=lambda i: -len(words[i]))
    for keep in (5, 1) if len(strong) > 1 else (5,):  # one word alone is cut at its end, not to "S."
        for i in strong:  # the longest first; a short word ("3", "H") is often what differs
            shown[i] = _shorten(words[i], keep)
            if fits():
                return joined()
    return _cut_end(joined(), width, measure)


def _cut_end(text: str, width: float, measure: Callable[[str], float]) -> str:
    """The longest start of `text` that fits with "…" after it (binary search on the length)."""
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if measure(text[:middle].rstrip() + ELLIPSIS) <= width:
            low = middle
        else:
            high = middle - 1
    return text[:low].rstrip() + ELLIPSIS


_Index = QModelIndex | QPersistentModelIndex


class DistinguishingElide(QStyledItemDelegate):
    """A table column whose names are elided by `elide_name` against the other rows of that column (the
    words they share give way first). The tooltip keeps the whole name."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._shared: dict[tuple[int, int], frozenset[str]] = {}

    def forget(self) -> None:
        """The rows changed: the shared words are counted again at the next paint."""
        self._shared.clear()

    def _shared_for(self, index: _Index) -> frozenset[str]:
        model = index.model()
        key = (id(model), index.column())
        if key not in self._shared:
            names = (str(model.index(row, index.column()).data() or "") for row in range(model.rowCount()))
            self._shared[key] = shared_words(names)
        return self._shared[key]

    def initStyleOption(self, option: QStyleOptionViewItem, index: _Index) -> None:
        super().initStyleOption(option, index)
        if not option.text:
            return
        widget = option.widget
        style = widget.style() if widget is not None else None
        margin = (
            (style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, widget) + 1) * 2 if style else 6
        )
        room = option.rect.width() - margin - 2  # Qt's own text margins, and a pixel to spare each side
        option.text = elide_name(
            option.text, room, option.fontMetrics.horizontalAdvance, self._shared_for(index)
        )
