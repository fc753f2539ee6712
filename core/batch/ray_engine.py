"""The Ray engine: Ray Data over the shard list, `map_batches` with a callable class, so each actor of
the pool loads the models and the name index once (in its constructor) and then links shard after
shard (batch_size 1: one shard per call, as the output is one shard per input).

The actor pool's size is the actor count (the CPU workers); on a cluster with at least as many GPUs as
actors and a reranker in force each actor asks for one GPU and reranks there (with fewer GPUs the
reranker runs on the actors' CPUs: one stage, not yet a CPU retrieve stage feeding GPU rerank actors).
Ray restarts a dead actor and retries its shard: the shard's output is written by temp-and-rename, so a
retry never meets half a file. Ray is an optional extra
(`pip install 'curalink[cluster]'`); the input, output and project folders must be reachable at the
same paths from every node (a shared file system) and Curalink installed on each.

A cluster address is checked before anything is built: a TCP connection (a few seconds), then the
HTTP/2 connection preface that every gRPC server, as Ray's GCS and its client server are, answers with
a SETTINGS frame. An unreachable address, or one where something else answers (a web server, a proxy,
another service), is one clear error naming it at once; before, the second built the name index and the
output folder and then failed in `ray.init` after ~35 s of its retries.
"""

from __future__ import annotations

import json
import logging
import socket
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

from core.batch.local_engine import OnResult
from core.batch.models import BatchSpec
from core.batch.plan import ShardTask
from core.errors import CuralinkError
from core.progress import CancelToken

log = logging.getLogger(__name__)

INSTALL_HINT = "--engine ray needs Ray: pip install 'curalink[cluster]' (Ray Data), or use --engine local"
CONNECT_SECONDS = 5.0
DEFAULT_PORT = {"ray": 10001, "": 6379}


def require_ray():
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError:
        raise CuralinkError(INSTALL_HINT) from None
    return ray


def check_reachable(address: str, timeout: float = CONNECT_SECONDS) -> None:
    """Raise a CuralinkError naming `address` when nothing answers there within `timeout` seconds."""
    if address in ("auto", "local"):
        return
    parts = urlsplit(address if "://" in address else f"//{address}")
    host = parts.hostname
    try:
        port = parts.port or DEFAULT_PORT.get(parts.scheme, 6379)
    except ValueError:
        port = None
    if not host or port is None:
        raise CuralinkError(f"--address {address}: not a Ray address (host:port or ray://host:port)")
    try:
        connection = socket.create_connection((host, port), timeout=timeout)
    except OSError as error:
        reason = "no answer" if isinstance(error, TimeoutError) else (error.strerror or str(error))
        raise CuralinkError(
            f"cannot reach the Ray cluster at {address} ({reason} within {timeout:.0f} s): is `ray start "
            "--head` running there, and is its port open from here?"
        ) from None
    with connection:
        if not _speaks_grpc(connection, timeout):
            raise CuralinkError(
                f"--address {address}: something answers there, but not a Ray head (it does not speak gRPC: "
                "a web server, a proxy or another service?); give the address `ray start --head` printed"
            )


# The HTTP/2 client connection preface and an empty SETTINGS frame (RFC 9113, section 3.4).
_HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
_SETTINGS = 0x4


def _speaks_grpc(connection: socket.socket, timeout: float) -> bool:
    """Whether the server answers the HTTP/2 preface with a frame header of type SETTINGS, as a gRPC
    server must; anything else, a close or silence within `timeout` is no."""
    connection.settimeout(timeout)
    try:
        connection.sendall(_HTTP2_PREFACE)
        header = b""
        while len(header) < 9:
            chunk = connection.recv(9 - len(header))
            if not chunk:
                return False
            header += chunk
    except OSError:
        return False
    return header[3] == _SETTINGS


class _RayShardLinker:
    """The map_batches callable: one ShardLinker per actor."""

    def __init__(self, spec_json: dict, out_dir: str):
        from core.batch.worker import ShardLinker

        self.linker = ShardLinker(BatchSpec.from_json(spec_json))
        self.out_dir = out_dir

    def __call__(self, batch: dict) -> dict:
        entries = [
            json.dumps(self.linker.link(ShardTask.from_json(json.loads(str(task))), self.out_dir))
            for task in batch["task"]
        ]
        return {"entry": entries}


def run_ray(
    spec: BatchSpec,
    tasks: list[ShardTask],
    out_dir: Path,
    *,
    workers: int = 2,
    address: str | None = None,
    uses_reranker: bool = False,
    on_result: OnResult,
    cancel: CancelToken,
) -> dict:
    """Link the shards on Ray; returns what the run used (address, actors, GPUs per actor)."""
    ray = require_ray()
    started_here = False
    if not ray.is_initialized():
        if address:
            check_reachable(address)
        for name in ("ray", "ray.data"):
            logging.getLogger(name).setLevel(logging.WARNING)
        try:
            ray.init(
                address=address or None,
                num_cpus=None if address else workers,
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
            )
        except (ConnectionError, RuntimeError, TimeoutError) as error:  # Ray gives up after ~20 s
            where = f"the Ray cluster at {address}" if address else "a local Ray"
            reason = str(error).strip().splitlines()[-1] if str(error).strip() else type(error).__name__
            raise CuralinkError(f"cannot connect to {where}: {reason}") from None
        started_here = True
    try:
        gpus = int(ray.cluster_resources().get("GPU", 0)) if uses_reranker and spec.device != "cpu" else 0
        on_gpus = gpus >= workers  # every actor gets one; fewer GPUs than actors would leave some unscheduled
        if 0 < gpus < workers:
            log.warning(
                "%d GPU(s) for %d actors: reranking on the CPUs; --workers %d or fewer reranks on the GPUs",
                gpus,
                workers,
                gpus,
            )
        if gpus and not on_gpus:
            spec = replace(spec, device="cpu")  # an actor on a GPU node must not use a GPU it did not ask for
        spec = replace(spec, threads=1)  # one CPU per actor (Ray sets OMP_NUM_THREADS=1 in it too)
        used = {"address": address or "local", "actors": workers, "gpus_per_actor": 1 if on_gpus else 0}
        if not tasks:
            return used
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        rows = [{"task": json.dumps(task.to_json())} for task in tasks]
        linked = ray.data.from_items(rows, override_num_blocks=len(rows)).map_batches(
            _RayShardLinker,
            fn_constructor_kwargs={"spec_json": spec.to_json(), "out_dir": str(out_dir)},
            batch_size=1,
            compute=ray.data.ActorPoolStrategy(size=workers),
            num_cpus=1,
            num_gpus=used["gpus_per_actor"],
            batch_format="numpy",
        )
        for row in linked.iter_rows():
            on_result(json.loads(str(row["entry"])))
            if cancel.cancelled:
                break
        return used
    finally:
        if started_here:
            ray.shutdown()
