"""Finding mentions in raw text for the front ends (`link --detect`, the desk's "find mentions") and
storing them: only into the documents core.jobs.linking.detect_targets allows, typed, never over a stored span.

A detected span that overlaps any stored mention of the document, a deleted one included, is left
out: a curator's deletion of a detected mention must not be undone by the next run. Which detector a
project uses (per type: the tagger, the span model in force, else its dictionary) is
core.project_detector's choice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.documents import Mention
from core.errors import CuralinkError
from core.jobs.linking.detect_targets import plan_targets
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress
from core.project_detector import ChosenDetector, detector_for_project

if TYPE_CHECKING:
    from core.store.project import Project

__all__ = ["ChosenDetector", "DetectSummary", "detect_into_project", "detector_for_project", "find_mentions"]


@dataclass
class DetectSummary:
    documents: int = 0
    added: int = 0
    overlapping: int = 0
    skipped: dict[str, list[str]] = field(default_factory=dict)
    detector: str = ""  # which detector tagged (its description), when the caller records it

    def tagged(self, asked: Sequence[str]) -> list[str]:
        """The asked documents that were tagged (not skipped), in the order asked."""
        left_out = {doc_id for ids in self.skipped.values() for doc_id in ids}
        return [doc_id for doc_id in asked if doc_id not in left_out]


def detect_into_project(
    project: Project,
    detector,
    *,
    split: str | None = None,
    ids: Sequence[str] | None = None,
    include_gold: bool = False,
    batch_documents: int = 64,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> DetectSummary:
    """Add detected mentions (origin "detected") to the documents `plan_targets` chooses; one
    transaction in all, so a cancel stores nothing."""
    targets = plan_targets(project, split=split, ids=ids, include_gold=include_gold)
    summary = DetectSummary(skipped=targets.skipped)
    found: list[tuple[str, Mention]] = []
    for first in range(0, len(targets.tag), batch_documents):
        cancel.raise_if_cancelled()
        batch = list(
            project.documents.documents(ids=targets.tag[first : first + batch_documents], include_removed=True)
        )
        for document, detected in zip(batch, detector.detect(batch), strict=True):
            for mention in detected:
                if not mention.type:
                    raise CuralinkError(
                        f"detector {detector.name!r} gave an untyped mention in {document.doc_id}; "
                        "give it a mention type"
                    )
                if any(mention.span.overlaps(existing.span) for existing in document.mentions):
                    summary.overlapping += 1
                    continue
                found.append((document.doc_id, mention))
            summary.documents += 1
            progress(summary.documents, len(targets.tag), "documents tagged")
    cancel.raise_if_cancelled()
    summary.added = project.documents.add_detected_mentions(found)  # unlinked, origin "detected"
    return summary


def find_mentions(
    project: Project,
    chosen: ChosenDetector,
    ids: Sequence[str],
    *,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> DetectSummary:
    """Tag mentions in the raw text of the given documents (the desk's "find mentions") with the
    detector chosen for the project: stored unlinked and typed; gold documents and spans overlapping a
    stored or deleted mention are left alone. The summary names the detector; linking then suggests for
    what was found."""
    summary = detect_into_project(project, chosen.detector, ids=ids, progress=progress, cancel=cancel)
    summary.detector = chosen.description
    return summary
