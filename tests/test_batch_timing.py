"""Start-up and steady-state figures of a batch run, checked against figures worked out by hand."""

from __future__ import annotations

import pytest

from core.batch.timing import throughput


def _shard(worker: str, loaded_at: float, start: float, end: float, documents: int) -> dict:
    return {
        "status": "done",
        "worker": worker,
        "loaded_at": loaded_at,
        "load_seconds": loaded_at,
        "started_at": start,
        "finished_at": end,
        "seconds": end - start,
        "cpu_seconds": (end - start) / 2,
        "documents": documents,
        "mentions": documents * 10,
        "peak_rss_mb": 100.0 if worker == "a" else 120.0,
    }


def test_steady_state_counts_only_the_share_of_each_shard_after_the_last_load() -> None:
    entries = [
        _shard("a", 10, 10, 14, 40),  # half of it after t=12, when b is loaded: 20 documents count
        _shard("a", 10, 14, 18, 40),
        _shard("b", 12, 12, 16, 40),
        _shard("b", 12, 16, 20, 40),
        {"status": "malformed", "worker": "b"},
    ]
    figures = throughput(entries, wall_seconds=25.0)
    assert figures["steady_window_s"] == 8.0  # from 12 (b loaded) to 20 (last shard done)
    assert figures["abstracts_per_s"] == pytest.approx(140 / 8, abs=0.05)
    assert figures["mentions_per_s"] == pytest.approx(1400 / 8, abs=0.05)
    assert figures["abstracts_per_s_wall"] == pytest.approx(160 / 25, abs=0.05)
    assert figures["cpu_seconds_per_abstract"] == pytest.approx(8 / 160, abs=1e-5)  # 4 shards x 2 CPU s
    assert (figures["workers"], figures["index_loads"]) == (2, 2)
    assert figures["load_s_per_worker"] == [10, 12]
    assert figures["peak_rss_mb_per_worker"] == [100.0, 120.0]


def test_a_worker_that_loads_twice_is_counted_twice() -> None:
    entries = [_shard("a", 10, 10, 12, 5), _shard("a", 30, 30, 32, 5)]
    assert throughput(entries, wall_seconds=40.0)["index_loads"] == 2
