"""Linking a project's documents, optionally finding new mentions first: the one sequence `curalink link
[--detect]` and the desk's linking and Find mentions run (detect into the store, then suggest for the
mentions and store the suggestions), so both leave the same mentions and suggestions behind.

`linker` is what holds the loaded models: a core.jobs.linking.suggestions.ProjectLinker in this process,
or a core.jobs.linking.linker_process.LinkerProcess (the desk's child); both offer `find_mentions` and
`link_project`. Which documents detection may write into is core.jobs.linking.detect_targets' rule.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.link_summary import LinkSummary
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

if TYPE_CHECKING:
    from core.jobs.linking.mentions import DetectSummary
    from core.store.project import Project

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Detect:
    """Find mentions before linking: of `mention_type` only (None: every type the project's routes admit),
    into gold-annotated documents too when `include_gold`. `only_tagged`: link only the documents
    detection tagged (the desk), not the whole selection (the command line)."""

    mention_type: str | None = None
    include_gold: bool = False
    only_tagged: bool = False


@dataclass
class LinkOutcome:
    """What `link` changed: the mentions detection added (and the documents it left alone, by reason)
    and the suggestions stored."""

    found: DetectSummary | None = None
    linked: LinkSummary = field(default_factory=LinkSummary)

    @property
    def documents(self) -> int:
        return self.linked.documents

    @property
    def mentions_added(self) -> int:
        return self.found.added if self.found is not None else 0

    @property
    def suggestions(self) -> int:
        return self.linked.suggestions

    @property
    def skipped(self) -> dict[str, list[str]]:
        """Documents detection left alone, by reason (core.jobs.linking.detect_targets' SKIP_*)."""
        return self.found.skipped if self.found is not None else {}


def link(
    project: Project,
    linker,
    *,
    detect: Detect | None = None,
    split: str | None = None,
    ids: Sequence[str] | None = None,
    batch_documents: int = 32,
    on_found: Callable[[DetectSummary], None] | None = None,
    on_linked: Callable[[list[str]], None] | None = None,
    between: Callable[[], None] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> LinkOutcome:
    """Suggest concepts for the mentions of the selected documents (`split`, `ids`; neither: all) and
    store them; with `detect`, find new mentions in them first (without a selection: in the documents
    that have none) and tell `on_found` before linking starts.

    `on_linked(doc_ids)` after each stored batch and `between()` before each (the desk shows each
    document as it is stored, one at a time, and serves edited mentions in between); both need `ids`.
    Detection refuses (an unknown type, unknown ids) before anything is stored."""
    outcome = LinkOutcome()
    targets = None if ids is None else list(ids)
    if detect is not None:
        outcome.found = linker.find_mentions(
            project,
            targets,
            split=split,
            include_gold=detect.include_gold,
            mention_type=detect.mention_type,
            progress=progress,
            cancel=cancel,
        )
        if on_found is not None:
            on_found(outcome.found)
        if detect.only_tagged:
            targets = outcome.found.tagged(targets or []) if outcome.found.added else []
    if targets is not None and not targets:
        return outcome
    if on_linked is None and between is None:
        outcome.linked = linker.link_project(
            project, split=split, ids=targets, batch_documents=batch_documents, progress=progress, cancel=cancel
        )
    else:
        if targets is None:
            raise ValueError("link: on_linked / between need the documents (ids)")
        outcome.linked = _link_in_batches(
            project, linker, targets, batch_documents, on_linked, between, progress, cancel
        )
    log.info(
        "linked %d mentions in %d documents (%d detected mentions added)",
        outcome.linked.mentions,
        outcome.linked.documents,
        outcome.mentions_added,
    )
    return outcome


def _link_in_batches(
    project: Project,
    linker,
    ids: list[str],
    batch_documents: int,
    on_linked: Callable[[list[str]], None] | None,
    between: Callable[[], None] | None,
    progress: ProgressCallback,
    cancel: CancelToken,
) -> LinkSummary:
    """Link `ids` a batch at a time, each batch stored (and told) before the next starts."""
    total = LinkSummary()
    for first in range(0, len(ids), batch_documents):
        cancel.raise_if_cancelled()
        if between is not None:
            between()
        batch = ids[first : first + batch_documents]
        summary = linker.link_project(project, ids=batch, batch_documents=batch_documents, cancel=cancel)
        total.documents += summary.documents
        total.mentions += summary.mentions
        total.suggestions += summary.suggestions
        total.seconds += summary.seconds
        for mention_type, count in summary.unrouted.items():
            total.unrouted[mention_type] = total.unrouted.get(mention_type, 0) + count
        total.routing_warnings = summary.routing_warnings
        if on_linked is not None:
            on_linked(batch)
        progress(first + len(batch), len(ids), "documents linked")
    return total
