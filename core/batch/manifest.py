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

A manifest is read as untrusted input (a folder can come from anyone): every shard name must be a plain
file name of a linked shard inside the folder (no separator, no `..`, not absolute, not one of the
folder's own files), checked on every load, so no later step (--overwrite's unlink, the DeleteCitation
rewrite, import-linked's read) ever reaches outside the folder; and a shard, the manifest or the lock
that is a symbolic link is refused rather than followed.
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

from core.atomic_files import TEMP_PREFIX, write_text_atomic
from core.batch.linked import OUTPUT_FORMATS
from core.errors import CuralinkError, InputError

MANIFEST = "manifest.json"
LOCK = ".link-batch.lock"
FORMAT = 1
_RESERVED = (MANIFEST, LOCK, ".index")


def shard_name_problem(name: object) -> str | None:
    """Why `name` is not a linked shard's plain file name inside its folder; None when it is one."""
    if not isinstance(name, str) or not name:
        return "a shard name must be a non-empty file name"
    if "/" in name or "\\" in name or "\x00" in name or name in (".", ".."):
        return "a shard name is a plain file name inside the folder (no folder part, no '..')"
    if name in _RESERVED or name.startswith(TEMP_PREFIX):
        return "a shard name cannot be one of the folder's own files"
    if not name.endswith(tuple(OUTPUT_FORMATS.values())):
        return f"a linked shard's name ends with one of {', '.join(OUTPUT_FORMATS.values())}"
    return None


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
        if path.is_symlink():
            raise InputError(path, "is a symbolic link: a link-batch manifest must be a file in the folder")
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
        bad = [
            f"shard entry {name!r}: {problem}"
            for name, entry in data["shards"].items()
            if (problem := shard_name_problem(name) or _entry_problem(entry))
        ]
        if bad:
            raise InputError(
                path,
                "refused: " + "; ".join(bad[:20]) + (f"; ... ({len(bad)} in all)" if len(bad) > 20 else ""),
            )
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

    def shard_file(self, name: str) -> Path:
        """The shard's file to read: inside the folder, and refused when it is a symbolic link (a link
        would make a read, or the DeleteCitation rewrite, reach a file outside the folder)."""
        problem = shard_name_problem(name)
        if problem:
            raise InputError(self.folder / MANIFEST, problem, item=f"shard entry {name!r}")
        path = self.folder / name
        if path.is_symlink():
            raise InputError(path, "is a symbolic link: a linked shard must be a file in the folder")
        return path


def _entry_problem(entry: object) -> str | None:
    if not isinstance(entry, dict):
        return f"must be an object, got {type(entry).__name__}"
    if entry.get("status") not in ("done", "malformed"):
        return f"status must be done or malformed, got {entry.get('status')!r}"
    if entry["status"] == "done" and entry.get("out_format") not in OUTPUT_FORMATS:
        return f"out_format must be one of {', '.join(OUTPUT_FORMATS)}, got {entry.get('out_format')!r}"
    return None


@contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """One link-batch per output folder at a time (a second one is refused, not interleaved)."""
    folder.mkdir(parents=True, exist_ok=True)
    try:  # never through a link: the lock file is created in this folder or not at all
        descriptor = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as error:
        reason = "is a symbolic link" if (folder / LOCK).is_symlink() else error.strerror
        raise CuralinkError(f"{folder / LOCK}: cannot lock the folder ({reason})") from None
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CuralinkError(f"{folder}: another link-batch is writing into this folder") from None
        yield
    finally:
        os.close(descriptor)
