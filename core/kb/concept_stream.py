"""The concepts of one vocabulary file, with one unit of progress for the whole KB import.

A KB import is two pieces of work fed by one progress callback: the loader reads the file (it knows
how many bytes of it are read) and the store stores concepts (it knows how many it has stored). Fed
both, a progress bar drew "12,000 / 2,200,000" - concepts divided by bytes. `load_kb` therefore hands
out a `ConceptStream`: reading progress stays in bytes of the file on disk (the only unit with a known
end), the concept count goes into the message, and the store, given a stream, reports in the stream's
unit instead of its own count (core.store.kb_store).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from core.kb.concept import Concept
from core.progress import ProgressFn


class ConceptStream(Iterator[Concept]):
    """Iterates the concepts a loader yields; `done` / `total` are bytes of the file read so far."""

    def __init__(self, loader: Callable[[ProgressFn], Iterator[Concept]], progress: ProgressFn):
        self.done = 0
        self.total: int | None = None
        self.count = 0
        self.message = ""
        self._progress = progress
        self._concepts = loader(self._on_progress)

    def _on_progress(self, done: int, total: int | None, message: str = "") -> None:
        self.done, self.total, self.message = done, total, message
        self._progress(done, total, self.describe())

    def describe(self, what: str = "") -> str:
        """'reading medic.txt: 1,234 concepts' (and `what` after it)."""
        text = f"{self.message}: {self.count:,} concepts" if self.message else f"{self.count:,} concepts"
        return f"{text} {what}".strip()

    def __iter__(self) -> ConceptStream:
        return self

    def __next__(self) -> Concept:
        concept = next(self._concepts)
        self.count += 1
        return concept

    def close(self) -> None:
        close = getattr(self._concepts, "close", None)
        if close is not None:
            close()
