"""Encode many names in parallel: local worker processes (the default) or Ray, merged back in order.

Each worker loads the saved model once (from its folder: safetensors + JSON, nothing pickled but the
strings and the vectors that travel) and encodes chunks of names; the caller gets the chunks' vectors
back in the order of the names, a few chunks in flight at a time, so memory stays at a few chunks.
Processes, not threads: one PyTorch process scales poorly past a couple of threads on these small
convolutions, and separate processes also run on other machines when Ray is asked for. By default
(`RescnnRetriever.build_index`) a KB of `PARALLEL_MIN_NAMES` or more gets one process per two cores; on
a 2-core machine that is one process, since two single-thread processes were measured no faster there
than one process of two threads (`curalink bench index`, "encoding").

`engine="ray"` uses Ray Data (`map_batches` over an actor pool: each actor loads the model once);
Ray is optional (`import ray` is tried only when asked) and `address` points it at a cluster.
The vectors do not depend on the chunking (masked pooling, `tests/test_retrieve.py`), so the merged
result equals a serial encode up to floating-point summation order (thread count).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import numpy as np

from core.errors import Cancelled, ModelError
from core.progress import NEVER_CANCELLED, CancelToken

log = logging.getLogger(__name__)

CHUNK = 20_000
"""Names per task: seconds of work each, so cancel is prompt and the pipe overhead is small."""
PARALLEL_MIN_NAMES = 200_000
"""Below this a worker's start (a few seconds: torch, the model) costs more than it saves."""
ENGINES = ("local", "ray")

_worker_encoder = None


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def _start_worker(folder: str, backend: str, threads: int) -> None:
    global _worker_encoder
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    from core.retrieve.encoder import RescnnEncoder

    _worker_encoder = RescnnEncoder.load(folder, backend=backend, threads=threads)


def _encode_in_worker(texts: list[str]) -> np.ndarray:
    return _worker_encoder.encode(texts)


class ParallelEncoder:
    """`encode_chunks(texts)` yields the vectors of consecutive chunks of `texts`, in order.

    Use as a context manager: the workers start on first use and stop on exit (or cancel)."""

    def __init__(
        self,
        folder: str | Path,
        *,
        workers: int | None = None,
        engine: str = "local",
        backend: str = "torch",
        threads_per_worker: int = 1,
        chunk: int = CHUNK,
        address: str | None = None,
        cancel: CancelToken = NEVER_CANCELLED,
    ):
        if engine not in ENGINES:
            raise ModelError(f"unknown encoding engine {engine!r} ({' or '.join(ENGINES)})")
        self.folder = str(Path(folder).absolute())
        self.workers = workers or default_workers()
        self.engine = engine
        self.backend = backend
        self.threads = threads_per_worker
        self.chunk = chunk
        self.address = address
        self.cancel = cancel
        self._pool: ProcessPoolExecutor | None = None
        self._started_ray = False  # a local Ray this encoder started is stopped by `close`

    def __enter__(self) -> ParallelEncoder:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if self._started_ray:
            import ray

            ray.shutdown()
            self._started_ray = False

    def encode_chunks(self, texts: Sequence[str]) -> Iterator[np.ndarray]:
        if self.engine == "ray":
            yield from self._ray_chunks(texts)
            return
        if self._pool is None:
            log.info("starting %d encoding processes (%d threads each)", self.workers, self.threads)
            self._pool = ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=multiprocessing.get_context("spawn"),  # fork would copy torch's threads
                initializer=_start_worker,
                initargs=(self.folder, self.backend, self.threads),
            )
        pending: deque[Future] = deque()
        starts = iter(range(0, len(texts), self.chunk))
        try:
            while True:
                while len(pending) < 2 * self.workers:
                    start = next(starts, None)
                    if start is None:
                        break
                    pending.append(
                        self._pool.submit(_encode_in_worker, list(texts[start : start + self.chunk]))
                    )
                if not pending:
                    return
                if self.cancel.cancelled:
                    raise Cancelled("cancelled by the user")
                yield pending.popleft().result()
        except BrokenProcessPool as exc:
            self._pool = None
            raise ModelError(f"an encoding process died ({exc}); nothing of this index was saved") from exc
        finally:
            for future in pending:
                future.cancel()

    def _ray_chunks(self, texts: Sequence[str]) -> Iterator[np.ndarray]:
        """Ray Data: the texts as a dataset of chunk-sized blocks, `map_batches` on an actor pool of
        `workers` encoders, read back in order."""
        try:
            import ray
        except ImportError as exc:
            raise ModelError("the ray engine needs Ray: pip install 'ray[data]'") from exc
        if not ray.is_initialized():
            try:
                ray.init(address=self.address, ignore_reinit_error=True, log_to_driver=False)
                self._started_ray = True
            except (ConnectionError, RuntimeError) as exc:
                raise ModelError(
                    f"cannot reach the Ray cluster at {self.address or 'a local start'}: {exc}"
                ) from exc
        context = ray.data.DataContext.get_current()
        context.execution_options.preserve_order = True
        folder, backend, threads = self.folder, self.backend, self.threads

        class Encode:
            def __init__(self) -> None:
                from core.retrieve.encoder import RescnnEncoder

                self.encoder = RescnnEncoder.load(folder, backend=backend, threads=threads)

            def __call__(self, batch: dict) -> dict:
                return {"vector": self.encoder.encode([str(t) for t in batch["text"]])}

        dataset = ray.data.from_items(
            [{"text": t} for t in texts], override_num_blocks=max(1, len(texts) // self.chunk)
        )
        vectors = dataset.map_batches(
            Encode,
            batch_size=self.chunk,
            concurrency=self.workers,
            num_cpus=self.threads,
            batch_format="numpy",
        )
        for batch in vectors.iter_batches(batch_size=self.chunk, batch_format="numpy"):
            if self.cancel.cancelled:
                raise Cancelled("cancelled by the user")
            yield np.asarray(np.stack(batch["vector"]), dtype=np.float32)


def serial_chunks(encoder, chunk: int = CHUNK, cancel: CancelToken = NEVER_CANCELLED):
    """The same chunked interface over one in-process encoder (small KBs, no model folder)."""

    def encode_chunks(texts: Sequence[str]) -> Iterator[np.ndarray]:
        for start in range(0, len(texts), chunk):
            yield encoder.encode(texts[start : start + chunk], cancel=cancel)

    return encode_chunks
