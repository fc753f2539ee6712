"""A mention as the pipeline queried it (light: imported by the pipeline before any model is loaded)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MentionQuery:
    """One mention as the pipeline queried it: the document, the raw text and the query strings."""

    doc_id: str
    text: str
    queries: tuple[str, ...]  # the expanded text first, then composite parts
    admitted: frozenset[str] | None = None  # concepts the mention's type route admits (None: all)

    @property
    def expanded(self) -> bool:
        return bool(self.queries) and self.queries[0] != self.text
