"""The embedded engine: shards linked in this process, or in N spawned worker processes that each load
the models and the name index once (the pool's initializer) and then take shard after shard.

Each of N workers gets cores // N threads (torch, FAISS, OpenMP), as Ray gives each 1-CPU actor one.
At most one shard per worker is in flight, so a cancel (Ctrl-C) lets the running shards finish and
starts no new one: the run stops at a shard boundary. Workers ignore SIGINT themselves (the terminal
sends it to the whole process group); the driver decides when to stop. A worker that dies (killed,
out of memory) ends the run with a clear error; its shard left no output and is redone on resume.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from core.batch.models import BatchSpec
from core.batch.plan import ShardTask
from core.batch.worker import ShardLinker, link_in_process, load_in_process
from core.errors import CuralinkError
from core.progress import CancelToken, ProgressCallback, no_progress

OnResult = Callable[[dict], None]


def run_local(
    spec: BatchSpec,
    tasks: list[ShardTask],
    out_dir: Path,
    *,
    workers: int = 1,
    on_result: OnResult,
    shard_progress: ProgressCallback = no_progress,
    cancel: CancelToken,
) -> None:
    if not tasks:
        return
    if workers <= 1:
        linker = ShardLinker(spec)
        for task in tasks:
            if cancel.cancelled:
                return
            on_result(linker.link(task, out_dir, progress=shard_progress))
        return
    context = multiprocessing.get_context("spawn")  # no fork of a parent holding torch threads
    spec = replace(spec, threads=spec.threads or max(1, (os.cpu_count() or 1) // workers))
    with (
        _child_environment(OMP_NUM_THREADS=str(spec.threads), OMP_WAIT_POLICY="PASSIVE"),
        ProcessPoolExecutor(
            max_workers=workers, mp_context=context, initializer=_load_quietly, initargs=(spec.to_json(),)
        ) as pool,
    ):
        waiting = iter(tasks)
        running: dict[Future, ShardTask] = {}

        def submit() -> None:
            task = next(waiting, None)
            if task is not None:
                running[pool.submit(link_in_process, task.to_json(), str(out_dir))] = task

        for _ in range(workers):
            submit()
        while running:
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                task = running.pop(future)
                try:
                    entry = future.result()
                except BrokenProcessPool:
                    raise CuralinkError(
                        f"a worker process died while linking {task.input} (killed, or out of memory?); "
                        "finished shards are kept: run the same command again to link the rest"
                    ) from None
                on_result(entry)
                if not cancel.cancelled:
                    submit()


@contextmanager
def _child_environment(**values: str) -> Iterator[None]:
    """Environment the spawned workers start with (OpenMP reads its thread count once, at start)."""
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _load_quietly(spec_json: dict) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    load_in_process(spec_json)
