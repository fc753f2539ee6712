"""Span-model jobs over a project: train a version, its step in `retrain` (the CLI and retrain call these;
a version is loaded by core.project_detector.load_detector_version).

Versions follow the other model kinds (core.jobs.models.versions): trained into a scratch folder under
models/detector/, moved to models/detector/<version>/ only once complete, registered with the KB and
training-data fingerprints, promoted or kept as a candidate; `curalink rollback detector` puts the
previous one back. A new span model is promoted only if `link --detect` links the held-out documents
end to end at least as well with it as with the dictionary alone (`end_to_end_against_dictionary`,
judged by core.jobs.models.promotion.promotion_decision like every kind): more spans are not better where the KB
cannot link them. The tagger (core.jobs.models.tagger) is judged the same way against the detector in force.

Where the spans come from (`project_training_documents`): imported gold (train split; dev for early
stopping) and curator work: a curator's own spans, and detected spans a curator accepted or corrected.
A document counts only when someone vouched for its spans (an annotated file or a curator decision),
so the model never learns its own unchecked output.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from core.atomic_files import write_text_atomic
from core.detect.candidates import concept_vectors
from core.detect.in_force import KIND, detector_device
from core.detect.segments import mention_types, segment_documents
from core.detect.span_detector import SpanDetector
from core.detect.span_model import DetectorConfig, load_detector, new_detector, save_detector
from core.detect.train_detector import DetectorTrainingOptions, train_span_model
from core.detect.wordpieces import backend
from core.documents import Document, Mention
from core.errors import CuralinkError
from core.jobs.linking.detect_targets import PROJECT_ORIGINS
from core.jobs.models.versions import TrainedVersion
from core.locations import base_model_reference, content_hash, resolve_base_model
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

if TYPE_CHECKING:
    from core.jobs.models.retrain_report import KindReport, RetrainStep
    from core.store.project import Project

log = logging.getLogger(__name__)


def project_training_documents(project: Project, split: str | None) -> list[Document]:
    """Documents of `split` (None: all) whose spans someone vouched for, with the spans that stand."""
    decisions = project.curation.current_decisions()
    out = []
    for document, mention_ids in project.documents.documents_with_mention_ids(split):
        kept: list[Mention] = []
        vouched = False
        for mention, mention_id in zip(document.mentions, mention_ids, strict=True):
            decision = decisions.get(mention_id)
            if decision is not None and decision.action in ("reject", "nil") and mention.origin == "detected":
                vouched = True
                continue  # a detected span a curator turned down
            if mention.origin not in PROJECT_ORIGINS or mention.origin == "curator":
                vouched = True
                kept.append(_decided(mention, decision))
            elif decision is not None and decision.action in ("accept", "correct"):
                vouched = True
                kept.append(_decided(mention, decision))
        if vouched and kept:
            out.append(document.with_mentions(kept))
    return out


def _decided(mention: Mention, decision) -> Mention:
    """The mention with the concept a curator linked it to, when one did."""
    if decision is not None and decision.action in ("accept", "correct") and decision.concept_id:
        mention = replace(mention, concept_id=decision.concept_id)
    return replace(mention, type=mention.type or "Mention")


def training_splits(project: Project) -> tuple[list, list]:
    """(train, dev) documents with vouched-for spans: dev is the dev split, else the last tenth of train;
    test documents are never trained on."""
    held = set(project.documents.document_ids("dev")) | set(project.documents.document_ids("test"))
    train = [d for d in project_training_documents(project, None) if d.doc_id not in held]
    dev = project_training_documents(project, "dev")
    if not dev and len(train) > 1:
        cut = max(1, len(train) // 10)
        train, dev = train[: len(train) - cut], train[len(train) - cut :]
        log.info("no dev split: holding out %d train documents for early stopping", cut)
    return train, dev


def data_fingerprint(documents) -> str:
    digest = hashlib.sha256()
    for document in sorted(documents, key=lambda d: d.doc_id):
        for m in document.mentions:
            digest.update(
                f"{document.doc_id}\x00{m.start}\x00{m.end}\x00{m.type}\x00{m.concept_id}\x01".encode()
            )
    return digest.hexdigest()[:16]


@dataclass
class FittedDetector:
    """A trained model not yet saved: what `save_into` writes and the registry records."""

    model: object
    tokenizer: object
    config: DetectorConfig
    vectors: object
    metrics: dict
    base: str
    data_fingerprint: str

    def save_into(self, folder: Path) -> None:
        self.config.base_model = base_model_reference(self.base, folder)
        save_detector(self.model.to("cpu"), self.tokenizer, self.config, folder)
        write_text_atomic(folder / "metrics.json", json.dumps(self.metrics, indent=2))

    def detector(self, device: str = "cpu") -> SpanDetector:
        return SpanDetector(self.model, self.tokenizer, self.config, self.vectors, device=device)


def require_spans(project: Project, train_docs) -> None:
    if not any(d.mentions for d in train_docs):
        raise CuralinkError(
            f"{project.path}: no gold or curator-checked mention spans to train a detector on (import an "
            "annotated corpus with `curalink corpus import FILE --split train`, or accept / draw mentions "
            "in the desk first)"
        )


def fit_detector(
    project: Project,
    kb,
    train_docs,
    dev_docs,
    *,
    base_model: str | None = None,
    warm_start: str | Path | None = None,
    options: DetectorTrainingOptions | None = None,
    device: str = "auto",
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> FittedDetector:
    """Train on `train_docs`, stopping early on `dev_docs`; from `warm_start` (a saved detector folder:
    its types, weights and base model) or fresh on `base_model` (default: the packaged MiniLM)."""
    from core.evaluate.detection import dev_scorer
    from core.retrieve.rescnn import check_base_folder, default_base_model

    options = options or DetectorTrainingOptions()
    if len(kb.names) == 0:
        raise CuralinkError(
            f"{project.path}: the knowledge base has no names; import one with `curalink kb import`"
        )
    require_spans(project, train_docs)
    run_device = detector_device(device)
    started = time.perf_counter()
    if warm_start is not None:
        model, tokenizer, config = load_detector(warm_start)
        base = str(resolve_base_model(config.base_model, config.base_model_hash, warm_start, "detector"))
        known = set(config.types)
        types = config.types + [t for t in mention_types(train_docs) if t not in known]
        if len(types) != len(config.types):  # a new type: a wider type head, the old rows kept
            model.type_head = _widened(model.type_head, len(types))
            config.types = types
    else:
        base = str(Path(base_model or default_base_model()).absolute())
        check_base_folder(base)
        types = mention_types(train_docs)
        model, tokenizer = new_detector(base, types, seed=options.seed)
        config = DetectorConfig(types=types, base_model=base, base_model_hash=content_hash(base))
    config.kb_fingerprint = kb.fingerprint()
    vectors = concept_vectors(
        kb,
        base,
        cache_dir=project.index_dir,
        progress=lambda done, total, message="": progress(0, None, f"concept names: {done}/{total}"),
        cancel=cancel,
    )
    segments, stats = segment_documents(
        train_docs,
        backend(tokenizer),
        types,
        lambda mention: _concept_row(mention, kb, vectors),
        cls_id=tokenizer.cls_token_id,
        sep_id=tokenizer.sep_token_id,
        max_span=config.max_span,
    )
    log.info("detector training material: %s", stats)
    detector = SpanDetector(model, tokenizer, config, vectors, device=run_device)
    result = train_span_model(
        model,
        segments,
        vectors,
        pad_id=tokenizer.pad_token_id or 0,
        evaluate_dev=dev_scorer(detector, dev_docs, kb) if dev_docs else None,
        options=options,
        device=run_device,
        progress=progress,
        cancel=cancel,
    )
    cancel.raise_if_cancelled()
    metrics = {
        "dev": result.best_dev,
        "history": result.history,
        "steps": result.steps,
        "epochs": result.epochs,
        "best_epoch": result.best_epoch,
        "stopped_by": result.stopped_by,
        "train_seconds": round(result.seconds, 1),
        "wall_seconds": round(time.perf_counter() - started, 1),
        "segments_per_s": result.segments_per_s,
        "device": run_device,
        "warm_start": str(warm_start) if warm_start else "",
        "train_documents": len(train_docs),
        "dev_documents": len(dev_docs),
        "segments": stats.segments,
        "mentions": stats.mentions,
        "linked_mentions": stats.linked,
        "unaligned_mentions": stats.unaligned,
        "mentions_over_max_span": stats.too_long,
        "types": stats.types,
        "options": asdict(options),
    }
    config.metrics = {k: v for k, v in (result.best_dev or {}).items() if isinstance(v, (int, float))}
    config.threshold = float((result.best_dev or {}).get("threshold", config.threshold))
    return FittedDetector(model, tokenizer, config, vectors, metrics, base, data_fingerprint(train_docs))


def _widened(head, types: int):
    import torch

    wider = torch.nn.Linear(head.in_features, types)
    with torch.no_grad():
        wider.weight[: head.out_features] = head.weight
        wider.bias[: head.out_features] = head.bias
    return wider


def train_detector_for_project(
    project: Project,
    *,
    base_model: str | None = None,
    options: DetectorTrainingOptions | None = None,
    device: str = "auto",
    promote: bool = True,
    against_dictionary: bool = True,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> TrainedVersion:
    """Train, save, register (and promote) a detector version. With `against_dictionary`, it goes in
    force only if `link --detect` links the held-out documents at least as well with it as with the
    dictionary alone (end_to_end_against_dictionary); else it is kept as a candidate, saying why."""
    from core.jobs.models.promotion import promotion_decision
    from core.jobs.models.versions import draft_version, publish_version

    kb = project.kb.knowledge_base()
    train_docs, dev_docs = training_splits(project)
    fitted = fit_detector(
        project,
        kb,
        train_docs,
        dev_docs,
        base_model=base_model,
        options=options,
        device=device,
        progress=progress,
        cancel=cancel,
    )
    reason = ""
    if promote and against_dictionary:
        comparison = end_to_end_against_dictionary(project, kb, fitted, dev_docs, device=device)
        if comparison is not None:
            fitted.metrics["end_to_end_against_dictionary"] = comparison
            # the one rule every kind is judged by, the dictionary's figure standing for the old version
            promote, why = promotion_decision(
                KIND, {"score": comparison["span model"]}, {"score": comparison["dictionary"]}
            )
            if not promote:
                reason = (
                    f"the dictionary linked its {len(dev_docs)} held-out documents better end to end: "
                    f"strict F1 {comparison['dictionary']:.2f} against {comparison['span model']:.2f} ({why}); "
                    "`promote detector` puts it in force anyway"
                )
    with draft_version(project, KIND) as draft:
        version = draft.version
        fitted.save_into(draft.folder)
        final = publish_version(
            project,
            draft,
            metrics=fitted.metrics,
            kb_fingerprint=kb.fingerprint(),
            data_fingerprint=fitted.data_fingerprint,
            promote=promote,
            cancel=cancel,
        )
    log.info("trained detector %s: %s", version, fitted.metrics["dev"])
    return TrainedVersion(KIND, version, final, fitted.metrics, promote, reason)


def train_keywords(
    *,
    epochs: int | None = None,
    patience: int | None = None,
    trainable_layers: int | None = None,
    promote: str = "if-better",
    **keywords,
) -> dict:
    """`train detector`'s options as the trainer's keywords: the training options in one
    DetectorTrainingOptions; "if-better" is the comparison with the dictionary."""
    options = DetectorTrainingOptions()
    if epochs is not None:
        options.max_epochs = epochs
    if patience is not None:
        options.patience = patience
    if trainable_layers is not None:
        options.trainable_layers = trainable_layers or None
    return {**keywords, "options": options, "against_dictionary": promote == "if-better"}


def training_lines(trained: TrainedVersion, wall: float) -> list[str]:
    metrics = trained.metrics
    return [
        f"trained {metrics['steps']} steps, {metrics['epochs']} epochs on {metrics['segments']} segments "
        f"({metrics['device']}); stopped by {metrics['stopped_by']} (best dev epoch {metrics['best_epoch']} "
        f"kept: {metrics['dev']}); {metrics['train_seconds']:.0f} s training, {wall:.0f} s wall"
    ]


def end_to_end_against_dictionary(
    project: Project, kb, fitted: FittedDetector, dev_docs, *, device: str = "auto"
) -> dict | None:
    """End-to-end strict F1 (percent) on the held-out documents of what `link --detect` would store with
    the new span model in force (its spans, the dictionary's in its gaps) and without it (the project's
    dictionary), both linked by the linker in force; None without a retriever or held-out documents.

    The span model finds more spans, but spans the KB cannot link (a chemical's supplementary id outside
    MeSH's descriptors) cost precision end to end: on BioRED with MeSH the dictionary linked better
    (README), on NCBI-disease with MEDIC the span model did."""
    if not dev_docs or project.models.active_model("retriever") is None:
        return None
    from core.evaluate.detection import gold_annotations, linked_as_stored, predicted_annotations
    from core.evaluate.entity_linking import linking_report
    from core.pipeline import DEFAULT_CANDIDATES
    from core.project_detector import dictionary_for_project
    from core.project_models import load_linker

    held_out = {document.doc_id for document in dev_docs}
    dictionary = dictionary_for_project(project, kb, leave_out=held_out).detector
    span = fitted.detector(detector_device(device))
    span.gap_filler = dictionary
    linker = load_linker(project, kb=kb, device=device, candidates=DEFAULT_CANDIDATES)
    raw = [document.with_mentions([]) for document in dev_docs]
    # every span of a held-out document was vouched for (core.jobs.models.detector.training_splits): all gold
    gold = gold_annotations(
        [d.with_mentions([replace(m, origin="gold") for m in d.mentions]) for d in dev_docs], kb
    )
    scores = {}
    for name, detector in (("span model", span), ("dictionary", dictionary)):
        linked = linked_as_stored(linker, raw, detector.detect(raw))
        report = linking_report(gold, predicted_annotations(raw, linked, kb))
        scores[name] = round(100 * report["end_to_end_strict"]["f1"], 2)
    log.info("end to end on %d held-out documents: %s", len(dev_docs), scores)
    return scores


def _concept_row(mention, kb, vectors) -> int:
    """The concept-vector row of a mention's first id (composites keep their first id, §C.3); -1 if none."""
    ids = mention.concept_ids
    primary = kb.resolve(ids[0]) if ids else None
    return vectors.index_of.get(primary, -1) if primary else -1


def retrain_detector(project: Project, step: RetrainStep) -> KindReport:
    """The detector's step in `retrain` (core.jobs.models.retrain): fine-tune the span model in force (or a
    fresh one) on the gold and curator-checked spans, judge old vs new on the retrain's own held-out slice
    (core.learn.training_data.held_out_ids: a hash of the document id, never trained on) by the mean of
    strict span F1 and end-to-end strict F1 (core.evaluate.detection.dev_scorer), publish under the rule.
    Early stopping watches the dev split outside the slice. It learns spans, not links: the retrain's
    linking `data` is not used, and `epochs` bounds it (`max_seconds` does not apply)."""
    from core.evaluate.detection import dev_scorer
    from core.jobs.models.retrain_report import KindReport, publish_fitted
    from core.learn.training_data import held_out_ids
    from core.project_detector import load_span_detector

    kb, promote, epochs, device, seed = step.kb, step.promote, step.epochs, step.device, step.seed
    base_model, progress, cancel = step.base_model, step.progress, step.cancel
    progress.enter(KIND)
    vouched = [d for d in project_training_documents(project, None)]
    test = set(project.documents.document_ids("test"))
    vouched = [d for d in vouched if d.doc_id not in test]
    held = held_out_ids([d.doc_id for d in vouched])
    judge = [d for d in vouched if d.doc_id in held]
    dev_split = set(project.documents.document_ids("dev"))
    dev = [d for d in vouched if d.doc_id in dev_split and d.doc_id not in held]
    train = [d for d in vouched if d.doc_id not in held and d.doc_id not in dev_split]
    require_spans(project, train)
    active = project.models.active_model(KIND)
    report = KindReport(KIND, "", active.version if active else "", "")
    started = time.perf_counter()
    fitted = fit_detector(
        project,
        kb,
        train,
        dev,
        base_model=base_model,
        warm_start=active.path if active else None,
        options=DetectorTrainingOptions(max_epochs=epochs, seed=seed),
        device=device,
        progress=progress,
        cancel=cancel,
    )
    report.seconds = time.perf_counter() - started
    report.steps = fitted.metrics["steps"]
    report.history = fitted.metrics["history"]
    if judge:
        old = load_span_detector(project, kb=kb, device=device)
        report.old = dev_scorer(old, judge, kb)() if old is not None else {}
        report.new = dev_scorer(fitted.detector(), judge, kb)()
    return publish_fitted(
        project,
        report,
        fitted.save_into,
        rule=promote,
        kb=kb,
        data_fingerprint=fitted.data_fingerprint,
        metrics=fitted.metrics,
        cancel=cancel,
    )
