"""The ranker in a project: what it learns from, training it, its step in `retrain`, measuring the one in
force (`evaluate ranker`; loading a version: core.project_models.load_ranker).

It learns from the project's linked mentions: imported train/dev gold and every accepted or corrected
decision (core.learn.training_data). With none, no ranker is trained and linking keeps the
retriever's order; the caller is told so.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from core.documents import Candidate, Document
from core.errors import CuralinkError, InputError, ModelError
from core.evaluate.metrics import first_hit_rank, hit_rate
from core.jobs.models.versions import TrainedVersion, draft_version, publish_version
from core.kb.knowledge_base import KnowledgeBase
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress
from core.project_models import linked_documents, load_linker, load_ranking_stage, nothing_to_learn
from core.rank.calibration import expected_calibration_error, precision_coverage
from core.rank.held_out import METRICS_KEY, describe
from core.rank.hierarchy import ConceptHierarchy
from core.rank.model import DEFAULT_SCORER, RankerModel, fit_ranker
from core.rank.stage import RankingStage, annotation_prior

if TYPE_CHECKING:
    from core.jobs.models.retrain_report import KindReport, RetrainStep
    from core.store.project import Project

log = logging.getLogger(__name__)

KIND = "ranker"
DEFAULT_CANDIDATES = 20
DEFAULT_TFIDF_UNION = 8


@dataclass
class Examples:
    rows: np.ndarray
    labels: np.ndarray
    groups: np.ndarray
    mentions: int = 0
    found: int = 0  # mentions whose gold concept is among the candidates
    mention_of_row: np.ndarray | None = None  # which mention each row is a candidate of
    whole: np.ndarray | None = None  # per row: right and the mention's whole link (not a composite's part)


def examples(
    stage: RankingStage,
    linker,
    documents: Sequence[Document],
    candidates: Sequence[Sequence[Sequence[Candidate]]],
    *,
    use_cross_encoder: bool,
    union: int,
    cancel: CancelToken = NEVER_CANCELLED,
) -> Examples:
    """Feature rows of every candidate of every linked mention, labelled by the mention's concept."""
    rows, labels, groups, mention_of_row, whole = [], [], [], [], []
    mentions = found = 0
    flat_queries, flat, golds, numbers, single = [], [], [], [], []
    for number, (document, queries, per_document) in enumerate(
        zip(documents, linker.plan(documents), candidates, strict=True)
    ):
        for mention, query, listed in zip(document.mentions, queries, per_document, strict=True):
            gold = {i for concept_id in mention.concept_ids for i in stage.kb.ids_of(concept_id)}
            if gold and listed:
                flat_queries.append(query)
                flat.append(listed)
                golds.append(gold)
                numbers.append(number)
                single.append(len({stage.kb.resolve(c) or c for c in mention.concept_ids}) == 1)
    cancel.raise_if_cancelled()
    featured = stage.features(flat_queries, flat, use_cross_encoder=use_cross_encoder, union=union)
    for (merged, features), gold, number, one in zip(featured, golds, numbers, single, strict=True):
        right = [bool(stage.kb.ids_of(c.concept_id) & gold) for c in merged]
        whole.extend([r and one for r in right])
        mention_of_row.extend([mentions] * len(merged))
        mentions += 1
        found += any(right)
        rows.append(features)
        labels.extend(right)
        groups.extend([number] * len(merged))
    width = rows[0].shape[1] if rows else 0
    return Examples(
        np.vstack(rows) if rows else np.zeros((0, width)),
        np.asarray(labels, dtype=int),
        np.asarray(groups, dtype=int),
        mentions,
        found,
        np.asarray(mention_of_row, dtype=int),
        np.asarray(whole, dtype=bool),
    )


