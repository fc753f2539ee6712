"""Retrieval restricted to the concepts a route admits (core.kb.routing): over-fetch, filter, widen.

Any retriever works unchanged (one index for the whole KB, no per-route sub-index to build or keep in
step with curator synonyms). A query whose admitted candidates fall short of k is searched again with
four times as many candidates, until k are found or the retriever has no more to give, so the result is
the retriever's own top-k among the admitted concepts: routing never costs recall, only time on a
query whose neighbours are mostly of another type.

Measured with `curalink bench routing --model <project>/models/retriever/v2` (NCBI-disease test,
960 mentions, 782 with a MeSH gold id, against all 27,453 MeSH 2015 descriptors, Disease route 4,756,
k = 16, 2 shared cores): ResCNN unrouted acc@1 70.08 / recall@16 90.15 in 1.64 s; routed by
over-fetch 74.68 / 91.43 in 2.49 s, every list identical to a separate index over the route's
concepts (74.68 / 91.43 in 1.14 s, plus 4.8 s to build it); the same texts down the Chemical route,
where nothing near them is admitted, 2.75 s. A sub-index is faster per query but is one more index
per route to build, store and keep in step with curator synonyms (memory multiplied on all of UMLS);
over-fetching keeps one index and gives the same lists, so the Linker over-fetches.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from core.documents import Candidate
from core.retrieve.base import Retriever

ROUTE_OVERFETCH = 4
"""Candidates fetched per wanted one on the first try (see the measurement in the module's tests)."""


def retrieve_routed(
    retriever: Retriever,
    queries: Sequence[str],
    k: int,
    admitted: Collection[str] | None,
    *,
    concepts: int,
    stats: dict[str, int] | None = None,
) -> list[list[Candidate]]:
    """Per query, the best k candidates among `admitted` concept ids (None: no filter).

    `concepts` is the size of the KB (the most any search can return); `stats` counts searches.
    """
    if admitted is None:
        return retriever.retrieve(queries, k) if queries else []
    results: list[list[Candidate]] = [[] for _ in queries]
    if not admitted or not queries:
        return results
    pending = list(range(len(queries)))
    fetch = min(concepts, k * ROUTE_OVERFETCH)
    while pending:
        found = retriever.retrieve([queries[i] for i in pending], fetch)
        if stats is not None:
            stats["searches"] = stats.get("searches", 0) + 1
            stats["queries"] = stats.get("queries", 0) + len(pending)
        again: list[int] = []
        for position, candidates in zip(pending, found, strict=True):
            kept = [c for c in candidates if c.concept_id in admitted][:k]
            results[position] = kept
            if len(kept) < k and len(candidates) >= fetch and fetch < concepts:
                again.append(position)
        pending = again
        fetch = min(concepts, fetch * 4)
    return results


def retrieve_plans(retriever: Retriever, plans, k: int, router=None) -> list[list[list[Candidate]]]:
    """Per document, per mention: its query plan's merged candidates, each mention searched among the
    concepts its type's route admits (`router`: core.kb.routing.TypeRouter; None: all concepts). The
    `Linker` and `evaluate retriever` both retrieve through here, so a figure measures what the desk runs."""
    from core.retrieve.query_plan import retrieve_planned

    if router is None:
        return retrieve_planned(retriever, plans, k)

    def search(route: str, texts: list[str], wanted: int) -> list[list[Candidate]]:
        return retrieve_routed(retriever, texts, wanted, router.admitted(route), concepts=len(router.kb))

    return retrieve_planned(
        retriever, plans, k, route_of=lambda plan: router.route_key(plan.type), search=search
    )
