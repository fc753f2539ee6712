"""The one interface the pipeline uses to put candidates in their final order with calibrated scores."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from core.documents import Candidate
from core.progress import NEVER_CANCELLED, CancelToken
from core.rank.query import MentionQuery


@runtime_checkable
class Ranker(Protocol):
    """Orders each mention's candidates (retrieved, maybe reranked) by one probability per candidate;
    a learned model and a baseline are interchangeable behind it, as retrievers and rerankers are."""

    @property
    def version(self) -> str: ...

    @property
    def uses_cross_encoder(self) -> bool:
        """Whether its order depends on the cross-encoder's scores (the pipeline then reranks first)."""
        ...

    def rank(
        self,
        queries: Sequence[Sequence[MentionQuery]],
        candidates: Sequence[Sequence[Sequence[Candidate]]],
        k: int,
        *,
        cancel: CancelToken = NEVER_CANCELLED,
    ) -> list[list[list[Candidate]]]:
        """Per document, per mention: the top-k candidates, the probability in `reranker_score`."""
        ...
