"""`curalink bench pubmed`: read speed and memory of the PubMed citation reader on a generated shard
in the real `PubmedArticleSet` layout (bench.synthetic.pubmed), gzipped like NLM's files.

Each measurement runs in its own spawned process, so its peak memory (VmHWM) is its own. The reader
run samples the resident memory every tenth of the citations: flat samples are what "constant memory
on a 1 GB file" means. The DeleteCitation pre-scan is timed alone too, as its share of the read.
"""

from __future__ import annotations

import gzip
import logging
import multiprocessing
import resource
import tempfile
import time
from pathlib import Path

from core.memory import peak_rss_mb
from core.progress import ProgressCallback, no_progress

log = logging.getLogger(__name__)


def _rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        pages = int(handle.read().split()[1])
    return round(pages * resource.getpagesize() / 2**20, 1)


def _read_step(path: str, expected: int, queue) -> None:
    from core.formats import read_corpus

    started = time.perf_counter()
    count, passages, samples = 0, 0, []
    every = max(1, expected // 10)
    for document in read_corpus(Path(path), "pubmed-xml"):
        count += 1
        passages += len(document.passages)
        if count % every == 0:
            samples.append(_rss_mb())
    seconds = time.perf_counter() - started
    queue.put(
        {
            "seconds": seconds,
            "citations": count,
            "passages": passages,
            "rss_samples_mb": samples,
            "peak_mb": peak_rss_mb(),
        }
    )


def _prescan_step(path: str, queue) -> None:
    from core.formats.pubmed_xml import prescan_deletions

    started = time.perf_counter()
    found = prescan_deletions(Path(path))
    queue.put({"seconds": time.perf_counter() - started, "deletions": len(found), "peak_mb": peak_rss_mb()})


def _in_child(target, *args) -> dict:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=target, args=(*args, queue))
    process.start()
    result = queue.get()  # before join: a large result would otherwise block the child's exit
    process.join()
    return result


def bench_pubmed(
    *, megabytes: float = 1000.0, shard: Path | None = None, progress: ProgressCallback = no_progress
) -> dict:
    """Generate (or reuse, when `shard` exists) a gzipped shard of about `megabytes` uncompressed,
    then time the pre-scan and the full read."""
    from bench.synthetic.pubmed import write_synthetic_pubmed

    with tempfile.TemporaryDirectory(prefix="curalink-bench-pubmed-") as scratch:
        path = shard or Path(scratch) / "pubmed-shard.xml.gz"
        result: dict = {"shard": str(path)}
        if path.exists():
            with gzip.open(path, "rb") as handle:
                uncompressed = sum(len(chunk) for chunk in iter(lambda: handle.read(1 << 24), b""))
            expected = 0
        else:
            progress(0, 3, "writing the shard")
            started = time.perf_counter()
            written = write_synthetic_pubmed(path, megabytes=megabytes)
            result["generate_seconds"] = round(time.perf_counter() - started, 1)
            uncompressed, expected = written.uncompressed_bytes, written.count
        result["uncompressed_mb"] = round(uncompressed / 1e6, 1)
        result["gzip_mb"] = round(path.stat().st_size / 1e6, 1)
        progress(1, 3, "DeleteCitation pre-scan")
        result["prescan"] = _in_child(_prescan_step, str(path))
        progress(2, 3, "reading every citation")
        read = _in_child(_read_step, str(path), expected or 100_000)
        read["citations_per_second"] = round(read["citations"] / read["seconds"])
        read["uncompressed_mb_per_second"] = round(uncompressed / 1e6 / read["seconds"], 1)
        result["read"] = read
        progress(3, 3, "done")
    return result
