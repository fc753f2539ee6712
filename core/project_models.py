"""A project's models in force, loaded into one `Linker`: the retriever with its name index, the
reranker, the ranker with its live annotation prior, the type router.

Loading is below the jobs (core.jobs) because evaluation (core.evaluate) loads a project's models too and
the jobs use evaluation; it reads the model registry and the KB, and keeps the curator synonyms in step
with the decisions in force (the only store writes here), so every loaded Linker suggests from the
same names.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import CuralinkError, ModelError
from core.kb.knowledge_base import KnowledgeBase
from core.kb.routing import TypeRouter
from core.pipeline import DEFAULT_CANDIDATES, Linker
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress
from core.rank.model import RankerModel
from core.rank.stage import RankingStage, annotation_prior

if TYPE_CHECKING:
    from core.store.project import Project

log = logging.getLogger(__name__)

RANKER = "ranker"


def load_linker(
    project: Project,
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
    synonyms_pruned: bool = False,
) -> Linker:
    """The project's active models, with the name index loaded from (or built into) index/.

    `read_only` (batch workers, several at once): the store is not written (curator synonyms are
    neither pruned nor learned: the KB is used as stored) and the name index is read from, or built
    into, `index_dir` instead of the project's index/. `synonyms_pruned`: the caller (a retrain) has
    just pruned the curator synonyms of undone decisions and read `kb` after: not done twice."""
    from core.model_kinds import load_version

    active = project.models.active_model("retriever")
    if active is None:
        raise CuralinkError(
            f"{project.path}: no trained retriever yet (run `curalink -p {project.path} train retriever`)"
        )
    kb = kb if kb is not None else project.kb.knowledge_base()
    if len(kb) == 0:
        raise CuralinkError(f"{project.path}: the knowledge base is empty (run `curalink kb import` first)")
    retriever = load_version(project, "retriever", active, index_dir=index_dir or project.index_dir)
    retriever.index(kb, progress=progress, cancel=cancel)
    if not read_only:
        _sync_curator_synonyms(project, kb, retriever, synonyms_pruned)
    reranker = None
    reranker_version = ""
    ranked = project.models.active_model("reranker") if use_reranker else None
    if ranked is not None:
        reranker = load_version(project, "reranker", ranked, device=device)
        reranker_version = ranked.version
        log.info("reranker %s on %s", ranked.version, reranker.device_description)
    ranker, note = load_ranking_stage(project, kb) if use_ranker else (None, "")
    return Linker(
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


def nothing_to_learn(project: Project) -> str:
    return (
        f"{project.path}: no ranker trained: the project has no imported train/dev gold and no accepted or "
        "corrected decisions; suggestions keep the retriever's order"
    )


def linked_documents(project: Project, kb: KnowledgeBase, held_out_fraction: float = 0.0):
    """The training set of linked documents (one mention per known link, concept ids resolved)."""
    from core.learn.training_data import training_set

    return training_set(project, kb, held_out_fraction=held_out_fraction)


def load_ranking_stage(project: Project, kb: KnowledgeBase) -> tuple[RankingStage | None, str]:
    """The ranker in force with a live annotation prior, or None and why (refused, none trained)."""
    from core.model_kinds import load_version

    active = project.models.active_model(RANKER)
    if active is None:
        return None, ""
    try:
        stage = load_version(project, RANKER, active, kb=kb)
    except ModelError as exc:
        log.warning("%s; suggestions keep the retriever's order", exc)
        return None, f"{exc}; suggestions keep the retriever's order"
    log.info("ranker %s with a prior of %d links", active.version, len(stage.prior))
    return stage, ""


def load_retriever(project: Project, row, **options):
    """A registered retriever version (`row` of the model registry); its name index is cached in the
    project's index/ (`options`: RescnnRetriever.load's)."""
    from core.retrieve.rescnn_retriever import RescnnRetriever

    options.setdefault("index_dir", project.index_dir)
    return RescnnRetriever.load(Path(row.path), **options)


def load_reranker(project: Project, row, *, device: str = "auto", packing: str | None = None):
    """A registered reranker version (`row` of the model registry), ready to rerank."""
    from core.rerank.cross_encoder import CrossEncoder
    from core.rerank.reranker import CrossEncoderReranker

    return CrossEncoderReranker(CrossEncoder.load(Path(row.path)), packing=packing, device=device)


def load_ranker(project: Project, row, *, kb: KnowledgeBase | None = None) -> RankingStage:
    """A registered ranker version (`row` of the model registry) with the live annotation prior (of every
    linked training document now); ModelError when the saved ranker cannot be applied here."""
    kb = kb if kb is not None else project.kb.knowledge_base()
    model = RankerModel.load(row.path, project.path)
    model.version = row.version
    documents = linked_documents(project, kb).train_documents
    if not documents:
        log.warning(nothing_to_learn(project))
    return RankingStage(model, kb, annotation_prior(documents, model.prior_smoothing))


SYNONYMS_MARK = "curation.synonyms_through_decision"  # settings key: what the last load learnt from


def _synonym_basis(project: Project) -> list:
    """What, besides decisions, decides which curator synonyms stand: learning on or off, the vetoes, KB
    and corpus imports, mentions removed without a decision. A load learns incrementally only when it is
    unchanged since the last one."""
    from core.learn.teaching import learning_on, veto_changes

    return [learning_on(project), veto_changes(project), *project.changes.wide_changes()]


def _sync_curator_synonyms(project: Project, kb: KnowledgeBase, retriever, synonyms_pruned: bool) -> None:
    """Bring the KB and the index up to the standing decisions' curator synonyms. The first load (or one
    after a change of `_synonym_basis`) reads every standing decision: on 20,000 documents with 50,000
    decisions that planned thousands of abstracts, seconds before the restarted desk's first suggestions
    (issue 31). Each load then notes the newest decision it learnt from, and the next one learns only
    from the mentions decided since (core.learn.live, as the desk learns one decision)."""
    from core.learn.live import learn_decisions

    try:
        basis = _synonym_basis(project)
        mark = project.settings.setting(SYNONYMS_MARK, None)
        since = mark.get("decision") if isinstance(mark, dict) and mark.get("basis") == basis else None
        newest, changed = project.changes.decided_since(since if isinstance(since, int) else 0)
    except CuralinkError as exc:
        log.warning("curator decisions not read this time: %s", exc)
        return
    if not isinstance(since, int) or since > newest:
        curated = _standing_synonyms(project, kb)  # read once for both steps
        if not synonyms_pruned:
            _withdraw_curator_synonyms(project, kb, retriever, curated)
        if not _learn_curator_synonyms(project, kb, retriever, curated) or curated is None:
            return
    elif changed:
        try:
            learnt = learn_decisions(project, changed, kb=kb, retriever=retriever, identical=False)
        except CuralinkError as exc:
            log.warning("curator synonyms of %d decided mentions not learnt this time: %s", len(changed), exc)
            return
        log.info(
            "learnt from the decisions on %d mentions since the last load: %s",
            len(changed),
            learnt.describe() or "no change",
        )
    try:
        project.settings.set_setting(SYNONYMS_MARK, {"decision": newest, "basis": basis})
    except CuralinkError as exc:  # a read-only copy: the next load reads every decision again
        log.warning("could not note the decisions learnt from: %s", exc)


def _standing_synonyms(project: Project, kb: KnowledgeBase) -> dict[str, list[str]] | None:
    """Every standing decision's curator synonyms (concept id -> names), or None when they cannot be read
    now (each step then reads what it needs itself)."""
    from core.learn.synonyms import curated_synonyms

    try:
        return curated_synonyms(project, kb)
    except CuralinkError as exc:
        log.warning("curator decisions not read this time: %s", exc)
        return None


def _withdraw_curator_synonyms(project: Project, kb: KnowledgeBase, retriever, curated=None) -> None:
    """Curator synonyms whose decision no longer stands (undone while no desk had the models loaded)
    leave the store and the KB, and are hidden in the index just loaded: the index saved for the KB with
    them is reused, not rebuilt (75-90 s on MEDIC). `curated`: `_standing_synonyms`, when read."""
    from core.learn.synonyms import withdraw_synonyms
    from core.text.normalize import normalize_name

    standing = set()
    if curated is not None:
        standing = {(concept_id, normalize_name(n)) for concept_id, names in curated.items() for n in names}
    try:
        withdrawn = withdraw_synonyms(project, kb, retriever, supported=standing, complete=curated is not None)
    except CuralinkError as exc:
        log.warning("curator synonyms of undone decisions not removed this time: %s", exc)
        return
    if withdrawn:
        log.info(
            "%d curator synonyms withdrawn: the decisions that taught them no longer stand", len(withdrawn)
        )


def _learn_curator_synonyms(project: Project, kb: KnowledgeBase, retriever, curated=None) -> bool:
    """Accepted corrections since the index was saved join it (encoded and appended, no rebuild).

    A store that cannot take the names (read-only copy, locked) costs only these synonyms: the decisions
    themselves are stored, and the next load tries again. False when they could not be stored."""
    from core.learn.synonyms import learn_synonyms

    try:
        learn_synonyms(project, kb=kb, retriever=retriever, curated=curated)
    except CuralinkError as exc:
        log.warning("curator synonyms not added to the name index this time: %s", exc)
        return False
    return True
