"""`Linker`: retrieve -> rerank for a batch of documents; the one entry point the front ends call.

Mention text is prepared by the one query plan (core.retrieve.query_plan) that `evaluate`, the
benchmarks and retraining use too: abbreviations defined in the same document are expanded, and a
composite mention ("breast and ovarian cancer") is also searched part by part, the parts' candidates
merged by rank so each named concept surfaces near the top. With a type router
(core.kb.routing) a mention is only offered concepts its type's route admits.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from core.documents import Candidate, Document
from core.errors import CuralinkError
from core.kb.knowledge_base import KnowledgeBase
from core.kb.routing import TypeRouter
from core.link_summary import LinkSummary
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress
from core.rank.query import MentionQuery
from core.rerank.base import Reranker
from core.retrieve.base import Retriever
from core.retrieve.query_plan import plan_documents
from core.retrieve.routed import retrieve_plans
from core.store.curation_log import mention_key

if TYPE_CHECKING:
    from core.rank.stage import RankingStage

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
        ranker: RankingStage | None = None,
        ranker_note: str = "",
        kb: KnowledgeBase | None = None,
        device: str = "auto",
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
        self._detector = None  # core.detect.choice.ChosenDetector, chosen on the first find_mentions

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
        return self.reranker is not None and (self.ranker is None or self.ranker.model.uses_cross_encoder)

    @property
    def ranked_version(self) -> str:
        """What the stored final scores come from: the reranker version, the ranker's, or both."""
        parts = [self.reranker_version] if self._cross_encoder_used else []
        if self.ranker is not None:
            parts.append(f"ranker {self.ranker.version}")
        return "+".join(p for p in parts if p)

    @classmethod
    def for_project(
        cls,
        project,
        *,
        kb: KnowledgeBase | None = None,
        device: str = "auto",
        candidates: int = DEFAULT_CANDIDATES,
        use_reranker: bool = True,
        use_ranker: bool = True,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken = NEVER_CANCELLED,
        read_only: bool = False,
        index_dir: Path | None = None,
    ) -> Linker:
        """The project's active models, with the name index loaded from (or built into) index/.

        `read_only` (batch workers, several at once): the store is not written (curator synonyms are
        neither pruned nor learned: the KB is used as stored) and the name index is read from, or built
        into, `index_dir` instead of the project's index/."""
        from core.rank.project_jobs import load_ranking_stage
        from core.rerank.cross_encoder import CrossEncoder
        from core.rerank.reranker import CrossEncoderReranker
        from core.retrieve.rescnn_retriever import RescnnRetriever

        active = project.active_model("retriever")
        if active is None:
            raise CuralinkError(
                f"{project.path}: no trained retriever yet (run `curalink -p {project.path} train retriever`)"
            )
        kb = kb if kb is not None else project.knowledge_base()
        if len(kb) == 0:
            raise CuralinkError(
                f"{project.path}: the knowledge base is empty (run `curalink kb import` first)"
            )
        retriever = RescnnRetriever.load(Path(active.path), index_dir=index_dir or project.index_dir)
        retriever.index(kb, progress=progress, cancel=cancel)
        if not read_only:
            curated = _standing_synonyms(project, kb)  # read once for both steps
            _withdraw_curator_synonyms(project, kb, retriever, curated)
            _learn_curator_synonyms(project, kb, retriever, curated)
        reranker = None
        reranker_version = ""
        ranked = project.active_model("reranker") if use_reranker else None
        if ranked is not None:
            reranker = CrossEncoderReranker(CrossEncoder.load(Path(ranked.path)), device=device)
            reranker_version = ranked.version
            log.info("reranker %s on %s", ranked.version, reranker.device_description)
        ranker, note = load_ranking_stage(project, kb) if use_ranker else (None, "")
        return cls(
            retriever,
            reranker,
            candidates=candidates,
            retriever_version=active.version,
            reranker_version=reranker_version,
            router=TypeRouter.for_project(project, kb),
            ranker=ranker,
            ranker_note=note,
            kb=kb,
            device=device,
        )

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
            for document, plans in zip(documents, plan_documents(documents), strict=True)
        ]

    def retrieve(self, documents: Sequence[Document]) -> list[list[list[Candidate]]]:
        """Per document, per mention: the retriever's candidates (no reranking)."""
        return retrieve_plans(self.retriever, plan_documents(documents), self.candidates, self.router)

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

    def resuggest(
        self,
        project,
        mention_ids: Sequence[int],
        *,
        on_stored: Callable[[list[str]], None] | None = None,
        cancel: CancelToken = NEVER_CANCELLED,
    ) -> int:
        """Suggest again for single mentions after a span or type edit; returns the mentions suggested.

        The retriever's candidates are stored first (and `on_stored` told which documents changed), so
        the curator sees candidates for the new text at once; the reranked ones replace them after. Each
        list is stored for the span it was computed for, so an edit made meanwhile drops it.
        """
        wanted = set(mention_ids)
        doc_ids = sorted(set(project.mention_documents(list(wanted)).values()))
        documents, ids = [], []
        for document, mention_ids_in_doc in project.documents_with_mention_ids(ids=doc_ids):
            keep = [(m, i) for m, i in zip(document.mentions, mention_ids_in_doc, strict=True) if i in wanted]
            if keep:
                documents.append(document.with_mentions([m for m, _ in keep]))
                ids.append([i for _, i in keep])
        if not documents:
            return 0
        changed = [document.doc_id for document in documents]
        retrieved = self.retrieve(documents)
        cancel.raise_if_cancelled()
        self._store(project, documents, ids, retrieved, reranker_version="")
        if on_stored is not None:
            on_stored(changed)
        if self.ranks and any(any(doc) for doc in retrieved):
            cancel.raise_if_cancelled()
            reranked = self.rank(documents, retrieved, cancel=cancel)
            self._store(project, documents, ids, reranked, reranker_version=self.ranked_version)
            if on_stored is not None:
                on_stored(changed)
        return sum(len(i) for i in ids)

    def _store(self, project, documents, ids, suggestions, *, reranker_version: str) -> int:
        """Store per-mention candidates, each keyed by the span and type it was computed for."""
        by_mention, keys = {}, {}
        for document, mention_ids, per_document in zip(documents, ids, suggestions, strict=True):
            for mention, mention_id, ranked in zip(document.mentions, mention_ids, per_document, strict=True):
                by_mention[mention_id] = ranked
                keys[mention_id] = mention_key(mention)
        return project.store_suggestions(
            by_mention,
            computed_for=keys,
            retriever_version=self.retriever_version,
            reranker_version=reranker_version,
        )

    def find_mentions(
        self,
        project,
        ids: Sequence[str],
        *,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken = NEVER_CANCELLED,
    ):
        """Tag mentions in the raw text of the given documents (the desk's "find mentions"), with the
        detector `link --detect` uses: the span model in force, else the KB dictionary (chosen once per
        loaded Linker). Stored unlinked and typed; gold documents and spans overlapping a stored or
        deleted mention are left alone (core.detect.targets, core.detect.into_project). Returns the
        `DetectSummary`, naming the detector; `link_project` then suggests for what was found."""
        from core.detect.choice import detector_for_project
        from core.detect.into_project import detect_into_project

        if self._detector is None:
            kb = self.kb if self.kb is not None else project.knowledge_base()
            self._detector = detector_for_project(project, kb, device=self.device)
        summary = detect_into_project(
            project, self._detector.detector, ids=ids, progress=progress, cancel=cancel
        )
        summary.detector = self._detector.description
        return summary

    def learn(self, project, mention_ids: Sequence[int]):
        """The decisions now in force on these mentions (just taken, undone or redone) reach the loaded
        models at once: curator synonyms in the KB and name index, withdrawn ones hidden, the ranker's
        prior recounted (core.learn.live). Returns the `LearnedNow`."""
        from core.learn.live import learn_decisions

        kb = self.kb if self.kb is not None else self.retriever.kb
        learned = learn_decisions(project, mention_ids, kb=kb, retriever=self.retriever, stage=self.ranker)
        if learned.names_changed:
            self._detector = None  # the dictionary tagger is made again from the KB's names
        return learned

    def link_project(
        self,
        project,
        *,
        split: str | None = None,
        ids: Sequence[str] | None = None,
        mentions: Collection[int] | None = None,
        batch_documents: int = 32,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken = NEVER_CANCELLED,
    ) -> LinkSummary:
        """Suggest for every mention of the selected documents and store the suggestions.

        `mentions`: only these mention ids get new suggestions (the others keep what is stored), e.g.
        the unreviewed ones after a promotion; documents left without any are skipped."""
        summary = LinkSummary()
        started = time.perf_counter()
        unrouted_before = dict(self.router.unrouted) if self.router is not None else {}
        selected = list(project.documents_with_mention_ids(split, ids=ids))
        if mentions is not None:
            selected = [_only(document, mention_ids, mentions) for document, mention_ids in selected]
            selected = [pair for pair in selected if pair[1]]
        for first in range(0, len(selected), batch_documents):
            cancel.raise_if_cancelled()
            batch = selected[first : first + batch_documents]
            documents = [document for document, _ in batch]
            mention_ids = [ids_in_doc for _, ids_in_doc in batch]
            summary.suggestions += self._store(
                project,
                documents,
                mention_ids,
                self.suggest(documents),
                reranker_version=self.ranked_version,
            )
            summary.mentions += sum(len(i) for i in mention_ids)
            summary.documents += len(batch)
            progress(summary.documents, len(selected), "documents linked")
        summary.seconds = time.perf_counter() - started
        if self.router is not None:
            summary.unrouted = {
                t: n - unrouted_before.get(t, 0)
                for t, n in self.router.unrouted.items()
                if n > unrouted_before.get(t, 0)
            }
            summary.routing_warnings = list(self.router.warnings)
        return summary


