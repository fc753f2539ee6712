"""A speed check, reported not asserted: reading the three NCBI-disease splits.

See the figure with `.venv/bin/pytest tests/test_formats_speed.py -s`.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from core.formats import read_corpus

FILES = ("NCBItrainset_corpus.txt", "NCBIdevelopset_corpus.txt", "NCBItestset_corpus.txt")


def test_reading_ncbi_speed(ncbi_dir: Path, record_property: pytest.RecordProperty) -> None:
    timings = []
    for _ in range(5):
        started = time.perf_counter()
        docs = [doc for name in FILES for doc in read_corpus(ncbi_dir / name, "pubtator")]
        timings.append(time.perf_counter() - started)
    mentions = sum(len(d.mentions) for d in docs)
    assert (len(docs), mentions) == (793, 6892)
    best = min(timings)
    record_property("ncbi_read_seconds", round(best, 4))
    print(
        f"\nread 3 NCBI-disease splits: {len(docs)} documents, {mentions} mentions in {best * 1000:.0f} ms (best of 5)"
    )
