"""Inputs to shard tasks: one task per input file (a folder given stands for its files, in name order),
each with its format and the name of its linked shard.

The output name is the input's file name (without `.gz`) plus the output suffix, so `baseline0001.xml.gz`
links to `baseline0001.xml.linked.jsonl`; two inputs that would share an output name (the same file
name in two folders) are refused before anything runs. A task's `position` is its place in the
command line order: PubMed's DeleteCitation of a later update file applies to the earlier ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from core.batch.linked import OUTPUT_FORMATS
from core.batch.manifest import shard_name_problem
from core.errors import CuralinkError, InputError
from core.formats import FORMATS
from core.formats.files import folder_files, require_regular
from core.formats.sniff import guess_format
from core.retrieve.index_file import file_digest

WITHOUT_MENTIONS = ("pubmed-xml", "jats", "text")
"""Formats that carry no mentions: linking them needs --detect."""


@dataclass(frozen=True)
class ShardTask:
    name: str
    """The linked shard's file name in the output folder (its key in the manifest)."""
    input: str
    format: str | None
    """None when the format cannot be told: the worker reports the shard as malformed."""
    out_format: str
    position: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ShardTask:
        return cls(**data)


def input_files(inputs: Sequence[str | Path], notes: list[str] | None = None) -> list[Path]:
    """Every input file: files as given, folders by their (non-hidden) regular files in name order;
    links, FIFOs and devices in a folder are skipped with a note in `notes` (core.formats.files)."""
    files: list[Path] = []
    for given in inputs:
        path = Path(given)
        if path.is_dir():
            files += folder_files(path, notes=notes)
        elif path.is_file():
            require_regular(path)
            files.append(path)
        elif path.exists():
            require_regular(path)  # a FIFO, device or socket named on the command line
        else:
            raise InputError(path, "input file or folder not found")
    if not files:
        raise CuralinkError("link-batch: no input files (the folders given are empty)")
    return files


def plan_shards(
    inputs: Sequence[str | Path], fmt: str | None, out_format: str, notes: list[str] | None = None
) -> list[ShardTask]:
    if out_format not in OUTPUT_FORMATS:
        raise CuralinkError(
            f"--out-format {out_format}: linked shards are written as {', '.join(OUTPUT_FORMATS)} "
            "(formats whose mention infons hold the ranked candidates)"
        )
    if fmt is not None and fmt not in FORMATS:
        raise CuralinkError(f"--format {fmt}: unknown corpus format; known formats: {', '.join(FORMATS)}")
    tasks: list[ShardTask] = []
    by_name: dict[str, Path] = {}
    for position, path in enumerate(input_files(inputs, notes)):
        base = path.name[:-3] if path.name.lower().endswith(".gz") else path.name
        name = base + OUTPUT_FORMATS[out_format]
        problem = shard_name_problem(name)
        if problem:
            raise InputError(path, f"cannot be linked into {name!r} ({problem}): rename the input")
        if name in by_name:
            raise CuralinkError(
                f"{path} and {by_name[name]} would both be linked into {name}: rename one, or link them "
                "into separate --out folders"
            )
        by_name[name] = path
        tasks.append(ShardTask(name, str(path.resolve()), fmt or guess_format(path), out_format, position))
    return tasks


def file_sha256(path: str | Path) -> str:
    """The input's hash as the manifest records it (the name index's file digest, reused)."""
    return file_digest(Path(path))


def recorded_run(out_dir: str | Path) -> dict[str, Any]:
    """What `link-batch --resume --out DIR` links: the inputs the folder's manifest records, in their
    order, with its format, output format, detection and candidates (the same command, recovered)."""
    from core.batch.manifest import MANIFEST, Manifest

    manifest = Manifest.load(out_dir)
    if manifest is None or not manifest.shards:
        raise InputError(out_dir, f"nothing to resume: no {MANIFEST} with recorded shards")
    entries = sorted(manifest.shards.values(), key=lambda e: e.get("position", 0))
    inputs = [e["input"] for e in entries if isinstance(e.get("input"), str)]
    formats = {e.get("format") for e in entries}
    out_formats = {e["out_format"] for e in entries if e.get("out_format") in OUTPUT_FORMATS}
    mention_type = manifest.identity.get("mention_type")
    return {
        "inputs": inputs,
        "fmt": formats.pop() if len(formats) == 1 else None,
        "out_format": out_formats.pop() if len(out_formats) == 1 else "jsonl",
        "detect": mention_type is not None,
        "mention_type": mention_type,
        "candidates": manifest.identity.get("candidates"),
    }