def _only(document: Document, mention_ids: list[int], wanted: Collection[int]) -> tuple[Document, list[int]]:
    """The document with only the wanted mentions (as `Linker.resuggest` links single mentions)."""
    keep = [(m, i) for m, i in zip(document.mentions, mention_ids, strict=True) if i in wanted]
    return document.with_mentions([m for m, _ in keep]), [i for _, i in keep]


def _standing_synonyms(project, kb: KnowledgeBase) -> dict[str, list[str]] | None:
    """Every standing decision's curator synonyms (concept id -> names), or None when they cannot be read
    now (each step then reads what it needs itself)."""
    from core.learn.synonyms import curated_synonyms

    try:
        return curated_synonyms(project, kb)
    except CuralinkError as exc:
        log.warning("curator decisions not read this time: %s", exc)
        return None


def _withdraw_curator_synonyms(project, kb: KnowledgeBase, retriever, curated=None) -> None:
    """Curator synonyms whose decision no longer stands (undone while no desk had the models loaded)
    leave the store and the KB, and are hidden in the index just loaded: the index saved for the KB with
    them is reused, not rebuilt (75-90 s on MEDIC). `curated`: `_standing_synonyms`, when read."""
    from core.learn.synonyms import withdraw_synonyms
    from core.text.normalize import normalize_name

    standing = set()
    if curated is not None:
        standing = {(concept_id, normalize_name(n)) for concept_id, names in curated.items() for n in names}
    try:
        withdrawn = withdraw_synonyms(
            project, kb, retriever, supported=standing, complete=curated is not None
        )
    except CuralinkError as exc:
        log.warning("curator synonyms of undone decisions not removed this time: %s", exc)
        return
    if withdrawn:
        log.info(
            "%d curator synonyms withdrawn: the decisions that taught them no longer stand", len(withdrawn)
        )


def _learn_curator_synonyms(project, kb: KnowledgeBase, retriever, curated=None) -> None:
    """Accepted corrections since the index was saved join it (encoded and appended, no rebuild).

    A store that cannot take the names (read-only copy, locked) costs only these synonyms: the decisions
    themselves are stored, and the next load tries again."""
    from core.learn.synonyms import learn_synonyms

    try:
        learn_synonyms(project, kb=kb, retriever=retriever, curated=curated)
    except CuralinkError as exc:
        log.warning("curator synonyms not added to the name index this time: %s", exc)