def fit_for_documents(
    linker,
    kb: KnowledgeBase,
    documents: Sequence[Document],
    *,
    use_cross_encoder: bool,
    union: int = DEFAULT_TFIDF_UNION,
    seed: int = 13,
    hierarchy: ConceptHierarchy | None = None,
    unseen_documents: Collection[str] = (),
    scorer: str = DEFAULT_SCORER,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> RankerModel:
    """A ranker fitted on the linker's candidates for these linked documents (prior leave-one-document-out).

    `hierarchy`: the tree the hierarchy features read (default: the KB's own tree numbers); a ranker
    must be applied with the same one it was fitted with. `unseen_documents`: ids of the documents the
    retriever did not train on; the held-out bulk-accept curve is measured on them when they are enough
    (core.rank.held_out). `scorer`: core.rank.model.SCORERS."""
    started = time.perf_counter()
    progress(0, 3, "retrieving candidates for the linked mentions")
    candidates = linker.suggest(documents)
    cancel.raise_if_cancelled()
    progress(1, 3, "computing features")
    stage = RankingStage(None, kb, annotation_prior(documents), hierarchy=hierarchy)
    data = examples(
        stage, linker, documents, candidates, use_cross_encoder=use_cross_encoder, union=union, cancel=cancel
    )
    if data.mentions == 0 or data.labels.min(initial=0) == data.labels.max(initial=0):
        raise CuralinkError(
            "the ranker needs linked mentions whose concept is among the candidates and others that are not"
        )
    progress(2, 3, "fitting the ranker")
    wanted = set(unseen_documents)
    unseen = {number for number, document in enumerate(documents) if document.doc_id in wanted}
    model = fit_ranker(
        data.rows,
        data.labels,
        data.groups,
        mentions=data.mention_of_row,
        unseen=np.isin(data.groups, sorted(unseen)) if unseen else None,
        whole=data.whole,
        seed=seed,
        scorer=scorer,
    )
    model.uses_cross_encoder = use_cross_encoder
    model.tfidf_union = union
    model.prior_smoothing = stage.prior.smoothing
    model.metrics = {  # after the held-out bulk-accept curve fit_ranker measured
        **model.metrics,
        "scorer": model.scorer,
        "documents": len(documents),
        "mentions": data.mentions,
        "gold_among_candidates": data.found,
        "candidate_rows": int(len(data.rows)),
        "prior_links": len(stage.prior),
        "candidates": linker.candidates,
        "train_seconds": round(time.perf_counter() - started, 1),
    }
    progress(3, 3, "ranker fitted")
    return model


def retriever_held_out(project: Project) -> set[str]:
    """Ids of the documents the retriever in force did not train on: `train retriever` holds the dev split
    (else the last tenth of train) out for early stopping and records how many (`dev_documents`). A
    retriever that recorded none (one from `retrain`, trained on every training document) gives none; with
    no trained retriever in force nothing was learnt from the project's strings, and every fold is honest."""
    from core.jobs.models.retriever import early_stopping_documents

    active = project.models.active_model("retriever")
    if active is None:
        return set()
    try:
        metrics = json.loads(active.metrics_json or "{}")
    except ValueError:
        return set()
    if not isinstance(metrics, dict) or not metrics.get("dev_documents"):
        return set()
    return {document.doc_id for document in early_stopping_documents(project)}


def train_ranker_for_project(
    project: Project,
    *,
    candidates: int = DEFAULT_CANDIDATES,
    union: int = DEFAULT_TFIDF_UNION,
    use_cross_encoder: bool = False,
    device: str = "auto",
    seed: int = 13,
    scorer: str = DEFAULT_SCORER,
    promote: bool = True,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> TrainedVersion:
    """Train a ranker on every linked mention of the project, register it (and put it in force). The
    scorer (`logistic` by default, or `lightgbm` trees) is named in ranker.json and in the version's metrics."""

    kb = project.kb.knowledge_base()
    documents = linked_documents(project, kb).train_documents
    if not documents:
        log.warning(nothing_to_learn(project))
        return TrainedVersion(KIND, "", None, message=nothing_to_learn(project))
    linker = load_linker(
        project,
        kb=kb,
        device=device,
        candidates=candidates,
        use_reranker=use_cross_encoder,
        use_ranker=False,
        cancel=cancel,
    )
    if use_cross_encoder and linker.reranker is None:
        raise CuralinkError(f"{project.path}: no reranker in force to take cross-encoder features from")
    model = fit_for_documents(
        linker,
        kb,
        documents,
        use_cross_encoder=use_cross_encoder,
        union=union,
        seed=seed,
        unseen_documents=retriever_held_out(project),
        scorer=scorer,
        progress=progress,
        cancel=cancel,
    )
    with draft_version(project, KIND) as draft:
        version = model.version = draft.version
        model.save(draft.folder)
        final = publish_version(
            project, draft, metrics=model.metrics, kb_fingerprint=kb.fingerprint(), promote=promote, cancel=cancel
        )
    # The held-out bulk-accept curve (101 points) stays in ranker.json, out of the log and the summary.
    shown = {k: v for k, v in model.metrics.items() if k != METRICS_KEY}
    log.info(
        "ranker %s (%s) trained on %d mentions in %d documents (gold among the candidates for %d), %.1f s",
        version,
        model.scorer,
        shown.get("mentions", 0),
        shown.get("documents", 0),
        shown.get("gold_among_candidates", 0),
        shown.get("train_seconds", 0.0),
    )
    trained = TrainedVersion(KIND, version, final, shown, promote)
    trained.message = f"ranker {version} saved in {final} and {trained.verdict}; {describe(model.metrics.get(METRICS_KEY))}"
    return trained


def training_lines(trained: TrainedVersion, wall: float) -> list[str]:
    """What the ranker learnt from, in a sentence (not the metrics dictionary)."""
    metrics = trained.metrics
    return [
        f"trained on {metrics.get('mentions', 0):,} mentions in {metrics.get('documents', 0):,} documents; "
        f"the gold concept was among the {metrics.get('candidates', '?')} candidates for "
        f"{metrics.get('gold_among_candidates', 0):,} of them; {metrics.get('train_seconds', 0):.1f} s"
    ]


def retrain_ranker(project: Project, step: RetrainStep) -> KindReport:
    """`retrain`'s ranker step: fit on the training slice, judge old vs new on the held-out slice with
    the prior of the training slice, then publish under the promotion rule as for the other kinds.
    It fits in seconds from scratch: `epochs`, `max_seconds` and `base_model` do not apply."""
    from core.jobs.models.compare import ranked_metrics
    from core.jobs.models.retrain_report import KindReport, publish_fitted

    kb, data, promote, device, seed = step.kb, step.data, step.promote, step.device, step.seed
    progress, cancel = step.progress, step.cancel
    progress.enter(KIND)
    active = project.models.active_model(KIND)
    if not data.train_documents:
        raise CuralinkError(nothing_to_learn(project))
    old_model = None
    if active is not None:
        try:
            old_model = RankerModel.load(active.path, project.path)
        except ModelError as exc:  # another feature set: judged against the retriever's order instead
            log.warning("%s", exc)
    use_cross_encoder = bool(old_model and old_model.uses_cross_encoder)
    linker = load_linker(
        project,
        kb=kb,
        device=device,
        candidates=DEFAULT_CANDIDATES,
        use_reranker=use_cross_encoder,
        use_ranker=False,
        cancel=cancel,
        synonyms_pruned=True,  # retrain pruned them and read `kb` after
    )
    use_cross_encoder = use_cross_encoder and linker.reranker is not None
    started = time.perf_counter()
    model = fit_for_documents(
        linker,
        kb,
        data.train_documents,
        use_cross_encoder=use_cross_encoder,
        seed=seed,
        unseen_documents=retriever_held_out(project),
        scorer=old_model.scorer if old_model is not None else DEFAULT_SCORER,  # a project's choice stays
        progress=progress,
        cancel=cancel,
    )
    report = KindReport(KIND, "", active.version if active else "", "")
    report.seconds = time.perf_counter() - started
    report.mentions_per_s = round(model.metrics["mentions"] / report.seconds, 1) if report.seconds else 0.0
    held_out = data.held_out_documents
    if held_out:
        retrieved = linker.suggest(held_out)
        plan = linker.plan(held_out)
        prior = annotation_prior(data.train_documents)
        k = DEFAULT_CANDIDATES
        if old_model is not None and old_model.uses_cross_encoder == use_cross_encoder:
            old_order = RankingStage(old_model, kb, prior).rank(plan, retrieved, k, cancel=cancel)
            report.old = ranked_metrics(held_out, old_order, kb, k)
        else:
            report.old = {**ranked_metrics(held_out, retrieved, kb, k), "ranking": "retriever order"}
        new_order = RankingStage(model, kb, prior).rank(plan, retrieved, k, cancel=cancel)
        report.new = ranked_metrics(held_out, new_order, kb, k)
    cancel.raise_if_cancelled()

    def save(folder) -> None:
        model.version = report.version
        model.save(folder)

    return publish_fitted(project, report, save, rule=promote, kb=kb, data=data, cancel=cancel)


BULK_THRESHOLDS = (0.5, 0.8, 0.9, 0.95, 0.99)


def gold_documents(project: Project, split: str) -> list[Document]:
    """The split's documents with only their gold-linked mentions."""
    out = []
    for document in project.documents.documents(split):
        linked = [m for m in document.mentions if m.concept_ids and m.origin in ("gold", "imported")]
        if linked:
            out.append(document.with_mentions(linked))
    return out


def order_metrics(
    documents: Sequence[Document], ranked: Sequence[Sequence[Sequence[Candidate]]], kb: KnowledgeBase
) -> tuple[dict, list[bool], list[float]]:
    """acc@1/5, recall@20 in percent; per mention whether the top-1 is right and its score."""
    ranks: list[int | None] = []
    right, scores = [], []
    for document, per_document in zip(documents, ranked, strict=True):
        for mention, found in zip(document.mentions, per_document, strict=True):
            gold = {i for concept_id in mention.concept_ids for i in kb.ids_of(concept_id)}
            rank = first_hit_rank([kb.ids_of(c.concept_id) for c in found], gold)
            ranks.append(rank)
            right.append(rank == 1)
            scores.append(found[0].score if found else 0.0)
    metrics = {
        "acc@1": round(100 * hit_rate(ranks, 1), 2),
        "acc@5": round(100 * hit_rate(ranks, 5), 2),
        "recall@20": round(100 * hit_rate(ranks, 20), 2),
        "mentions": len(ranks),
    }
    return metrics, right, scores


def evaluate_ranker_for_project(
    project: Project,
    split: str = "test",
    *,
    candidates: int = DEFAULT_CANDIDATES,
    device: str = "auto",
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    """`evaluate ranker`: the same candidates with and without the ranker on one split's gold, and how well
    its probabilities are calibrated (expected calibration error, bulk accept precision/coverage). Both
    orders come from the pipeline's own query preparation (`Linker.plan`), so the figures measure what
    the desk runs; a composite "A|B" is right with either part."""
    kb = project.kb.knowledge_base()
    if project.models.active_model(KIND) is None:
        raise CuralinkError(
            f"{project.path}: no ranker in force; run `curalink -p {project.path} train ranker`"
        )
    stage, note = load_ranking_stage(project, kb)
    if stage is None:
        raise CuralinkError(note)
    documents = gold_documents(project, split)
    if not documents:
        raise InputError(str(project.path), f"no gold-linked mentions in split {split!r}")
    linker = load_linker(
        project,
        kb=kb,
        device=device,
        candidates=candidates,
        use_reranker=stage.model.uses_cross_encoder,
        use_ranker=False,
        cancel=cancel,
    )
    retrieved = linker.suggest(documents)
    cancel.raise_if_cancelled()
    ranked = stage.rank(linker.plan(documents), retrieved, candidates, cancel=cancel)
    before, _, _ = order_metrics(documents, retrieved, kb)
    after, right, probability = order_metrics(documents, ranked, kb)
    composites = sum(len(m.concept_ids) > 1 for d in documents for m in d.mentions)
    return {
        "split": split,
        "ranker": stage.version,
        "candidates": candidates,
        "composite_mentions": composites,
        "retriever" + (" + cross-encoder" if stage.model.uses_cross_encoder else ""): before,
        "with ranker": after,
        "top1_ece": round(expected_calibration_error(probability, right), 4),
        "bulk_accept": [precision_coverage(probability, right, t) for t in BULK_THRESHOLDS],
        # the held-out bulk-accept curve (101 points) stays in ranker.json; the desk's dialog reads it
        "trained_on": {k: v for k, v in stage.model.metrics.items() if k != METRICS_KEY},
    }
