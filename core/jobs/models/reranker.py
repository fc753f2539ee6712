"""Reranker jobs over a project: train a new version, its step in `retrain`, evaluate the active one (the
CLI and GUI call these; loading a version: core.project_models.load_reranker).

Training follows core.jobs.models.versions: the version is trained in a scratch folder under
models/reranker/ and moved to models/reranker/<version>/ only once it finished, so a cancel or a
crash leaves the model in force untouched. Candidates come from the project's active retriever
through `Linker` (abbreviation expansion and composite splitting included), exactly as at link time.
The fusion weight is chosen on the dev split (or on a held-out tenth of train when there is no dev
split) and saved with the model.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from core.documents import Candidate, Document
from core.errors import CuralinkError
from core.jobs.models.compare import ranked_metrics
from core.jobs.models.retrain_report import KindReport, RetrainStep, publish_step
from core.jobs.models.versions import TrainedVersion, draft_version
from core.kb.knowledge_base import KnowledgeBase
from core.learn.training_data import TrainingSet
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress
from core.rerank.cross_encoder import CrossEncoder
from core.rerank.fusion import choose_weight, refuse
from core.rerank.reranker import CrossEncoderReranker
from core.rerank.training import TrainingConfig, ranked_accuracy, train
from core.retrieve.query_plan import plan_document
from core.text.normalize import normalize_name

if TYPE_CHECKING:
    from core.store.project import Project

log = logging.getLogger(__name__)

KIND = "reranker"
DEFAULT_CANDIDATES = 16
RERANK_CANDIDATES = 16  # per mention, in a retrain
RERANK_DEV_DOCUMENTS = 50


def _retrieve(linker, documents: Sequence[Document], count: int) -> list[list[list[Candidate]]]:
    return [[list(row[:count]) for row in doc] for doc in linker.suggest(documents)] if documents else []


def _percent(value: float) -> float:
    return round(100 * value, 2)


def _splits(project: Project) -> tuple[list[Document], list[Document]]:
    train_docs = list(project.documents.documents("train"))
    dev_docs = list(project.documents.documents("dev"))
    if not train_docs:
        raise CuralinkError(f"{project.path}: no documents in the train split to train a reranker on")
    if not dev_docs:  # hold out a tenth of train for early stopping and the fusion weight
        cut = max(1, len(train_docs) // 10) if len(train_docs) > 1 else 0
        dev_docs = train_docs[len(train_docs) - cut :] if cut else []
        train_docs = train_docs[: len(train_docs) - cut]
        log.info("no dev split: holding out %d train documents as dev", len(dev_docs))
    return train_docs, dev_docs


def train_reranker_for_project(
    project: Project,
    *,
    packing: str = "document",
    base_model: str | Path | None = None,
    max_seconds: float | None = None,
    max_epochs: int | None = None,
    patience: int | None = None,
    candidates: int = DEFAULT_CANDIDATES,
    learning_rate: float | None = None,
    max_length: int = 256,
    device: str = "auto",
    promote: bool = True,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> TrainedVersion:
    """Train, save, register (and promote) a reranker version."""
    from core.jobs.models.versions import draft_version, publish_version
    from core.learn.training_data import fingerprint, gold_pairs
    from core.project_models import load_linker

    kb = project.kb.knowledge_base()
    linker = load_linker(
        project, kb=kb, use_reranker=False, use_ranker=False, candidates=candidates, cancel=cancel
    )
    train_docs, dev_docs = _splits(project)
    progress(0, 1, "retrieving candidates")
    train_c = _retrieve(linker, train_docs, candidates)
    dev_c = _retrieve(linker, dev_docs, candidates)
    encoder = CrossEncoder.from_base(base_model, packing=packing, max_length=max_length)
    config = TrainingConfig(max_seconds=max_seconds)  # bounded by epochs and dev patience; seconds optional
    if max_epochs is not None:
        config.max_epochs = max_epochs
    if patience is not None:
        config.patience = patience
    if learning_rate is not None:
        config.learning_rate = learning_rate
    with draft_version(project, KIND) as draft:
        version = draft.version
        result = train(
            encoder,
            train_docs,
            train_c,
            dev_docs,
            dev_c,
            kb,
            config,
            device=device,
            progress=progress,
            cancel=cancel,
        )
        reranker = CrossEncoderReranker(encoder, device=device, fusion_weight=0.0)
        weight, table = (0.0, {0.0: 0.0})
        if dev_docs:
            dev_ranked = reranker.rerank(dev_docs, dev_c, cancel=cancel)
            weight, table = choose_weight(dev_ranked, lambda r: ranked_accuracy(dev_docs, r, kb))
        encoder.config.fusion_weight = weight
        metrics = {
            "packing": packing,
            "candidates": candidates,
            "dev_acc@1": _percent(table[0.0]),
            "dev_acc@1_fused": _percent(table[weight]),
            "dev_retriever_acc@1": _percent(ranked_accuracy(dev_docs, dev_c, kb)) if dev_docs else 0.0,
            "fusion_weight": weight,
            "train_mentions": result.train_mentions,
            "train_seconds": round(result.train_seconds, 2),
            "train_examples_per_s": round(result.examples_per_s, 2),
            "epochs": round(result.epochs, 3),
            "steps": result.steps,
            "stopped_by": result.stopped_by,
            "learning_rate": config.learning_rate,
        }
        encoder.save(draft.folder, metrics={k: v for k, v in metrics.items() if isinstance(v, (int, float))})
        final = publish_version(
            project,
            draft,
            metrics=metrics,
            kb_fingerprint=kb.fingerprint(),
            data_fingerprint=fingerprint(gold_pairs(project)),
            promote=promote,
            cancel=cancel,
        )
    log.info(
        "trained reranker %s (%s) in %.1f s: dev acc@1 %s alone, %s fused with the retriever (weight %s; "
        "retriever %s)",
        version,
        packing,
        result.train_seconds,
        metrics["dev_acc@1"],
        metrics["dev_acc@1_fused"],
        metrics["fusion_weight"],
        metrics["dev_retriever_acc@1"],
    )
    return TrainedVersion(KIND, version, final, metrics, promote)


def evaluate_reranker_for_project(
    project: Project,
    *,
    split: str = "test",
    packing: str | None = None,
    candidates: int = DEFAULT_CANDIDATES,
    device: str = "auto",
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    """acc@1 (percent) of the active reranker, fused as saved and pure, of the retriever alone; speed.

    `acc@1` is what linking ranks by (the saved fusion weight; equal to `acc@1_pure` when it is 0).

    `packing` packs inputs at another level than the model was trained with (None: its own).
    """
    from core.project_models import load_linker

    active = project.models.active_model(KIND)
    if active is None:
        raise CuralinkError(
            f"{project.path}: no trained reranker yet (run `curalink -p {project.path} train reranker`)"
        )
    documents = list(project.documents.documents(split))
    if not documents:
        raise CuralinkError(f"{project.path}: no documents in the {split!r} split")
    kb = project.kb.knowledge_base()
    linker = load_linker(
        project, kb=kb, use_reranker=False, use_ranker=False, candidates=candidates, cancel=cancel
    )
    found = _retrieve(linker, documents, candidates)
    encoder = CrossEncoder.load(Path(active.path))
    reranker = CrossEncoderReranker(encoder, packing=packing, device=device, fusion_weight=0.0)
    start = time.perf_counter()
    ranked = reranker.rerank(documents, found, cancel=cancel)
    seconds = time.perf_counter() - start
    mentions = sum(len(doc.mentions) for doc in documents)
    weight = encoder.config.fusion_weight
    return {
        "version": active.version,
        "split": split,
        "packing": reranker.packer.level,
        "device": reranker.device_description,
        "candidates": candidates,
        "mentions": mentions,
        "retriever_acc@1": _percent(ranked_accuracy(documents, found, kb)),
        "acc@1_pure": _percent(ranked_accuracy(documents, ranked, kb)),
        "acc@1": _percent(ranked_accuracy(documents, refuse(ranked, weight), kb)),
        "fusion_weight": weight,
        "mentions_per_s": round(mentions / seconds, 2) if seconds > 0 else 0.0,
        "tokens": int(reranker.last_stats.get("tokens", 0)),
    }


def retrain_reranker(project: Project, step: RetrainStep) -> KindReport:
    from core.project_models import load_linker

    kb, data, max_seconds, epochs, seed = step.kb, step.data, step.max_seconds, step.epochs, step.seed
    device, base_model, promote = step.device, step.base_model, step.promote
    progress, cancel = step.progress, step.cancel
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
        return publish_step(project, draft, report, rule=promote, kb=kb, data=data, cancel=cancel)


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
