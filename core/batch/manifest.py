"""`manifest.json` of a link-batch output folder: what it was made with and every shard's outcome.

    {"format": 1, "generation": 3, "deletions": "pending" | "done",
     "identity": {"kb_fingerprint", "kb_concepts", "kb_names", "retriever", "reranker", "ranker",
                  "candidates", "mention_type", "project"},
     "shards": {"<output name>": {"status": "done" | "malformed", "input", "input_sha256", "format",
                "position", "documents", "mentions", "detected", "output_sha256", "deleted",
                "removed_by_later_deletions", "problems", "problem_count", "retriever_version",
                "ranked_version", "seconds", "worker", "load_seconds", "peak_rss_mb", ...}},
     "runs": [{"engine", "workers", "started_at", "finished_at", "shards_linked", ...}]}

Only the driver writes it. A shard's outcome is one line appended (and synced) to `manifest.journal`
(`record`), so recording a shard costs the same at 10,000 shards as at 10 (the whole manifest used to be
rewritten after every shard: 3,000 shards took 98 s). The whole manifest is rewritten (temp-and-rename,
`save`) only at the start and end of a run, folding the journal in: the new manifest takes the next
`generation` and the journal goes; a journal line counts only while its generation is the manifest's
(a kill between the two leaves lines already folded in, which are then ignored). A kill mid-append
leaves a last line without its line break, which is dropped: the shard it recorded was not published
yet. So a kill at any moment leaves the last good state: a shard is finished when its entry says done
*and* its input still has the hash recorded; everything else is (re)done. One run at a time per folder
(`folder_lock`). `deletions` is "pending" from the first shard recorded until the DeleteCitation pass
across shards (core.batch.deletions) has run to its end.

A manifest is read as untrusted input (a folder can come from anyone): every shard name must be a plain
file name of a linked shard inside the folder (no separator, no `..`, not absolute, not one of the
folder's own files), every entry must pass the schema (core.batch.manifest_schema), and the manifest and
its journal together are at most the manifest-bytes limit (core.limits), all checked on every load, so
no later step (--overwrite's unlink, the DeleteCitation rewrite, import-linked's read) reaches outside
the folder or reads a field of the wrong kind; and a shard, the manifest, the journal or the lock that
is a symbolic link is refused rather than followed.
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

from core.atomic_files import TEMP_PREFIX, _fsync_folder, write_text_atomic
from core.batch.linked import OUTPUT_FORMATS
from core.batch.manifest_schema import FORMAT, entry_problems, manifest_problems
from core.errors import CuralinkError, InputError
from core.limits import json_nodes_problem, limit, over_limit, read_bounded

MANIFEST = "manifest.json"
JOURNAL = "manifest.journal"
LOCK = ".link-batch.lock"
_RESERVED = (MANIFEST, JOURNAL, LOCK, ".index")
_LISTED = 20  # bad entries named in a refusal (all are counted)


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
    deletions: str = "done"
    generation: int = 0
    writes: dict[str, int] = field(default_factory=lambda: {"manifest": 0, "journal": 0})
    """How often this object rewrote the manifest and appended to the journal (what recording a shard
    costs, counted by a test and the benchmark)."""

    @classmethod
    def load(cls, folder: str | Path) -> Manifest | None:
        """The folder's manifest with its journal replayed, None when it has none; InputError when it
        cannot be read or breaks the schema."""
        folder = Path(folder)
        path = folder / MANIFEST
        for own in (path, folder / JOURNAL):
            if own.is_symlink():
                raise InputError(
                    own, "is a symbolic link: a link-batch manifest must be a file in the folder"
                )
        if not path.is_file():
            return None
        budget = limit("manifest-bytes")
        data = _read_json(path, budget)
        problems = manifest_problems(data)
        if problems:
            raise InputError(path, "; ".join(problems))
        generation = data.get("generation", 0)
        shards = data["shards"]
        journal = folder / JOURNAL
        if journal.is_file():
            for number, record in _journal(journal, budget - path.stat().st_size, budget):
                if record.get("generation") == generation:
                    _apply(record, shards, data, journal, number)
        _check_entries(path, shards)
        return cls(
            folder,
            data.get("identity") or {},
            shards,
            list(data.get("runs") or []),
            deletions=data.get("deletions", "done"),
            generation=generation,
        )

    def save(self) -> None:
        """The whole manifest, the journal folded in: at the start and end of a run (O(shards))."""
        self.generation += 1
        data = {
            "format": FORMAT,
            "generation": self.generation,
            "deletions": self.deletions,
            "identity": self.identity,
            "shards": self.shards,
            "runs": self.runs,
        }
        write_text_atomic(self.folder / MANIFEST, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
        (self.folder / JOURNAL).unlink(missing_ok=True)  # its lines are of the last generation: folded in
        self.writes["manifest"] += 1

    def record(self, name: str) -> None:
        """One shard's entry appended to the journal, synced before this returns (O(1) in the number of
        shards): the driver publishes the shard's file only after."""
        self._append({"generation": self.generation, "shard": name, "entry": self.shards[name]})

    def set_deletions(self, state: str) -> None:
        """The DeleteCitation pass pending (a shard was linked) or done (the pass ran to its end)."""
        if state != self.deletions:
            self.deletions = state
            self._append({"generation": self.generation, "deletions": state})

    def _append(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False) + "\n"
        path = self.folder / JOURNAL
        created = not path.exists()
        try:  # never through a link
            descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError as error:
            raise CuralinkError(f"{path}: cannot record the shard ({error.strerror})") from None
        try:
            os.write(descriptor, line.encode("utf-8"))
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        if created:
            _fsync_folder(self.folder)
        self.writes["journal"] += 1

    def done(self) -> dict[str, dict[str, Any]]:
        """Finished shards, in input order."""
        finished = {n: e for n, e in self.shards.items() if e.get("status") == "done"}
        return dict(sorted(finished.items(), key=lambda item: item[1].get("position", 0)))

    def malformed(self) -> dict[str, dict[str, Any]]:
        return {n: e for n, e in self.shards.items() if e.get("status") == "malformed"}

    def deletions_unfinished(self) -> bool:
        """True when a later input deletes citations and the pass that removes them from the earlier
        shards did not run to its end (a killed or cancelled run): those shards may still hold them."""
        return self.deletions != "done" and any(e.get("deleted") for e in self.done().values())

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


