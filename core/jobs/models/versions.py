"""How a model version comes to be, for every kind: next version -> scratch folder -> rename -> register.

A version is trained into a scratch folder under models/<kind>/ (`draft_version`) and moved to
models/<kind>/<version>/ only when training finished (`publish_version`); a cancel or a crash deletes
the scratch folder, so the model in force is never touched by a failed run.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from core.atomic_files import write_text_atomic
from core.housekeeping import (
    SCRATCH_PREFIX,
    claim_scratch,
    prune_indexes,
    release_scratch,
    remove_dead_scratch,
)
from core.progress import NEVER_CANCELLED, CancelToken

if TYPE_CHECKING:
    from core.store.project import Project

log = logging.getLogger(__name__)

@dataclass
class TrainedVersion:
    """What every kind's trainer returns (core.jobs.models.kinds.train): the version published, or (version "")
    why none was trained."""

    kind: str
    version: str
    path: Path | None
    metrics: dict = field(default_factory=dict)
    promoted: bool = False
    reason: str = ""
    """Why it is in force or a candidate (core.jobs.models.promotion.promotion_decision)."""
    message: str = ""
    """What the front ends say about it (why none was trained, what the ranker learned)."""

    @property
    def trained(self) -> bool:
        return bool(self.version)

    @property
    def verdict(self) -> str:
        """What became of the version, for the front ends' one line about it."""
        if self.promoted:
            return "made active"
        return f"kept as a candidate ({self.reason})" if self.reason else "kept as a candidate"


def next_version(project: Project, kind: str) -> str:
    taken = {row.version for row in project.models.model_versions(kind)}
    number = len(taken) + 1
    while f"v{number}" in taken or (project.models_dir / kind / f"v{number}").exists():
        number += 1
    return f"v{number}"


def register_version(
    project: Project,
    kind: str,
    version: str,
    path: Path,
    *,
    metrics: dict,
    kb_fingerprint: str,
    data_fingerprint: str = "",
    parent_version: str | None = None,
    promote: bool = False,
) -> None:
    """Record a finished model folder in the registry (its parent: the version in force, unless given)
    and put it in force when asked. Every trainer ends this way."""
    if parent_version is None:
        active = project.models.active_model(kind)
        parent_version = active.version if active else ""
    project.models.register_model(
        kind,
        version,
        path,
        metrics=metrics,
        kb_fingerprint=kb_fingerprint,
        data_fingerprint=data_fingerprint,
        parent_version=parent_version,
    )
    if promote:
        project.models.promote_model(kind, version)


@contextmanager
def scratch_folder(project: Project, kind: str) -> Iterator[Path]:
    """A folder under models/<kind>/ to train into. It is deleted if the block fails or is cancelled;
    the caller moves it to models/<kind>/<version>/ only once the version is complete. Its owner file
    marks it as in use while this process lives; scratch folders of dead runs are removed first."""
    remove_dead_scratch(project.models_dir)
    parent = project.models_dir / kind
    parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX, dir=parent))
    try:
        claim_scratch(scratch)
        yield scratch
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    finally:
        release_scratch(scratch)


def prune_project_indexes(project: Project, kb_fingerprint: str) -> int:
    """Remove name indexes no retriever in use needs: keep those of the active version and of candidate
    versions (promotable) for the current knowledge base, and of live scratch folders (a retrain being
    evaluated in another process). A retired version rolled back to rebuilds its index then."""
    from core.errors import CuralinkError
    from core.retrieve.rescnn_retriever import saved_version

    try:
        rows = project.models.model_versions("retriever")
    except CuralinkError as exc:  # a registry row leading outside the project: prune nothing
        log.warning("%s; name indexes not pruned", exc)
        return 0
    folders = [Path(row.path) for row in rows if row.status in ("active", "candidate")]
    folders += [p for p in (project.models_dir / "retriever").glob(SCRATCH_PREFIX + "*") if p.is_dir()]
    keep = set()
    for folder in folders:
        try:
            keep.add(saved_version(folder))
        except (CuralinkError, OSError):
            continue  # a missing or broken folder has no index worth keeping
    return prune_indexes(project.index_dir, kb_fingerprint, keep)


@dataclass(frozen=True)
class Draft:
    """A version being trained: its number, reserved, and the scratch folder it is written into."""

    kind: str
    version: str
    folder: Path


@contextmanager
def draft_version(project: Project, kind: str) -> Iterator[Draft]:
    """The next version of `kind` and a scratch folder to train it into (deleted if the block fails)."""
    version = next_version(project, kind)
    with scratch_folder(project, kind) as scratch:
        yield Draft(kind, version, scratch)


def publish_version(
    project: Project,
    draft: Draft,
    *,
    metrics: dict,
    kb_fingerprint: str,
    data_fingerprint: str = "",
    parent_version: str | None = None,
    promote: bool = False,
    cancel: CancelToken = NEVER_CANCELLED,
) -> Path:
    """The one way a version joins a project: metrics.json written, the scratch folder renamed to
    models/<kind>/<version>/, the version registered (and put in force when `promote`). Call it inside
    `draft_version`'s block, so a cancel up to the rename still deletes the scratch folder."""
    cancel.raise_if_cancelled()
    write_text_atomic(draft.folder / "metrics.json", json.dumps(metrics, indent=2))
    final = project.models_dir / draft.kind / draft.version
    draft.folder.rename(final)
    register_version(
        project,
        draft.kind,
        draft.version,
        final,
        metrics=metrics,
        kb_fingerprint=kb_fingerprint,
        data_fingerprint=data_fingerprint,
        parent_version=parent_version,
        promote=promote,
    )
    return final


def training_lines(trained: TrainedVersion, wall: float) -> list[str]:
    """The end-of-training line of the retriever and the reranker: steps, epochs, why it stopped,
    training and wall-clock seconds."""
    metrics = trained.metrics
    best = metrics.get("best_epoch")
    stop = metrics.get("stopped_by", "epochs")
    reason = {"epochs": "the epoch limit", "max_epochs": "the epoch limit", "patience": "no dev gain"}.get(
        stop, "the time limit"
    )
    return [
        f"trained {metrics.get('steps', '?')} steps, {metrics.get('epochs', '?')} epochs; stopped by {reason}"
        + (f" (best dev epoch {best} kept)" if best is not None else "")
        + f"; {metrics.get('train_seconds', 0):.1f} s training, {wall:.1f} s wall"
    ]
