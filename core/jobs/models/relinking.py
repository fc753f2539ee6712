"""Bringing the stored suggestions up to date with the models in force, after a promotion, a rollback or a retrain.

A promotion (or a rollback) changes the models in force, but the suggestions stored for the mentions
nobody has reviewed yet still come from the old ones: without a relink the desk would go on showing
them. Both front ends call these jobs, so the CLI and the desk leave the same suggestions behind
(`retrain_and_relink`, `promote_and_relink`; a rollback relinks with `relink_after_change`).
Reviewed mentions keep their decisions and the suggestions they were decided on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.link_summary import LinkSummary
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

if TYPE_CHECKING:
    from core.jobs.models.retrain_report import RetrainReport
    from core.store.project import Project

log = logging.getLogger(__name__)


@dataclass
class UnreviewedWork:
    """The documents holding mentions without a standing decision, in linking order, and those mentions."""

    doc_ids: list[str]
    mention_ids: set[int]


def unreviewed(project: Project, *, first: Sequence[str] = ()) -> UnreviewedWork:
    """Documents with unreviewed mentions; the ones in `first` (the open document) come first."""
    decided = set(project.curation.current_decisions())
    doc_ids: list[str] = []
    mention_ids: set[int] = set()
    for document, ids in project.documents.documents_with_mention_ids():
        open_ids = [i for i in ids if i not in decided]
        if open_ids:
            doc_ids.append(document.doc_id)
            mention_ids.update(open_ids)
    ahead = [d for d in first if d in set(doc_ids)]
    return UnreviewedWork(ahead + [d for d in doc_ids if d not in set(ahead)], mention_ids)


def relink_unreviewed(
    project: Project,
    linker,
    *,
    first: Sequence[str] = (),
    batch_documents: int = 32,
    on_linked: Callable[[list[str]], None] | None = None,
    between: Callable[[], None] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> LinkSummary:
    """New suggestions from `linker` for every unreviewed mention; reviewed ones are left as stored.

    `on_linked(doc_ids)` after each stored batch (the desk shows them at once); `between()` runs before
    each batch (the desk serves edited mentions waiting for suggestions there)."""
    work = unreviewed(project, first=first)
    total = LinkSummary()
    for start in range(0, len(work.doc_ids), batch_documents):
        cancel.raise_if_cancelled()
        if between is not None:
            between()
        batch = work.doc_ids[start : start + batch_documents]
        summary = linker.link_project(
            project, ids=batch, mentions=work.mention_ids, batch_documents=batch_documents, cancel=cancel
        )
        total.documents += summary.documents
        total.mentions += summary.mentions
        total.suggestions += summary.suggestions
        total.seconds += summary.seconds
        if on_linked is not None:
            on_linked(batch)
        progress(
            min(start + len(batch), len(work.doc_ids)), len(work.doc_ids), "unreviewed documents relinked"
        )
    log.info(
        "relinked %d unreviewed mentions in %d documents with retriever %s, ranking %s",
        total.mentions,
        total.documents,
        linker.retriever_version,
        linker.ranked_version or "retriever order",
    )
    return total


def relink_after_change(
    project: Project,
    *,
    device: str = "auto",
    candidates: int | None = None,
    first: Sequence[str] = (),
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> LinkSummary:
    """Load the models now in force and relink the unreviewed mentions with them (the CLI's path; the
    desk reuses its warm link service for the same `relink_unreviewed`)."""
    from core.jobs.linking.suggestions import ProjectLinker
    from core.pipeline import DEFAULT_CANDIDATES

    linker = ProjectLinker.for_project(
        project, device=device, candidates=candidates or DEFAULT_CANDIDATES, progress=progress, cancel=cancel
    )
    return relink_unreviewed(project, linker, first=first, progress=progress, cancel=cancel)


def promote_and_relink(
    project: Project,
    versions: Mapping[str, str],
    *,
    relink: bool = True,
    device: str = "auto",
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> tuple[dict[str, str], LinkSummary | None]:
    """Promote, then (when anything changed) relink the unreviewed mentions with the new models."""
    from core.jobs.models.promotion import promote_versions

    changed = promote_versions(project, versions)
    if not changed or not relink:
        return changed, None
    return changed, relink_after_change(project, device=device, progress=progress, cancel=cancel)


@dataclass
class RetrainOutcome:
    """A retrain and what followed it: the report, the versions the rule put in force, the relink's result
    (None when nothing changed or relinking was off)."""

    report: RetrainReport
    changed: dict[str, str]
    relinked: object = None


def promoted_by(report: RetrainReport) -> dict[str, str]:
    """kind -> version, for each new version the promotion rule put in force (the models that changed)."""
    return {kind.kind: kind.version for kind in report.kinds.values() if kind.promoted and kind.version}


def retrain_and_relink(
    project: Project,
    *,
    relink: bool = True,
    retrainer: Callable[..., RetrainReport] | None = None,
    relinker: Callable[..., object] | None = None,
    device: str = "auto",
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
    **options,
) -> RetrainOutcome:
    """Retrain (core.jobs.models.retrain.retrain with `options`), then, when the promotion rule put some new
    version in force, relink the unreviewed mentions with the models now in force: the CLI's `retrain`
    and the desk's both end this way. `retrainer` runs the same retrain elsewhere (the desk: in a child
    process); `relinker(project, changed, device=, progress=, cancel=)` relinks elsewhere (the desk:
    through its warm link service, the open document first; default `relink_after_change`)."""
    if retrainer is None:
        from core.jobs.models.retrain import retrain as retrainer
    report = retrainer(project, device=device, progress=progress, cancel=cancel, **options)
    changed = promoted_by(report)
    if not relink or not changed:
        return RetrainOutcome(report, changed)
    log.info("relinking after the retrain put %s in force", ", ".join(f"{k} {v}" for k, v in changed.items()))
    if relinker is None:
        relinked = relink_after_change(project, device=device, progress=progress, cancel=cancel)
    else:
        relinked = relinker(project, changed, device=device, progress=progress, cancel=cancel)
    return RetrainOutcome(report, changed, relinked)
