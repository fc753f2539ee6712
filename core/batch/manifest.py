"""`manifest.json` of a link-batch output folder: what it was made with and every shard's outcome.

    {"format": 1,
     "identity": {"kb_fingerprint", "kb_concepts", "kb_names", "retriever", "reranker", "ranker",
                  "candidates", "mention_type", "project"},
     "shards": {"<output name>": {"status": "done" | "malformed", "input", "input_sha256", "format",
                "position", "documents", "mentions", "detected", "output_sha256", "deleted",
                "removed_by_later_deletions", "problems", "problem_count", "retriever_version",
                "ranked_version", "seconds", "worker", "load_seconds", "peak_rss_mb", ...}},
     "runs": [{"engine", "workers", "started_at", "finished_at", "shards_linked", ...}]}

Only the driver writes it (temp-and-rename after every shard), so a kill at any moment leaves the
last good version: a shard is finished when its entry says done *and* its input still has the hash
recorded; everything else is (re)done. One run at a time per folder (`folder_lock`).
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.atomic_files import write_text_atomic
from core.errors import CuralinkError, InputError

MANIFEST = "manifest.json"
LOCK = ".link-batch.lock"
FORMAT = 1


@dataclass
class Manifest:
    folder: Path
    identity: dict[str, Any]
    shards: dict[str, dict[str, Any]] = field(default_factory=dict)
    runs: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def load(cls, folder: str | Path) -> Manifest | None:
        """The folder's manifest, None when it has none; InputError when it cannot be read."""
        folder = Path(folder)
        path = folder / MANIFEST
        if not path.is_file():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise InputError(path, f"not a readable link-batch manifest ({error})") from None
        if (
            not isinstance(data, dict)
            or data.get("format") != FORMAT
            or not isinstance(data.get("shards"), dict)
        ):
            raise InputError(path, f"not a link-batch manifest of format {FORMAT}")
        return cls(folder, data.get("identity") or {}, data["shards"], list(data.get("runs") or []))

    def save(self) -> None:
        data = {"format": FORMAT, "identity": self.identity, "shards": self.shards, "runs": self.runs}
        write_text_atomic(self.folder / MANIFEST, json.dumps(data, indent=1, ensure_ascii=False) + "\n")

    def done(self) -> dict[str, dict[str, Any]]:
        """Finished shards, in input order."""
        finished = {n: e for n, e in self.shards.items() if e.get("status") == "done"}
        return dict(sorted(finished.items(), key=lambda item: item[1].get("position", 0)))

    def malformed(self) -> dict[str, dict[str, Any]]:
        return {n: e for n, e in self.shards.items() if e.get("status") == "malformed"}


@contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """One link-batch per output folder at a time (a second one is refused, not interleaved)."""
    folder.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CuralinkError(f"{folder}: another link-batch is writing into this folder") from None
        yield
    finally:
        os.close(descriptor)
