"""`run_batch`: the link-batch job the CLI (and the benchmark) call.

Order of refusals, all before any shard is linked: unknown formats and output-name clashes; inputs
without mentions and no --detect; Ray missing or its address unreachable; another run holding the
folder; a folder made with other models or another KB (or not a link-batch folder) unless
`overwrite`. Then finished shards (manifest entry done, same input hash, output present) are skipped,
the rest linked by the chosen engine, each shard's output renamed into place by this driver as it
records the shard (workers leave temporaries: a worker never publishes a shard the driver did not
record), each shard recorded by one line appended to the manifest's journal (core.batch.manifest), and
PubMed deletions applied across shards
(core.batch.deletions). Curator synonyms learnt since a folder was linked do not refuse it (the same
concepts: core.batch.kb_identity); the summary notes the difference. A cancel stops at a shard
boundary: what finished is recorded, and the same command resumes.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.atomic_files import _fsync_folder, remove_stale_temporaries
from core.batch.deletions import apply_deletions
from core.batch.kb_identity import CURATOR_KEY, curator_note
from core.batch.manifest import LOCK, MANIFEST, Manifest, folder_lock
from core.batch.models import INDEX_FOLDER, identity_differences, resolve
from core.batch.plan import WITHOUT_MENTIONS, ShardTask, file_sha256, plan_shards
from core.batch.timing import throughput
from core.errors import CuralinkError
from core.pipeline import DEFAULT_CANDIDATES
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

log = logging.getLogger(__name__)

ENGINES = ("local", "ray")


@dataclass
class BatchSummary:
    out_dir: Path
    engine: str
    workers: int
    shards: int = 0
    linked: int = 0
    already_done: int = 0
    malformed: list[dict[str, Any]] = field(default_factory=list)
    documents: int = 0
    mentions: int = 0
    detected: int = 0
    removed_by_deletions: int = 0
    seconds: float = 0.0
    cancelled: bool = False
    notes: list[str] = field(default_factory=list)
    """What a user should know that did not stop the run (curator synonyms learnt since, ...)."""
    figures: dict[str, Any] = field(default_factory=dict)
    """Start-up and steady-state figures of this run's shards (core.batch.timing)."""