def _read_json(path: Path, budget: int) -> Any:
    try:
        size = path.stat().st_size
        if size > budget:
            raise InputError(path, over_limit("manifest-bytes", f"a manifest of {size:,} bytes", budget))
        with path.open("rb") as handle:
            text = read_bounded(handle, path, "manifest-bytes", "the manifest")
        json_nodes_problem(text, path)  # parsed whole: bounded before json builds every value
        return json.loads(text.decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError, MemoryError) as error:
        raise InputError(
            path, f"not a readable link-batch manifest ({type(error).__name__}: {error})"
        ) from None


def _journal(path: Path, left: int, budget: int) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, record) of the journal; a last line without its line break (a kill mid-append) is dropped."""
    if path.stat().st_size > left:
        raise InputError(path, over_limit("manifest-bytes", "the manifest with its journal", budget))
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.endswith(b"\n"):
                return
            try:
                record = json.loads(raw)
            except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
                raise InputError(path, f"not a link-batch journal line ({error})", line=number) from None
            if not isinstance(record, dict):
                raise InputError(path, "not a link-batch journal line (expected an object)", line=number)
            yield number, record


def _apply(record: dict, shards: dict, data: dict, path: Path, number: int) -> None:
    if isinstance(record.get("shard"), str) and "entry" in record:
        shards[record["shard"]] = record["entry"]
    elif record.get("deletions") in ("pending", "done"):
        data["deletions"] = record["deletions"]
    else:
        raise InputError(path, "not a link-batch journal line (no shard entry or state)", line=number)


def _check_entries(path: Path, shards: dict) -> None:
    bad = [
        f"shard entry {name!r}: {'; '.join(problems)}"
        for name, entry in shards.items()
        if (problems := [p] if (p := shard_name_problem(name)) else entry_problems(entry))
    ]
    if bad:
        more = f"; ... ({len(bad)} entries in all)" if len(bad) > _LISTED else ""
        raise InputError(path, "refused: " + "; ".join(bad[:_LISTED]) + more)


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
