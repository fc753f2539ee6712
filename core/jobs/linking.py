"""A project's `Linker` bound to its store: link documents and store the suggestions, re-suggest single
mentions after an edit, find mentions in raw text, and learn from decisions as they are taken.

`core.pipeline.Linker` only computes suggestions; these are the jobs around it that write the store
(suggestions, detected mentions, curator synonyms). The CLI, the desk's link service (in process or in
its child, core.jobs.linker_process) and relinking after a promotion all use this one class.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence

from core.documents import Document
from core.link_summary import LinkSummary
from core.pipeline import Linker
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress
from core.project_models import load_linker
from core.store.curation_log import mention_key


class ProjectLinker(Linker):
    """A `Linker` with the project jobs; `for_project` loads the models in force into one."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._detector = None  # core.project_detector.ChosenDetector, chosen on the first find_mentions

    @classmethod
    def for_project(cls, project, **options) -> ProjectLinker:
        """The project's models in force (core.project_models.load_linker takes the options)."""
        return load_linker(project, linker_class=cls, **options)

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
        from core.detect.into_project import detect_into_project
        from core.project_detector import detector_for_project

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
        prior recounted (core.learn.live). Returns the `LearnedNow`: empty while the project's switch
        (core.learn.teaching) has learning from decisions off; read here, in the worker or the linking
        process, so a desk's thread never reads it and every open desk sees a change at once."""
        from core.learn.live import LearnedNow, learn_decisions
        from core.learn.teaching import learning_on

        if not learning_on(project):
            return LearnedNow()

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
