"""Putting model versions in force and bringing the stored suggestions up to date with them.

A promotion (or a rollback) changes the models in force, but the suggestions stored for the mentions
nobody has reviewed yet still come from the old ones: without a relink the desk would go on showing
them. Both front ends call these jobs, so the CLI and the desk leave the same suggestions behind.
Reviewed mentions keep their decisions and the suggestions they were decided on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.errors import CuralinkError
from core.link_summary import LinkSummary
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

if TYPE_CHECKING:
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


def promote_versions(project: Project, versions: Mapping[str, str]) -> dict[str, str]:
    """Put each kind's chosen version in force; returns those that changed (kind -> version)."""
    changed = {}
    for kind, version in versions.items():
        known = {row.version for row in project.models.model_versions(kind)}
        if version not in known:
            raise CuralinkError(
                f"{project.path}: no {kind} version {version!r} (known: {', '.join(sorted(known))})"
            )
        active = project.models.active_model(kind)
        if active is None or active.version != version:
            project.models.promote_model(kind, version)
            changed[kind] = version
            log.info("%s %s put in force", kind, version)
    return changed


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
    changed = promote_versions(project, versions)
    if not changed or not relink:
        return changed, None
    return changed, relink_after_change(project, device=device, progress=progress, cancel=cancel)
