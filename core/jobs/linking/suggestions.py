"""The store jobs around a project's `Linker`: link documents and store the suggestions, re-suggest single
mentions after an edit, learn from decisions as they are taken (finding mentions: core.jobs.linking.mentions).

`core.pipeline.Linker` only computes suggestions; these functions are what writes the store (suggestions,
curator synonyms). `ProjectLinker` holds a loaded Linker and the detector chosen for it - the state the
desk's link service keeps between jobs - and calls them; core.jobs.linking.linker_process offers the same
methods from a child process, so the link service calls either alike. The CLI, relinking after a
promotion and the demo use the same functions.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

from core.documents import Document
from core.link_summary import LinkSummary
from core.pipeline import Linker
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress
from core.project_models import load_linker
from core.store.curation_log import mention_key

if TYPE_CHECKING:
    from core.store.project import Project


def link_project(
    project: Project,
    linker: Linker,
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
    router = linker.router
    unrouted_before = dict(router.unrouted) if router is not None else {}
    selected = list(project.documents.documents_with_mention_ids(split, ids=ids))
    if mentions is not None:
        selected = [_only(document, mention_ids, mentions) for document, mention_ids in selected]
        selected = [pair for pair in selected if pair[1]]
    for first in range(0, len(selected), batch_documents):
        cancel.raise_if_cancelled()
        batch = selected[first : first + batch_documents]
        documents = [document for document, _ in batch]
        mention_ids = [ids_in_doc for _, ids_in_doc in batch]
        summary.suggestions += store_suggestions(
            project,
            linker,
            documents,
            mention_ids,
            linker.suggest(documents),
            reranker_version=linker.ranked_version,
        )
        summary.mentions += sum(len(i) for i in mention_ids)
        summary.documents += len(batch)
        progress(summary.documents, len(selected), "documents linked")
    summary.seconds = time.perf_counter() - started
    if router is not None:
        summary.unrouted = {
            t: n - unrouted_before.get(t, 0)
            for t, n in router.unrouted.items()
            if n > unrouted_before.get(t, 0)
        }
        summary.routing_warnings = list(router.warnings)
    return summary


def resuggest(
    project: Project,
    linker: Linker,
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
    doc_ids = sorted(set(project.documents.mention_documents(list(wanted)).values()))
    documents, ids = [], []
    for document, mention_ids_in_doc in project.documents.documents_with_mention_ids(ids=doc_ids):
        document, kept = _only(document, mention_ids_in_doc, wanted)
        if kept:
            documents.append(document)
            ids.append(kept)
    if not documents:
        return 0
    changed = [document.doc_id for document in documents]
    retrieved = linker.retrieve(documents)
    cancel.raise_if_cancelled()
    store_suggestions(project, linker, documents, ids, retrieved, reranker_version="")
    if on_stored is not None:
        on_stored(changed)
    if linker.ranks and any(any(doc) for doc in retrieved):
        cancel.raise_if_cancelled()
        reranked = linker.rank(documents, retrieved, cancel=cancel)
        store_suggestions(project, linker, documents, ids, reranked, reranker_version=linker.ranked_version)
        if on_stored is not None:
            on_stored(changed)
    return sum(len(i) for i in ids)


def store_suggestions(
    project: Project, linker: Linker, documents, ids, suggestions, *, reranker_version: str
) -> int:
    """Store per-mention candidates, each keyed by the span and type it was computed for."""
    by_mention, keys = {}, {}
    for document, mention_ids, per_document in zip(documents, ids, suggestions, strict=True):
        for mention, mention_id, ranked in zip(document.mentions, mention_ids, per_document, strict=True):
            by_mention[mention_id] = ranked
            keys[mention_id] = mention_key(mention)
    return project.curation.store_suggestions(
        by_mention,
        computed_for=keys,
        retriever_version=linker.retriever_version,
        reranker_version=reranker_version,
    )


def learn(project: Project, linker: Linker, mention_ids: Sequence[int]):
    """The decisions now in force on these mentions (just taken, undone or redone) reach the loaded
    models at once: curator synonyms in the KB and name index, withdrawn ones hidden, the ranker's
    prior recounted (core.learn.live). Returns the `LearnedNow`: empty while the project's switch
    (core.learn.teaching) has learning from decisions off; read here, in the worker or the linking
    process, so a desk's thread never reads it and every open desk sees a change at once."""
    from core.learn.live import LearnedNow, learn_decisions
    from core.learn.teaching import learning_on

    if not learning_on(project):
        return LearnedNow()
    kb = linker.kb if linker.kb is not None else linker.retriever.kb
    return learn_decisions(project, mention_ids, kb=kb, retriever=linker.retriever, stage=linker.ranker)


