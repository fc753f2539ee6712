"""`Linker`: plan -> retrieve -> rerank -> rank for the documents it is given.

It is a pure stage composition: it loads nothing (core.project_models loads a project's models into
one), writes nothing and learns nothing; core.jobs.linking.suggestions stores what it suggests.

Mention text is prepared by the one query plan (core.retrieve.query_plan) that `evaluate`, the
benchmarks and retraining use too: abbreviations defined in the same document are expanded, and a
composite mention ("breast and ovarian cancer") is also searched part by part, the parts' candidates
merged by rank so each named concept surfaces near the top. With a type router
(core.kb.routing) a mention is only offered concepts its type's route admits. Every plan's strings are
written in the KB's own spelling first (core.kb.respell: "hypoglycaemia" is searched and ranked as
"hypoglycemia"), the spelling the dictionary tagger and KB search already fold to.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from core.documents import Candidate, Document
from core.kb.knowledge_base import KnowledgeBase
from core.kb.respell import KbSpelling
from core.kb.routing import TypeRouter
from core.progress import NEVER_CANCELLED, CancelToken
from core.rank.base import Ranker
from core.rank.query import MentionQuery
from core.rerank.base import Reranker
from core.retrieve.base import Retriever
from core.retrieve.query_plan import QueryPlan, plan_documents, respelled
from core.retrieve.routed import retrieve_plans

log = logging.getLogger(__name__)

DEFAULT_CANDIDATES = 16


class Linker:
    def __init__(
        self,
        retriever: Retriever,
        reranker: Reranker | None = None,
        *,
        candidates: int = DEFAULT_CANDIDATES,
        retriever_version: str = "",
        reranker_version: str = "",
        router: TypeRouter | None = None,
        ranker: Ranker | None = None,
        ranker_note: str = "",
        kb: KnowledgeBase | None = None,
        device: str = "auto",
        respell: bool = True,
    ):
        self.retriever = retriever
        self.router = router
        self.reranker = reranker
        self.candidates = candidates
        self.retriever_version = retriever_version
        self.reranker_version = reranker_version
        self.ranker = ranker
        self.ranker_note = ranker_note  # why no ranker is applied, for the front ends to show
        self.kb = kb  # the KB the name index was built from (detection tags with the same one)
        self.device = device
        self.respell = respell  # False: queries as written (`curalink bench spelling` compares the two)
        self._spelling: tuple[int, KbSpelling] | None = None  # (id of the KB it counts, its spelling)

    @property
    def device_description(self) -> str:
        retriever = "retriever: CPU"
        ranker = f"; ranker {self.ranker.version}" if self.ranker is not None else ""
        if self.reranker is None:
            return f"{retriever}; reranker: not trained{ranker}"
        if not self._cross_encoder_used:
            return f"{retriever}; reranker: not applied (the ranker does not use it){ranker}"
        return f"{retriever}; reranker: {self.reranker.device_description}{ranker}"

    @property
    def _cross_encoder_used(self) -> bool:
        """A ranker trained without cross-encoder features decides the order alone: the cross-encoder
        would cost time and change nothing."""
        return self.reranker is not None and (self.ranker is None or self.ranker.uses_cross_encoder)

    @property
    def ranked_version(self) -> str:
        """What the stored final scores come from: the reranker version, the ranker's, or both."""
        parts = [self.reranker_version] if self._cross_encoder_used else []
        if self.ranker is not None:
            parts.append(f"ranker {self.ranker.version}")
        return "+".join(p for p in parts if p)

    def spelling(self) -> KbSpelling | None:
        """The KB's spelling of words, counted once per KB (a tenth of a second for MEDIC); None
        without a KB or with `respell` off."""
        kb = self.kb if self.kb is not None else getattr(self.retriever, "kb", None)
        if kb is None or not self.respell:
            return None
        if self._spelling is None or self._spelling[0] != id(kb):
            self._spelling = (id(kb), KbSpelling.of(kb))
        return self._spelling[1]

    def plans(self, documents: Sequence[Document]) -> list[list[QueryPlan]]:
        """The one query plan of every mention, its strings in the KB's spelling."""
        spelling = self.spelling()
        planned = plan_documents(documents)
        if spelling is None:
            return planned
        return [[respelled(plan, spelling.respell) for plan in plans] for plans in planned]

    def plan(self, documents: Sequence[Document]) -> list[list[MentionQuery]]:
        """Per document, per mention: the one query plan's strings, with the concepts its route admits
        (the ranker adds TF-IDF and prior concepts; a route keeps them to the mention's type)."""
        router = self.router
        return [
            [
                MentionQuery(
                    document.doc_id,
                    plan.text,
                    plan.queries,
                    router.admitted_for(plan.type) if router is not None else None,
                )
                for plan in plans
            ]
            for document, plans in zip(documents, self.plans(documents), strict=True)
        ]

    def retrieve(self, documents: Sequence[Document]) -> list[list[list[Candidate]]]:
        """Per document, per mention: the retriever's candidates (no reranking)."""
        return retrieve_plans(self.retriever, self.plans(documents), self.candidates, self.router)

    def suggest(self, documents: Sequence[Document]) -> list[list[list[Candidate]]]:
        """Per document, per mention: ranked candidates (reranked / ranked when those are loaded)."""
        return self.rank(documents, self.retrieve(documents))

    def rank(
        self,
        documents: Sequence[Document],
        candidates: list[list[list[Candidate]]],
        *,
        cancel: CancelToken = NEVER_CANCELLED,
    ) -> list[list[list[Candidate]]]:
        """The retriever's candidates through the cross-encoder (when used) and the ranker (when in force)."""
        if not any(any(doc) for doc in candidates):
            return candidates
        if self._cross_encoder_used:
            candidates = self.reranker.rerank(documents, candidates)
        if self.ranker is not None:
            candidates = self.ranker.rank(self.plan(documents), candidates, self.candidates, cancel=cancel)
        return candidates

    @property
    def ranks(self) -> bool:
        """Whether `rank` changes the retriever's order (a reranker or a ranker is applied)."""
        return self._cross_encoder_used or self.ranker is not None
