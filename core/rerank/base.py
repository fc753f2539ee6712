"""The one interface the pipeline, the GUI and the benchmark use to rerank candidates."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from core.documents import Candidate, Document


@runtime_checkable
class Reranker(Protocol):
    """Rescores retriever candidates in context; interchangeable so benchmarks compare like for like."""

    @property
    def device_description(self) -> str: ...

    def rerank(
        self,
        documents: Sequence[Document],
        candidates: Sequence[Sequence[Sequence[Candidate]]],
    ) -> list[list[list[Candidate]]]:
        """Per document, per mention: the candidates with `reranker_score` set, best first.

        Mentions without candidates come back with an empty list; an empty document gives [].
        """
        ...
