"""The detector's step in `retrain`: fine-tune the span model in force (or a fresh one) on the gold and
curator-checked spans, judge old vs new on the held-out slice, register, promote under the one promotion rule (core.jobs.models.kinds).

The held-out slice is the retrain's own (core.learn.training_data.held_out_ids: a hash of the document
id, so it never moves between retrains); those documents are never trained on. Early stopping watches
the dev split outside the slice. The judged score is the mean of strict span F1 and end-to-end strict
F1 on the slice's raw text (core.evaluate.detection.dev_scorer).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from core.detect.train_detector import DetectorTrainingOptions
from core.jobs.models.detector import KIND, fit_detector, project_training_documents, require_spans
from core.progress import NEVER_CANCELLED, CancelToken, PhasedProgress
from core.project_detector import load_span_detector

if TYPE_CHECKING:
    from core.store.project import Project

log = logging.getLogger(__name__)


def retrain_detector(
    project: Project,
    kb,
    data=None,
    *,
    promote: str,
    epochs: int,
    max_seconds: float | None = None,
    device: str = "auto",
    base_model: str | None = None,
    seed: int = 13,
    progress: PhasedProgress,
    cancel: CancelToken = NEVER_CANCELLED,
):
    """Returns the retrain's KindReport for the detector (core.jobs.models.retrain). It learns spans, not
    links: the retrain's linking `data` is not used (its held-out slice is the same hash of the id), and
    `epochs` bounds it (`max_seconds` does not apply)."""
    from core.evaluate.detection import dev_scorer
    from core.jobs.models.retrain_report import KindReport, publish_retrained
    from core.jobs.models.versions import draft_version
    from core.learn.training_data import held_out_ids

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
    with draft_version(project, KIND) as draft:
        report.version = draft.version
        fitted.save_into(draft.folder)
        return publish_retrained(
            project,
            draft,
            report,
            rule=promote,
            kb_fingerprint=kb.fingerprint(),
            data_fingerprint=fitted.data_fingerprint,
            metrics=fitted.metrics,
            cancel=cancel,
        )
