"""The retriever in a project: `train retriever` (a ResCNN version from the project's KB synonyms, gold and
curator links) and its step in `retrain` (fine-tuned from the version in force, judged on the held-out
slice). Loading a version: core.project_models.load_retriever; evaluating: core.evaluate.retrieval."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from core.jobs.models.compare import epoch_evaluator, retriever_metrics
from core.jobs.models.retrain_report import KindReport, RetrainStep, publish_step
from core.jobs.models.versions import TrainedVersion, draft_version, prune_project_indexes, publish_version
from core.learn.training_data import curated_pairs, fingerprint, gold_pairs, resolvable
from core.model_kinds import RETRIEVER_EPOCHS, RETRIEVER_PATIENCE
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

if TYPE_CHECKING:
    from core.store.project import Project

log = logging.getLogger(__name__)

KB_NAMES_PER_EPOCH = 6000
DEFAULT_EPOCHS = RETRIEVER_EPOCHS
DEFAULT_PATIENCE = RETRIEVER_PATIENCE
"""`train retriever` stops after DEFAULT_EPOCHS, or sooner once the held-out STOPPING_CRITERION has not
risen for this many epochs in a row: bounded by the data, not by the machine's load (`max_seconds` stays
an option). Patience 2 on acc@1 stopped NCBI-disease + MEDIC at epoch 6 of 10 with test recall@20 down
(docs/benchmarks/retriever-stopping.md)."""
STOPPING_CRITERION = ("recall@20", "acc@1")
"""What early stopping watches on the held-out documents: recall@20 first, because the ranker can only
choose among the 20 candidates it is given (core.jobs.models.ranker's default); acc@1 breaks a tie."""


def train_retriever(
    project: Project,
    *,
    base_model: str | None = None,
    epochs: int = DEFAULT_EPOCHS,
    max_seconds: float | None = None,
    patience: int = DEFAULT_PATIENCE,
    pooling: str = "max",
    seed: int = 13,
    include_gold: bool = True,
    promote: bool = True,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> TrainedVersion:
    """Train a ResCNN retriever on the project's KB synonyms, gold train/dev mentions and curator links.

    With `patience` (> 0) and gold documents to hold out, early stopping watches STOPPING_CRITERION
    after every epoch: the dev split, or without one the last tenth of the train documents (as the reranker does);
    those documents are then not trained on. `patience=0`: every epoch, on every document."""
    from core.jobs.models.compare import dev_evaluator
    from core.retrieve.rescnn import RescnnConfig
    from core.retrieve.train import TrainOptions, train_rescnn

    kb = project.kb.knowledge_base()
    dev = early_stopping_documents(project) if patience and include_gold else []
    held = {document.doc_id for document in dev}
    gold = gold_pairs(project, exclude=held) if include_gold else []
    pairs = resolvable(gold + curated_pairs(project, exclude=held), kb)
    config = RescnnConfig(base_model=base_model or "", pooling=pooling)
    # A large KB would make every epoch hundreds of steps of synonyms alone: sample them, and show the
    # (far fewer) annotated mentions twice (the recipe measured on NCBI-disease + MEDIC).
    options = TrainOptions(
        kb_names_per_epoch=KB_NAMES_PER_EPOCH if len(kb.names) > KB_NAMES_PER_EPOCH else None,
        pair_repeats=2 if pairs else 1,
    )
    with draft_version(project, "retriever") as draft:
        result = train_rescnn(
            kb,
            pairs,
            config,
            draft.folder,
            epochs=epochs,
            seed=seed,
            options=options,
            progress=progress,
            cancel=cancel,
            max_seconds=max_seconds,
            version=draft.version,  # not the scratch folder's name
            epoch_eval=dev_evaluator(dev, kb) if dev else None,
            patience=patience if dev else None,
            criterion=STOPPING_CRITERION,
        )
        metrics = {
            **result.metrics,
            "train_pairs": len(pairs),
            "train_seconds": round(result.seconds, 2),
            "dev_documents": len(dev),
            **({"dev_fingerprint": held_out_fingerprint(held)} if held else {}),
        }
        reason = ""
        if promote and dev:
            promote, reason = _against_version_in_force(
                project, draft.version, result, dev_evaluator(dev, kb), held, metrics
            )
        final = publish_version(
            project,
            draft,
            metrics=metrics,
            kb_fingerprint=kb.fingerprint(),
            data_fingerprint=fingerprint(pairs),
            promote=promote,
            cancel=cancel,
        )
    prune_project_indexes(project, kb.fingerprint())
    log.info("trained retriever %s on %d pairs in %.1f s", draft.version, len(pairs), result.seconds)
    return TrainedVersion("retriever", draft.version, final, metrics, promote, reason)


def held_out_fingerprint(doc_ids: set[str]) -> str:
    """Names the documents a version held out, so a later version knows whether it measures on the same."""
    return fingerprint((doc_id, "") for doc_id in doc_ids)


def _against_version_in_force(
    project: Project, version: str, result, evaluate, held: set[str], metrics: dict
) -> tuple[bool, str]:
    """Whether the version just trained goes in force: its held-out figures against those of the version in
    force, both measured now by the same `evaluate` on the same documents and KB, under the one promotion
    rule ("if-not-worse"). A time cap or an unlucky run so never replaces a better version. Without a
    version in force, or one that may have trained on these documents, there is no fair comparison: the
    new version goes in force, as `train` asks, and the reason says so."""
    import json

    from core.jobs.models.promotion import promotion_decision
    from core.retrieve.rescnn import load_model

    active = project.models.active_model("retriever")
    if active is None:
        return True, ""
    try:
        recorded = json.loads(active.metrics_json or "{}")
    except ValueError:
        recorded = {}
    if not isinstance(recorded, dict):
        recorded = {}
    same = recorded.get("dev_fingerprint", "") == held_out_fingerprint(held) or (
        "dev_fingerprint" not in recorded
        and recorded.get("dev_documents") == len(held)  # before fingerprints
    )
    if not same:
        return (
            True,
            f"no fair comparison: the version in force {active.version} did not hold out these documents",
        )
    kept = [point for point in result.history if point.get("epoch") == result.best_epoch]
    new = kept[-1] if kept else evaluate(load_model(result.folder))
    old = evaluate(load_model(active.path))
    promoted, reason = promotion_decision("retriever", new, old, "if-not-worse")
    metrics["against_version_in_force"] = {
        "version": active.version,
        "new": {k: new[k] for k in ("acc@1", "recall@20") if k in new},
        "old": {k: old[k] for k in ("acc@1", "recall@20") if k in old},
    }
    log.info("retriever against %s in force on %d held-out documents: %s", active.version, len(held), reason)
    if not promoted:
        reason += (
            f" ({active.version}) on the same {len(held)} held-out documents; "
            f"`promote retriever {version}` puts it in force anyway"
        )
    return promoted, reason


def early_stopping_documents(project: Project) -> list:
    """Gold-linked documents to stop training on: the dev split, else the last tenth of train."""
    dev = [d for d in project.documents.documents("dev") if any(m.concept_ids for m in d.mentions)]
    if dev:
        return dev
    train = [d for d in project.documents.documents("train") if any(m.concept_ids for m in d.mentions)]
    cut = max(1, len(train) // 10) if len(train) > 1 else 0
    if cut:
        log.info("no dev split: holding out %d train documents for early stopping", cut)
    return train[len(train) - cut :] if cut else []


def retrain_retriever(project: Project, step: RetrainStep) -> KindReport:
    from core.learn.warm_start import finetune_rescnn

    kb, data, max_seconds, epochs, seed = step.kb, step.data, step.max_seconds, step.epochs, step.seed
    base_model, promote, progress, cancel = step.base_model, step.promote, step.progress, step.cancel
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
        return publish_step(project, draft, report, rule=promote, kb=kb, data=data, cancel=cancel)


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
