"""The schema of a link-batch manifest, checked on every read (core.batch.manifest).

A manifest is input like any other (a folder can come from anyone, or be edited by hand), and each of
its fields steers a later step: `position` orders the DeleteCitation pass, `deleted` lists PMIDs to
remove from earlier shards (a string there would be read one digit at a time), `documents` 0 says a
shard was emptied and need not be read, a pending `rewrite` is settled from its figures. So every field
a step reads is checked for its type and range before any step runs, with cross-field rules (a done
shard has its counts and hash; a malformed one its problems; a pending rewrite is complete), and a bad
manifest is one line naming the entry and the field. Fields no step reads (timings, the worker's host)
are checked only for being numbers or strings when present; unknown keys are kept as they are.
"""

from __future__ import annotations

import re
from typing import Any

from core.batch.linked import OUTPUT_FORMATS

FORMAT = 1
STATUSES = ("done", "malformed")
DELETION_STATES = ("pending", "done")
PENDING = "rewrite"
"""Entry key of a DeleteCitation rewrite saved but maybe not yet renamed into place."""

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_COUNTS = ("documents", "mentions", "detected")
_NUMBERS = (
    "seconds",
    "cpu_seconds",
    "started_at",
    "finished_at",
    "loaded_at",
    "load_seconds",
    "peak_rss_mb",
)
_STRINGS = ("input", "retriever_version", "ranked_version", "worker", "name")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _count(entry: dict, key: str, *, required: bool) -> str | None:
    value = entry.get(key)
    if value is None and not required:
        return None
    if not _is_int(value) or value < 0:
        return f"{key} must be a whole number of at least 0, got {value!r}"
    return None


def _string_list(entry: dict, key: str) -> str | None:
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        return f"{key} must be a list of ids (strings), got {_shown(value)}"
    return None


def _sha(entry: dict, key: str, *, required: bool) -> str | None:
    value = entry.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not _SHA256.match(value):
        return f"{key} must be a sha256 (64 hex digits), got {_shown(value)}"
    return None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def entry_problems(entry: object) -> list[str]:
    """Every way one shard entry breaks the schema (empty when it is sound)."""
    if not isinstance(entry, dict):
        return [f"must be an object, got {type(entry).__name__}"]
    status = entry.get("status")
    if status not in STATUSES:
        return [f"status must be done or malformed, got {_shown(status)}"]
    problems: list[str] = []
    if status == "done" and entry.get("out_format") not in OUTPUT_FORMATS:
        problems.append(
            f"out_format must be one of {', '.join(OUTPUT_FORMATS)}, got {_shown(entry.get('out_format'))}"
        )
    position = entry.get("position")
    if position is not None and (not _is_int(position) or position < 0):
        problems.append(f"position must be a whole number of at least 0, got {_shown(position)}")
    for key in ("deleted", "removed_by_later_deletions"):
        problems.append(_string_list(entry, key))
    problems.append(_sha(entry, "input_sha256", required=False))
    for key in _STRINGS:
        if entry.get(key) is not None and not isinstance(entry[key], str):
            problems.append(f"{key} must be a string, got {_shown(entry[key])}")
    for key in _NUMBERS:
        value = entry.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or value < 0):
            problems.append(f"{key} must be a number of at least 0, got {_shown(value)}")
    if status == "done":
        problems += [_count(entry, key, required=key == "documents") for key in _COUNTS]
        problems.append(_sha(entry, "output_sha256", required=True))
        problems += _pending_problems(entry.get(PENDING))
    else:
        problems += _malformed_problems(entry)
    return [problem for problem in problems if problem]


def _malformed_problems(entry: dict) -> list[str | None]:
    problems = entry.get("problems")
    if not isinstance(problems, list) or not problems or not all(isinstance(p, str) for p in problems):
        return [f"a malformed shard lists its problems (a non-empty list of strings), got {_shown(problems)}"]
    count = entry.get("problem_count")
    if not _is_int(count) or count < len(problems):
        return [f"problem_count must be a whole number of at least {len(problems)}, got {_shown(count)}"]
    return []


def _pending_problems(pending: object) -> list[str | None]:
    """A pending DeleteCitation rewrite is settled from its own figures: all of them must be there."""
    if pending is None:
        return []
    if not isinstance(pending, dict):
        return [f"{PENDING} must be an object, got {_shown(pending)}"]
    found = [
        _string_list(pending, "removed") if "removed" in pending else f"{PENDING}.removed is missing",
        _count(pending, "documents", required=True),
        _count(pending, "mentions", required=True),
        _sha(pending, "output_sha256", required=True),
    ]
    return [p if p is None or p.startswith(PENDING) else f"{PENDING}.{p}" for p in found]


def manifest_problems(data: object) -> list[str]:
    """What is wrong with the top of a manifest (its entries are checked one by one, with their names)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return [f"not a link-batch manifest of format {FORMAT}"]
    problems = []
    if not isinstance(data.get("shards"), dict):
        problems.append("shards must be an object of shard entries")
    if not isinstance(data.get("identity", {}), dict):
        problems.append("identity must be an object")
    else:
        candidates = (data.get("identity") or {}).get("candidates")
        if candidates is not None and (not _is_int(candidates) or candidates < 1):
            problems.append(
                f"identity.candidates must be a whole number of at least 1, got {_shown(candidates)}"
            )
    runs = data.get("runs", [])
    if not isinstance(runs, list) or not all(isinstance(run, dict) for run in runs):
        problems.append("runs must be a list of objects")
    if data.get("deletions", "done") not in DELETION_STATES:
        problems.append(f"deletions must be pending or done, got {_shown(data.get('deletions'))}")
    generation = data.get("generation", 0)
    if not _is_int(generation) or generation < 0:
        problems.append(f"generation must be a whole number of at least 0, got {_shown(generation)}")
    return problems
