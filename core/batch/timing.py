"""Start-up and steady-state figures of one batch run, from its shards' manifest entries.

Each entry carries its worker, when that worker finished loading (`loaded_at`), how long loading
took (`load_seconds`), and when the shard started and finished. Start-up is the loading; the steady
state is the window from the moment the *last* worker was loaded to the last shard's end; each shard
counts with the share of its linking time inside that window (a shard half inside counts half), so
index loads neither inflate nor dilute the rate. CPU seconds per abstract (all threads of the worker)
is what linking costs whatever else shares the machine: the figure to extrapolate from.
"""

from __future__ import annotations

from typing import Any


def throughput(entries: list[dict[str, Any]], wall_seconds: float) -> dict[str, Any]:
    linked = [e for e in entries if e.get("status") == "done"]
    workers: dict[str, dict[str, Any]] = {}
    for entry in linked:
        seen = workers.setdefault(
            entry["worker"], {"loads": set(), "load_seconds": entry["load_seconds"], "peak_rss_mb": 0.0}
        )
        seen["loads"].add(entry["loaded_at"])
        seen["peak_rss_mb"] = max(seen["peak_rss_mb"], entry.get("peak_rss_mb") or 0.0)
    documents = sum(e["documents"] for e in linked)
    mentions = sum(e["mentions"] for e in linked)
    result: dict[str, Any] = {
        "shards": len(linked),
        "documents": documents,
        "mentions": mentions,
        "wall_s": round(wall_seconds, 2),
        "abstracts_per_s_wall": round(documents / wall_seconds, 1) if wall_seconds else 0.0,
        "workers": len(workers),
        "index_loads": sum(len(w["loads"]) for w in workers.values()),
        "load_s_per_worker": sorted(round(w["load_seconds"], 2) for w in workers.values()),
        "peak_rss_mb_per_worker": sorted(w["peak_rss_mb"] for w in workers.values()),
    }
    if not linked:
        return result
    ready = max(e["loaded_at"] for e in linked)
    end = max(e["finished_at"] for e in linked)
    window = end - ready
    if window > 0:
        shares = [(e, _inside(e, ready, end)) for e in linked]
        result["steady_window_s"] = round(window, 2)
        result["abstracts_per_s"] = round(sum(e["documents"] * share for e, share in shares) / window, 1)
        result["mentions_per_s"] = round(sum(e["mentions"] * share for e, share in shares) / window, 1)
        busy = sum(e["seconds"] for e in linked)
        cpu = sum(e.get("cpu_seconds", 0.0) for e in linked)
        result["seconds_per_abstract_per_worker"] = round(busy / documents, 5) if documents else None
        result["cpu_seconds_per_abstract"] = round(cpu / documents, 5) if documents else None
    return result


def _inside(entry: dict[str, Any], start: float, end: float) -> float:
    """The share of the shard's linking time inside [start, end]."""
    begun, finished = entry["started_at"], entry["finished_at"]
    if finished <= begun:
        return 1.0 if start <= begun <= end else 0.0
    return max(0.0, min(finished, end) - max(begun, start)) / (finished - begun)
