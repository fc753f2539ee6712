"""One-click retraining from curator decisions: fine-tune, judge old vs new, register, maybe promote.

Each kind is trained into a scratch folder (core.jobs.models.versions) from the weights in force, evaluated with
the version in force on the held-out slice, judged by the one promotion rule (core.jobs.models.kinds), and only
then moved to models/<kind>/<version>/ and registered. A cancel or an error before that point deletes the scratch folder and leaves the registry
untouched, so the models in force are exactly those of before.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from core.documents import Candidate
from core.errors import CuralinkError
from core.jobs.models.compare import epoch_evaluator, ranked_metrics, retriever_metrics
from core.jobs.models.kinds import KINDS as REGISTERED
from core.jobs.models.kinds import LINKING_KINDS, PROMOTION_RULES, retrain_kind
from core.jobs.models.retrain_report import KindReport, RetrainReport, publish_retrained
from core.jobs.models.versions import draft_version, prune_project_indexes
from core.kb.knowledge_base import KnowledgeBase
from core.learn.training_data import HELD_OUT_FRACTION, TrainingSet, training_set
from core.progress import NEVER_CANCELLED, CancelToken, PhasedProgress, ProgressCallback, no_progress
from core.retrieve.query_plan import plan_document
from core.text.normalize import normalize_name

if TYPE_CHECKING:
    from core.store.project import Project

log = logging.getLogger(__name__)

KINDS = LINKING_KINDS
RERANK_CANDIDATES = 16
RERANK_DEV_DOCUMENTS = 50


def retrain(
    project: Project,
    *,
    kinds: Sequence[str] = KINDS,
    max_seconds: float | None = None,
    epochs: int = 4,
    promote: str = "if-not-worse",
    held_out_fraction: float = HELD_OUT_FRACTION,
    device: str = "auto",
    base_model: str | None = None,
    seed: int = 13,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> RetrainReport:
    """Fine-tune each kind from the active version on the project's decisions and imported gold.

    Training is bounded by `epochs` (the retriever and the reranker from the version in force; the
    ranker fits in seconds), so what a retrain learns does not depend on the machine's load;
    `max_seconds` optionally bounds each kind's training too (evaluation comes on top). `promote`: "if-not-worse"
    (held-out acc@1 at least the active version's), "always" or "never" (register only; promote later
    with `Project.models.promote_model`). The retriever goes first, so the reranker trains on its candidates;
    the learned ranker (seconds) goes last, on the candidates of the models then in force.
    `base_model` (any local BERT-family folder) is used only for a kind with no version yet.
    """
    cancel.raise_if_cancelled()  # cancelled before it started (the desk closing meanwhile)
    if promote not in PROMOTION_RULES:
        raise CuralinkError(f"unknown promotion rule {promote!r}; use one of {', '.join(PROMOTION_RULES)}")
    unknown = [k for k in kinds if k not in REGISTERED]
    if unknown:
        raise CuralinkError(f"cannot retrain {unknown[0]!r}; kinds are {', '.join(REGISTERED)}")
    started = time.perf_counter()
    from core.jobs.models.retrain_plan import retrain_phases
    from core.learn.synonyms import index_curator_synonyms, prune_synonyms

    # one bar across every phase of every model, never restarting
    progress = PhasedProgress(progress, retrain_phases(kinds, max_seconds))
    progress.enter("preparing", message="reading decisions and the knowledge base")

    kb = project.kb.knowledge_base()
    if prune_synonyms(project, kb):  # names taught by decisions that no longer stand go first
        kb = project.kb.knowledge_base()
    if len(kb) == 0:
        raise CuralinkError(f"{project.path}: the knowledge base is empty; import one first")

    synonyms = index_curator_synonyms(project, kb)  # before training: the new version indexes them too
    data = training_set(project, kb, held_out_fraction=held_out_fraction)
    if not data.pairs:
        raise CuralinkError(
            f"{project.path}: nothing to learn from: no accepted or corrected links outside the held-out "
            "slice and no imported train/dev gold"
        )
    report = RetrainReport(
        training=data.counts(),
        kb_fingerprint=kb.fingerprint(),
        data_fingerprint=data.fingerprint,
        curator_synonyms=len(synonyms),
    )
    log.info("retraining %s from %s", ", ".join(kinds), report.training)
    # the registry's order: retriever, reranker, ranker (on the candidates of the models then in
    # force), then the detector (spans, not links)
    for kind in REGISTERED:
        if kind not in kinds:
            continue
        cancel.raise_if_cancelled()
        report.kinds[kind] = retrain_kind(
            project,
            kind,
            kb,
            data,
            max_seconds=max_seconds,
            epochs=epochs,
            promote=promote,
            device=device,
            base_model=base_model,
            seed=seed,
            progress=progress,
            cancel=cancel,
        )
    report.seconds = round(time.perf_counter() - started, 1)
    if "retriever" in report.kinds:
        prune_project_indexes(project, kb.fingerprint())
    progress.finish(f"retrained in {report.seconds:.0f} s")
    return report


def rollback(project: Project, kind: str) -> str:
    """Re-activate the version that was in force before the active one; returns that version."""
    active = project.models.active_model(kind)
    if active is None:
        raise CuralinkError(f"no active {kind} to roll back")
    versions = project.models.model_versions(kind)
    previous = active.parent_version
    if not previous:
        older = [v for v in versions if v.id < active.id and v.status != "candidate"]
        if not older:
            raise CuralinkError(f"{kind} {active.version} is the first version: nothing to roll back to")
        previous = older[-1].version
    project.models.promote_model(kind, previous)
    log.info("rolled %s back from %s to %s", kind, active.version, previous)
    return previous


def retrain_retriever(
    project: Project,
    kb,
    data: TrainingSet,
    *,
    max_seconds,
    epochs,
    promote,
    device,
    base_model,
    seed,
    progress,
    cancel,
) -> KindReport:
    from core.learn.warm_start import finetune_rescnn

    active = project.models.active_model("retriever")
    with draft_version(project, "retriever") as draft:
        scratch, version = draft.folder, draft.version
        report = KindReport("retriever", version, active.version if active else "", "")
        started = time.perf_counter()
        progress.enter("retriever: training", budget_seconds=max_seconds)
        if active is None:
            _train_from_scratch(
                kb, data, scratch, version, base_model, epochs, max_seconds, seed, progress, cancel
            )
        else:
            result = finetune_rescnn(
                active.path,
                kb,
                data.pairs,
                scratch,
                epochs=epochs,
                max_seconds=max_seconds,
                seed=seed,
                version=version,
                epoch_eval=epoch_evaluator(data.held_out_documents, kb),
                progress=progress,
                cancel=cancel,
            )
            report.history, report.steps = result.history, result.steps
            report.mentions_per_s = round(result.strings / result.seconds, 1) if result.seconds else 0.0
        report.seconds = time.perf_counter() - started
        cancel.raise_if_cancelled()
        progress.enter("retriever: evaluating")
        progress(0, 2, "the retrievers on the held-out slice")
        if active is not None:
            report.old = retriever_metrics(
                active.path, data.held_out_documents, kb, index_dir=project.index_dir, cancel=cancel
            )
        report.new = retriever_metrics(
            scratch, data.held_out_documents, kb, index_dir=project.index_dir, cancel=cancel
        )
        progress(2, 2, "evaluated")
        return _publish(project, draft, report, data, kb, promote, cancel)


def _publish(project: Project, draft, report: KindReport, data: TrainingSet, kb, promote: str, cancel) -> KindReport:
    return publish_retrained(
        project,
        draft,
        report,
        rule=promote,
        kb_fingerprint=kb.fingerprint(),
        data_fingerprint=data.fingerprint,
        training=data.counts(),
        cancel=cancel,
    )


def _train_from_scratch(
    kb, data, scratch, version, base_model, epochs, max_seconds, seed, progress, cancel
) -> None:
    """No version in force yet: the regular recipe from the base model."""
    from core.retrieve.rescnn import RescnnConfig
    from core.retrieve.train import train_rescnn

    train_rescnn(
        kb,
        data.pairs,
        RescnnConfig(base_model=base_model or ""),
        scratch,
        epochs=epochs,
        seed=seed,
        progress=progress,
        cancel=cancel,
        max_seconds=max_seconds,
        version=version,
    )


def retrain_reranker(
    project: Project,
    kb,
    data: TrainingSet,
    *,
    max_seconds,
    epochs,
    promote,
    device,
    base_model,
    seed,
    progress,
    cancel,
) -> KindReport:
    from core.project_models import load_linker
    from core.rerank.cross_encoder import CrossEncoder
    from core.rerank.reranker import CrossEncoderReranker
    from core.rerank.training import TrainingConfig, train

    active = project.models.active_model("reranker")
    if not data.train_documents:
        raise CuralinkError(
            "no curated or gold documents outside the held-out slice to train the reranker on"
        )
    progress.enter("reranker: candidates")
    linker = load_linker(
        project,
        kb=kb,
        use_reranker=False,
        use_ranker=False,  # the cross-encoder learns on the retriever's own candidates
        candidates=RERANK_CANDIDATES,
        progress=progress,
        cancel=cancel,
        synonyms_pruned=True,  # retrain pruned them and read `kb` after
    )
    train_candidates = _with_hard_negatives(data, kb, linker.suggest(data.train_documents))
    held_out_candidates = linker.suggest(data.held_out_documents) if data.held_out_documents else []
    cancel.raise_if_cancelled()
    with draft_version(project, "reranker") as draft:
        report = KindReport("reranker", draft.version, active.version if active else "", "")
        started = time.perf_counter()
        progress.enter("reranker: training", budget_seconds=max_seconds)
        encoder = CrossEncoder.load(active.path) if active else CrossEncoder.from_base(base_model, seed=seed)
        dev = data.train_documents[:RERANK_DEV_DOCUMENTS]  # early stopping never sees the held-out slice
        result = train(
            encoder,
            data.train_documents,
            train_candidates,
            dev,
            train_candidates[: len(dev)],
            kb,
            TrainingConfig(max_epochs=epochs, max_seconds=max_seconds, patience=max(2, epochs), seed=seed),
            device=device,
            progress=progress,
            cancel=cancel,
        )
        report.seconds = time.perf_counter() - started
        report.steps = result.steps
        report.mentions_per_s = round(result.examples_per_s, 2)
        report.history = [
            {"epoch": h["epoch"], "train acc@1": round(100 * h["dev_acc@1"], 2)} for h in result.history
        ]
        cancel.raise_if_cancelled()
        encoder.save(draft.folder)
        progress.enter("reranker: evaluating")
        progress(0, 2, "the rerankers on the held-out slice")
        old_order = (
            CrossEncoderReranker(CrossEncoder.load(active.path), device=device).rerank(
                data.held_out_documents, held_out_candidates, cancel=cancel
            )
            if active and held_out_candidates
            else held_out_candidates
        )
        report.old = ranked_metrics(data.held_out_documents, old_order, kb, RERANK_CANDIDATES)
        if not active and report.old:
            report.old["ranking"] = "retriever order (no reranker yet)"
        new_order = (
            CrossEncoderReranker(encoder, device=device).rerank(
                data.held_out_documents, held_out_candidates, cancel=cancel
            )
            if held_out_candidates
            else []
        )
        report.new = ranked_metrics(data.held_out_documents, new_order, kb, RERANK_CANDIDATES)
        progress(2, 2, "evaluated")
        return _publish(project, draft, report, data, kb, promote, cancel)


def _with_hard_negatives(
    data: TrainingSet, kb: KnowledgeBase, candidates: list[list[list[Candidate]]]
) -> list[list[list[Candidate]]]:
    """Concepts a curator rejected for a query (its normalised key) join that query's candidates as negatives."""
    rejected: dict[str, set[str]] = {}
    for text, concept_id in data.hard_negatives:
        rejected.setdefault(normalize_name(text), set()).add(concept_id)
    if not rejected:
        return candidates
    out = []
    for document, per_document in zip(data.train_documents, candidates, strict=True):
        rows = []
        plans = plan_document(document)
        for mention, plan, found in zip(document.mentions, plans, per_document, strict=True):
            row = list(found)
            present = {c.concept_id for c in row}
            for concept_id in sorted(rejected.get(plan.key, set()) - present):
                if concept_id == mention.concept_id or kb.get(concept_id) is None:
                    continue
                name = kb.get(concept_id).preferred_name
                negative = Candidate(concept_id, name, name, row[-1].retriever_score if row else 0.0)
                row = row[:-1] + [negative] if len(row) >= RERANK_CANDIDATES else row + [negative]
            rows.append(row)
        out.append(rows)
    return out