def _only(document: Document, mention_ids: list[int], wanted: Collection[int]) -> tuple[Document, list[int]]:
    """The document with only the wanted mentions, and their ids."""
    keep = [(m, i) for m, i in zip(document.mentions, mention_ids, strict=True) if i in wanted]
    return document.with_mentions([m for m, _ in keep]), [i for _, i in keep]


class ProjectLinker:
    """A loaded `Linker` and the detector chosen for it, behind the four jobs the desk's link service
    calls (the same as core.jobs.linking.linker_process.LinkerProcess offers from a child)."""

    def __init__(self, linker: Linker):
        self.linker = linker
        self._detectors: dict = {}  # mention type (None: all) -> core.project_detector.ChosenDetector

    @classmethod
    def for_project(cls, project: Project, **options) -> ProjectLinker:
        """The project's models in force (core.project_models.load_linker takes the options)."""
        return cls(load_linker(project, **options))

    @property
    def device_description(self) -> str:
        return self.linker.device_description

    @property
    def retriever_version(self) -> str:
        return self.linker.retriever_version

    @property
    def ranked_version(self) -> str:
        return self.linker.ranked_version

    @property
    def ranks(self) -> bool:
        return self.linker.ranks

    def link_project(self, project: Project, **options) -> LinkSummary:
        return link_project(project, self.linker, **options)

    def resuggest(self, project: Project, mention_ids: Sequence[int], **options) -> int:
        return resuggest(project, self.linker, mention_ids, **options)

    def find_mentions(
        self,
        project: Project,
        ids: Sequence[str] | None,
        *,
        split: str | None = None,
        include_gold: bool = False,
        mention_type: str | None = None,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken = NEVER_CANCELLED,
    ):
        """Tag mentions in the documents core.jobs.linking.detect_targets allows, with the detector chosen
        once per mention type for this Linker (core.project_detector, over the Linker's KB); the
        DetectSummary names the detector. core.jobs.linking.link.link calls it before linking."""
        from core.jobs.linking.mentions import detect_into_project, detector_for_project

        if mention_type not in self._detectors:
            kb = self.linker.kb if self.linker.kb is not None else project.kb.knowledge_base()
            self._detectors[mention_type] = detector_for_project(
                project, kb, requested_type=mention_type, device=self.linker.device
            )
        chosen = self._detectors[mention_type]
        summary = detect_into_project(
            project,
            chosen.detector,
            split=split,
            ids=ids,
            include_gold=include_gold,
            progress=progress,
            cancel=cancel,
        )
        summary.detector = chosen.description
        return summary

    def learn(self, project: Project, mention_ids: Sequence[int]):
        learned = learn(project, self.linker, mention_ids)
        if learned.names_changed:
            self._detectors.clear()  # the dictionary tagger is made again from the KB's names
        return learned


def warm_imports() -> None:
    """Import the model stack now (the desk does it on the UI thread at start-up): a first import inside a
    worker loads large native libraries while holding the GIL, which would freeze the window."""
    import core.rerank.cross_encoder  # noqa: F401
    import core.rerank.reranker  # noqa: F401
    import core.retrieve.rescnn_retriever  # noqa: F401


def preload_architecture(folder):
    """Import a saved reranker's model code before the weights load (core.rerank.cross_encoder)."""
    from core.rerank.cross_encoder import preload_architecture as preload

    return preload(folder)
