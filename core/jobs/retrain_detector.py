"""The detector's step in `retrain`: fine-tune the span model in force (or a fresh one) on the gold and
curator-checked spans, judge old vs new on the held-out slice, register, promote if not worse.

The held-out slice is the retrain's own (core.learn.training_data.held_out_ids: a hash of the document
id, so it never moves between retrains); those documents are never trained on. Early stopping watches
the dev split outside the slice. The judged score is the mean of strict span F1 and end-to-end strict
F1 on the slice's raw text (core.evaluate.detection.dev_scorer).
"""

from __future__ import annotations

import logging
import time

from core.detect.segments import project_training_documents
from core.detect.train_detector import DetectorTrainingOptions
from core.jobs.detector import KIND, fit_detector, load_span_detector, require_spans
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

log = logging.getLogger(__name__)


def retrain_detector(
    project,
    kb,
    *,
    epochs: int,
    promote: str,
    device: str = "auto",
    base_model: str | None = None,
    seed: int = 13,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
):
    """Returns the retrain's KindReport for the detector (core.jobs.retrain)."""
    from core.evaluate.detection import dev_scorer
    from core.jobs.retrain import KindReport
    from core.jobs.versions import next_version, register_version, scratch_folder
    from core.learn.training_data import held_out_ids

    vouched = [d for d in project_training_documents(project, None)]
    test = set(project.document_ids("test"))
    vouched = [d for d in vouched if d.doc_id not in test]
    held = held_out_ids([d.doc_id for d in vouched])
    judge = [d for d in vouched if d.doc_id in held]
    dev_split = set(project.document_ids("dev"))
    dev = [d for d in vouched if d.doc_id in dev_split and d.doc_id not in held]
    train = [d for d in vouched if d.doc_id not in held and d.doc_id not in dev_split]
    require_spans(project, train)
    active = project.active_model(KIND)
    version = next_version(project, KIND)
    report = KindReport(KIND, version, active.version if active else "", "")
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
    if promote == "always":
        report.promoted, report.reason = True, "promoted by explicit choice"
    elif promote == "never":
        report.promoted, report.reason = False, "kept as a candidate by explicit choice"
    elif not report.new:
        report.promoted, report.reason = False, "no held-out documents with spans to compare on"
    elif not report.old:
        report.promoted, report.reason = True, "no detector in force to compare with"
    else:
        report.promoted = report.new["score"] >= report.old["score"]
        relation = ">=" if report.promoted else "<"
        report.reason = (
            f"held-out span/end-to-end F1 {report.new['score']:.2f} {relation} {report.old['score']:.2f}"
        )
    fitted.metrics.update(
        {"held_out": report.new, "previous": {"version": report.parent_version, **report.old}}
    )
    fitted.metrics["decision"] = report.reason
    with scratch_folder(project, KIND) as scratch:
        fitted.save_into(scratch)
        cancel.raise_if_cancelled()
        final = project.models_dir / KIND / version
        scratch.rename(final)
    report.path = str(final)
    register_version(
        project,
        KIND,
        version,
        final,
        metrics=fitted.metrics,
        kb_fingerprint=kb.fingerprint(),
        data_fingerprint=fitted.data_fingerprint,
        parent_version=report.parent_version,
        promote=report.promoted,
    )
    log.info("detector %s: %s (%s)", version, "promoted" if report.promoted else "kept", report.reason)
    return report
