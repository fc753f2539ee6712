"""`curalink bench batch-manifest`: what recording one shard costs at the 100th shard and at the 10,000th,
measured in one link-batch run (issue 33: the manifest used to be rewritten whole after every shard, so
1,000 empty input files took 13 s and 3,000 took 98 s).

The inputs are small files, one per shard: empty files by default (each is a malformed shard, as in the
issue's probe: the reader refuses it at once, so the run is the driver's bookkeeping) or one-abstract
PubTator files (`--kind tiny`, each linked by the demo models). The harness times, in the driver, each
call that records a shard in the manifest (`Manifest.record`, wrapped here for the count and the clock)
and the time from one shard's end to the next (what a shard costs the driver all told); beside each
record, the same synced append to a file of the harness's own (`control`), so a slower disk under other
load shows there too, and the CPU time of each record. Target: the median record time over shards
9,901-10,000 within 1.5x of that over shards 1-100.
"""

from __future__ import annotations

import os
import shutil
import statistics
import time
from pathlib import Path

from app.resources import demo_dir
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

TARGET_RATIO = 1.5
WINDOW = 100


def _inputs(folder: Path, files: int, kind: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(files):
        path = folder / f"in{number:06d}.pubtator"
        if kind == "empty":
            path.write_bytes(b"")
        else:
            pmid = 10_000_000 + number
            path.write_text(
                f"{pmid}|t|Huntington disease\n{pmid}|a|A study of Huntington disease.\n"
                f"{pmid}\t0\t18\tHuntington disease\tDisease\tD006816\n\n",
                encoding="utf-8",
            )


def _median_ms(values: list[float]) -> float:
    return round(1000 * statistics.median(values), 3) if values else 0.0


def bench_batch_manifest(
    work: Path,
    *,
    files: int = 10_000,
    kind: str = "empty",
    project: Path | None = None,
    train_seconds: float = 20.0,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    from app.demo import build_demo_project
    from core.batch import run_batch
    from core.batch.manifest import Manifest

    work.mkdir(parents=True, exist_ok=True)
    if project is None:
        project = work / "project"
        if not (project / "curalink.db").is_file():
            build_demo_project(project, train_seconds=train_seconds).close()
    inputs, out = work / f"inputs-{kind}-{files}", work / "out"
    if not inputs.is_dir() or len(list(inputs.iterdir())) != files:
        shutil.rmtree(inputs, ignore_errors=True)
        _inputs(inputs, files, kind)
    shutil.rmtree(out, ignore_errors=True)

    record_seconds: list[float] = []
    record_cpu: list[float] = []
    control_seconds: list[float] = []
    shard_ends: list[float] = []
    real_record = Manifest.record
    control = work / "control.journal"
    control.unlink(missing_ok=True)

    def timed_record(self: Manifest, name: str) -> None:
        started, cpu = time.perf_counter(), time.process_time()
        real_record(self, name)
        record_seconds.append(time.perf_counter() - started)
        record_cpu.append(time.process_time() - cpu)
        started = time.perf_counter()  # the same synced append to a file of its own: the disk's pace now
        descriptor = os.open(control, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(descriptor, b"x" * 800 + b"\n")
        os.fsync(descriptor)
        os.close(descriptor)
        control_seconds.append(time.perf_counter() - started)

    def on_progress(done: int, total: int | None, message: str = "") -> None:
        if message != "shards":
            shard_ends.append(time.perf_counter())
        progress(done, total, message)

    Manifest.record = timed_record  # type: ignore[method-assign]
    started = time.perf_counter()
    try:
        summary = run_batch([inputs], out, project, fmt="pubtator", progress=on_progress, cancel=cancel)
    finally:
        Manifest.record = real_record  # type: ignore[method-assign]
    wall = time.perf_counter() - started
    gaps = [later - earlier for earlier, later in zip(shard_ends, shard_ends[1:], strict=False)]
    first, last = record_seconds[:WINDOW], record_seconds[-WINDOW:]
    ratio = _median_ms(last) / _median_ms(first) if _median_ms(first) else None
    return {
        "files": files,
        "kind": kind,
        "shards_recorded": len(record_seconds),
        "linked": summary.linked,
        "malformed": len(summary.malformed),
        "wall_s": round(wall, 1),
        "record_ms_first_100": _median_ms(first),
        "record_ms_last_100": _median_ms(last),
        "record_ratio_last_to_first": round(ratio, 2) if ratio else None,
        "record_cpu_ms_first_100": _median_ms(record_cpu[:WINDOW]),
        "record_cpu_ms_last_100": _median_ms(record_cpu[-WINDOW:]),
        "control_append_ms_first_100": _median_ms(control_seconds[:WINDOW]),
        "control_append_ms_last_100": _median_ms(control_seconds[-WINDOW:]),
        "shard_ms_first_100": _median_ms(gaps[:WINDOW]),
        "shard_ms_last_100": _median_ms(gaps[-WINDOW:]),
        "manifest_bytes": (out / "manifest.json").stat().st_size,
        "target": f"record time at the last {WINDOW} shards within {TARGET_RATIO}x of the first {WINDOW}",
        "met": ratio is not None and ratio <= TARGET_RATIO,
        "demo_dir": str(demo_dir()),
    }
