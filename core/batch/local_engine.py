"""The embedded engine: shards linked in this process, or in N spawned worker processes that each load
the models and the name index once (the pool's initializer) and then take shard after shard.

Each of N workers gets cores // N threads (torch, FAISS, OpenMP), as Ray gives each 1-CPU actor one.
At most one shard per worker is in flight, so a cancel (Ctrl-C) lets the running shards finish and
starts no new one: the run stops at a shard boundary. Workers ignore SIGINT themselves (the terminal
sends it to the whole process group); the driver decides when to stop. A worker that dies (killed,
out of memory) ends the run with a clear error; its shard left no output and is redone on resume.

Workers end with their driver: a driver killed outright (kill -9, out of memory) cannot shut its pool
down, so each worker asks the kernel to kill it when its parent dies (Linux: prctl PR_SET_PDEATHSIG;
it follows the thread that spawned the worker, the one calling `run_local`, which the pool never
outlives), or, elsewhere, watches its parent pid. And a worker only ever leaves a temporary file that
the driver renames when it records the shard (core.batch.worker), so even an orphan could never
publish a shard the manifest does not list.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
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
            max_workers=workers,
            mp_context=context,
            initializer=_load_quietly,
            initargs=(spec.to_json(), os.getpid()),
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


def _load_quietly(spec_json: dict, driver: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    end_with_parent(driver)
    load_in_process(spec_json)


_PR_SET_PDEATHSIG = 1
_WATCH_SECONDS = 1.0


def end_with_parent(parent: int) -> None:
    """This process is killed when `parent` (the driver that started it) dies, however it dies."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    else:
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True, name="parent-watch").start()
    if os.getppid() != parent:  # the driver died before the request took effect
        os._exit(1)


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(_WATCH_SECONDS)
    os._exit(1)