def run_batch(
    inputs: Sequence[str | Path],
    out_dir: str | Path,
    project: str | Path,
    *,
    engine: str = "local",
    workers: int = 1,
    address: str | None = None,
    fmt: str | None = None,
    out_format: str = "jsonl",
    detect: bool = False,
    mention_type: str | None = None,
    candidates: int = DEFAULT_CANDIDATES,
    device: str = "auto",
    overwrite: bool = False,
    progress: ProgressCallback = no_progress,
    shard_progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> BatchSummary:
    """Link every input shard into `out_dir` with the models in force in `project` (read-only)."""
    if engine not in ENGINES:
        raise CuralinkError(f"--engine {engine}: use one of {', '.join(ENGINES)}")
    if workers < 1:
        raise CuralinkError(f"--workers {workers}: give at least 1")
    if address and engine != "ray":
        raise CuralinkError("--address names a Ray cluster: add --engine ray")
    out_dir = Path(out_dir).resolve()
    skipped: list[str] = []
    tasks = plan_shards(inputs, fmt, out_format, skipped)
    if not detect:
        bare = [t for t in tasks if t.format in WITHOUT_MENTIONS]
        if bare:
            raise CuralinkError(
                f"{bare[0].input}: {bare[0].format} carries no mentions to link: add --detect (the "
                "project's dictionary detector tags them first)"
            )
    if engine == "ray":
        from core.batch.ray_engine import check_reachable, require_ray

        require_ray()
        if address:
            check_reachable(address)
    summary = BatchSummary(out_dir, engine, workers, shards=len(tasks), notes=skipped)
    started = time.perf_counter()
    with folder_lock(out_dir):
        remove_stale_temporaries(out_dir, max_age=0)  # ours, from a killed run: the lock says none is live
        previous = Manifest.load(out_dir)
        if previous is None and not overwrite:
            _refuse_foreign_folder(out_dir)
        spec, identity = resolve(
            project,
            out_dir,
            candidates=candidates,
            detect=detect,
            mention_type=mention_type,
            device=device,
            progress=progress,
            cancel=cancel,
        )
        manifest = _manifest_for(out_dir, previous, identity, overwrite)
        todo = _unfinished(tasks, manifest, summary)
        _note_curator_synonyms(manifest, tasks, todo, identity, summary)
        entries: list[dict[str, Any]] = []

        def on_result(entry: dict[str, Any]) -> None:
            staged = entry.pop("staged", None)
            # An earlier output of the shard goes first, then the entry is saved, then the new output
            # takes the shard's name: a kill at any point leaves no file the manifest does not list as
            # done with its hash (a done entry without its file is linked again by the next run).
            (out_dir / entry["name"]).unlink(missing_ok=True)
            if entry["status"] == "done":
                entry[CURATOR_KEY] = identity[CURATOR_KEY]
            manifest.shards[entry["name"]] = entry
            manifest.record(entry["name"])  # one journal line: the same cost at the 10,000th shard
            if entry["status"] == "done":
                _publish(out_dir, staged, entry["name"])
            entries.append(entry)
            if entry["status"] == "done":
                summary.linked += 1
                summary.documents += entry["documents"]
                summary.mentions += entry["mentions"]
                summary.detected += entry["detected"]
            else:
                summary.malformed.append(entry)
            finished = summary.already_done + summary.linked + len(summary.malformed)
            progress(finished, len(tasks), f"{entry['name']}: {entry['status']}")

        progress(summary.already_done, len(tasks), "shards")
        run_started = time.time()
        try:
            used = _run_engine(
                engine, spec, todo, out_dir, workers, address, identity, on_result, shard_progress, cancel
            )
        finally:
            _tidy(out_dir, todo, manifest)
        summary.cancelled = cancel.cancelled and len(entries) < len(todo)
        if not summary.cancelled:
            summary.removed_by_deletions = apply_deletions(manifest, cancel)
            if not cancel.cancelled:  # the pass ran to its end: import-linked may read the folder
                manifest.deletions = "done"
        summary.seconds = time.perf_counter() - started
        summary.figures = throughput(entries, summary.seconds)
        manifest.runs.append(
            {
                "engine": engine,
                "workers": workers,
                **used,
                "started_at": run_started,
                "finished_at": time.time(),
                "shards_linked": summary.linked,
                "shards_malformed": len(summary.malformed),
                "shards_already_done": summary.already_done,
                "cancelled": summary.cancelled,
                "figures": summary.figures,
            }
        )
        manifest.save()
    return summary


def _run_engine(engine, spec, todo, out_dir, workers, address, identity, on_result, shard_progress, cancel):
    if engine == "ray":
        from core.batch.ray_engine import run_ray

        return run_ray(
            spec,
            todo,
            out_dir,
            workers=workers,
            address=address,
            uses_reranker=identity.get("reranker") is not None,
            on_result=on_result,
            cancel=cancel,
        )
    from core.batch.local_engine import run_local

    run_local(
        spec,
        todo,
        out_dir,
        workers=workers,
        on_result=on_result,
        shard_progress=shard_progress,
        cancel=cancel,
    )
    return {}


def _publish(out_dir: Path, staged: str | None, name: str) -> None:
    """The worker's temporary output renamed onto the shard's name: only the driver does this, just
    after it recorded the shard (a kill in between leaves a done entry without its file, which the next
    run links again, and `import-linked` refuses by name; never a file the manifest does not list)."""
    if not staged or Path(staged).name != staged or not (out_dir / staged).is_file():
        raise CuralinkError(f"{out_dir}: the linked output of {name} is missing (its temporary {staged})")
    os.replace(out_dir / staged, out_dir / name)
    _fsync_folder(out_dir)


def _note_curator_synonyms(
    manifest: Manifest, tasks: list[ShardTask], todo: list[ShardTask], identity: dict, summary: BatchSummary
) -> None:
    """A resume after curators taught the project synonyms goes on (same concepts); say so."""
    linking = {t.name for t in todo}
    kept = [
        manifest.shards[t.name]
        for t in tasks
        if t.name not in linking and manifest.shards.get(t.name, {}).get("status") == "done"
    ]
    differ = [e for e in kept if curator_note(e.get(CURATOR_KEY), identity[CURATOR_KEY])]
    if differ:
        note = curator_note(differ[0].get(CURATOR_KEY), identity[CURATOR_KEY], len(differ))
        summary.notes.append(f"{manifest.folder}: {note}")
        log.warning("%s: %s", manifest.folder, note)


def _tidy(out_dir: Path, todo: list[ShardTask], manifest: Manifest) -> None:
    """After the engine stopped (done, cancelled or failed): the temporaries of shards abandoned in flight
    (Ray stops its actors mid-shard on a cancel) and any output this run did not record as done (an
    actor that finished after the driver stopped listening) go, so the folder holds exactly what the
    manifest says; those shards are linked again next time."""
    remove_stale_temporaries(out_dir, max_age=0)
    for task in todo:
        if manifest.shards.get(task.name, {}).get("status") != "done":
            (out_dir / task.name).unlink(missing_ok=True)


def _refuse_foreign_folder(out_dir: Path) -> None:
    """A folder holding other files and no manifest is not ours to write into (without --overwrite)."""
    foreign = [p.name for p in out_dir.iterdir() if p.name not in (LOCK, INDEX_FOLDER)]
    if foreign:
        raise CuralinkError(
            f"{out_dir}: not a link-batch output folder (no {MANIFEST}) and not empty ({foreign[0]}, ...): "
            "choose an empty or new --out folder, or --overwrite to write into it anyway"
        )


def _manifest_for(out_dir: Path, previous: Manifest | None, identity: dict, overwrite: bool) -> Manifest:
    if previous is None:
        manifest = Manifest(out_dir, identity)
        manifest.save()
        return manifest
    differences = identity_differences(previous.identity, identity)
    if differences and not overwrite:
        raise CuralinkError(
            f"{out_dir}: linked with other models or another knowledge base ({'; '.join(differences)}); "
            f"choose another --out folder, or --overwrite to delete its {len(previous.shards)} linked "
            "shard(s) there and link afresh"
        )
    if overwrite:
        for name in previous.shards:
            (out_dir / name).unlink(missing_ok=True)
        log.info(
            "%s: --overwrite: %d earlier shard(s) removed, linking afresh", out_dir, len(previous.shards)
        )
        # the generation goes on: journal lines of the old folder never count for the new manifest
        manifest = Manifest(out_dir, identity, runs=previous.runs, generation=previous.generation)
        manifest.save()
        return manifest
    previous.identity = identity  # same models and KB; the project may have moved
    return previous


def _unfinished(tasks: list[ShardTask], manifest: Manifest, summary: BatchSummary) -> list[ShardTask]:
    """Tasks not finished for their present input: a done shard with the same input hash and its output
    present is skipped, as is a shard already found malformed in this very input."""
    todo = []
    for task in tasks:
        entry = manifest.shards.get(task.name)
        if entry is not None and entry.get("input_sha256") == file_sha256(task.input):
            entry["position"] = task.position
            output = manifest.folder / task.name
            if entry.get("status") == "done" and output.is_file() and not output.is_symlink():
                summary.already_done += 1
                continue
            if entry.get("status") == "malformed":
                summary.malformed.append(entry)
                continue
        todo.append(task)
    manifest.deletions = "pending"  # until the DeleteCitation pass of this run has run to its end
    manifest.save()
    return todo
