"""Training jobs that produce a new model version of a project.

A version is trained into a scratch folder under models/<kind>/ and moved to models/<kind>/<version>/
only when training finished; a cancel or a crash deletes the scratch folder, so the model in force is
never touched by a failed run.
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

from core.atomic_files import write_text_atomic
from core.housekeeping import (
    SCRATCH_PREFIX,
    claim_scratch,
    prune_indexes,
    release_scratch,
    remove_dead_scratch,
)
from core.learn.training_data import curated_pairs, fingerprint, gold_pairs, resolvable
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

log = logging.getLogger(__name__)

KB_NAMES_PER_EPOCH = 6000
DEFAULT_EPOCHS = 10
DEFAULT_PATIENCE = 2
"""`train retriever` stops after DEFAULT_EPOCHS, or sooner once dev acc@1 has not risen for this many
epochs in a row: bounded by the data, not by the machine's load (`max_seconds` stays an option)."""


@dataclass
class TrainedVersion:
    kind: str
    version: str
    path: Path
    metrics: dict = field(default_factory=dict)
    promoted: bool = False


def next_version(project, kind: str) -> str:
    taken = {row.version for row in project.model_versions(kind)}
    number = len(taken) + 1
    while f"v{number}" in taken or (project.models_dir / kind / f"v{number}").exists():
        number += 1
    return f"v{number}"


def register_version(
    project,
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
        active = project.active_model(kind)
        parent_version = active.version if active else ""
    project.register_model(
        kind,
        version,
        path,
        metrics=metrics,
        kb_fingerprint=kb_fingerprint,
        data_fingerprint=data_fingerprint,
        parent_version=parent_version,
    )
    if promote:
        project.promote_model(kind, version)


@contextmanager
def scratch_folder(project, kind: str) -> Iterator[Path]:
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


def prune_project_indexes(project, kb_fingerprint: str) -> int:
    """Remove name indexes no retriever in use needs: keep those of the active version and of candidate
    versions (promotable) for the current knowledge base, and of live scratch folders (a retrain being
    evaluated in another process). A retired version rolled back to rebuilds its index then."""
    from core.errors import CuralinkError
    from core.retrieve.rescnn_retriever import saved_version

    try:
        rows = project.model_versions("retriever")
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


def train_retriever(
    project,
    *,
    base_model: str | None = None,
    epochs: int = DEFAULT_EPOCHS,
    max_seconds: float | None = None,
    patience: int = DEFAULT_PATIENCE,
    pooling: str = "max",
    seed: int = 13,
    include_gold: bool = True,
    promote: bool = True,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> TrainedVersion:
    """Train a ResCNN retriever on the project's KB synonyms, gold train/dev mentions and curator links.

    With `patience` (> 0) and gold documents to hold out, early stopping watches dev acc@1 after every
    epoch: the dev split, or without one the last tenth of the train documents (as the reranker does);
    those documents are then not trained on. `patience=0`: every epoch, on every document."""
    from core.jobs.compare import dev_evaluator
    from core.retrieve.rescnn import RescnnConfig
    from core.retrieve.train import TrainOptions, train_rescnn

    kb = project.knowledge_base()
    dev = _early_stopping_documents(project) if patience and include_gold else []
    held = {document.doc_id for document in dev}
    gold = gold_pairs(project, exclude=held) if include_gold else []
    pairs = resolvable(gold + curated_pairs(project, exclude=held), kb)
    config = RescnnConfig(base_model=base_model or "", pooling=pooling)
    # A large KB would make every epoch hundreds of steps of synonyms alone: sample them, and show the
    # (far fewer) annotated mentions twice (the recipe measured on NCBI-disease + MEDIC).
    options = TrainOptions(
        kb_names_per_epoch=KB_NAMES_PER_EPOCH if len(kb.names) > KB_NAMES_PER_EPOCH else None,
        pair_repeats=2 if pairs else 1,
    )
    version = next_version(project, "retriever")
    with scratch_folder(project, "retriever") as scratch:
        result = train_rescnn(
            kb,
            pairs,
            config,
            scratch,
            epochs=epochs,
            seed=seed,
            options=options,
            progress=progress,
            cancel=cancel,
            max_seconds=max_seconds,
            version=version,  # not the scratch folder's name
            epoch_eval=dev_evaluator(dev, kb) if dev else None,
            patience=patience if dev else None,
        )
        cancel.raise_if_cancelled()
        metrics = {
            **result.metrics,
            "train_pairs": len(pairs),
            "train_seconds": round(result.seconds, 2),
            "dev_documents": len(dev),
        }
        write_text_atomic(scratch / "metrics.json", json.dumps(metrics, indent=2))
        final = project.models_dir / "retriever" / version
        scratch.rename(final)
    register_version(
        project,
        "retriever",
        version,
        final,
        metrics=metrics,
        kb_fingerprint=kb.fingerprint(),
        data_fingerprint=fingerprint(pairs),
        promote=promote,
    )
    prune_project_indexes(project, kb.fingerprint())
    log.info("trained retriever %s on %d pairs in %.1f s", version, len(pairs), result.seconds)
    return TrainedVersion("retriever", version, final, metrics, promote)


def _early_stopping_documents(project) -> list:
    """Gold-linked documents to stop training on: the dev split, else the last tenth of train."""
    dev = [d for d in project.documents("dev") if any(m.concept_ids for m in d.mentions)]
    if dev:
        return dev
    train = [d for d in project.documents("train") if any(m.concept_ids for m in d.mentions)]
    cut = max(1, len(train) // 10) if len(train) > 1 else 0
    if cut:
        log.info("no dev split: holding out %d train documents for early stopping", cut)
    return train[len(train) - cut :] if cut else []
