"""What interrupted runs leave in a project, and its removal without touching anything still in use.

A training run works in `models/<kind>/.training-*` and renames it into place when done; killed
(kill -9, power loss) it left the folder behind (16 of 21 killed runs in the probe of issue 11). Each
scratch folder now has an owner file beside it (`.training-*.owner`: process id, its start time,
host); a folder whose owner process is gone is removed when the project is next opened or trained,
one whose owner lives (in this process or another) never is. Old scratch folders without an owner
file count as dead once untouched for `STALE_SECONDS`. Name indexes of models no longer in use (a
scratch version that never finished, a retired version, an older knowledge base) are pruned after
training (`prune_indexes`), so retraining does not add an index file per run for good.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import socket
import time
from collections.abc import Iterable
from pathlib import Path

import psutil

from core.atomic_files import STALE_SECONDS, remove_stale_temporaries, write_text_atomic
from core.locations import INDEX_SUFFIXES

log = logging.getLogger(__name__)

SCRATCH_PREFIX = ".training-"
OWNER_SUFFIX = ".owner"
_INDEX_STEM = re.compile(r"^(?P<kb>[0-9a-f]{16})-(?P<model>[0-9a-f]{12})$")


def _owner_file(scratch: Path) -> Path:
    return scratch.with_name(scratch.name + OWNER_SUFFIX)


def _this_process() -> dict:
    return {"pid": os.getpid(), "started": psutil.Process().create_time(), "host": socket.gethostname()}


def claim_scratch(scratch: Path) -> None:
    """Record this process as the owner of a scratch folder (before anything is written into it)."""
    write_text_atomic(_owner_file(scratch), json.dumps(_this_process()))


def release_scratch(scratch: Path) -> None:
    _owner_file(scratch).unlink(missing_ok=True)


def _owner_alive(owner: Path, folder: Path) -> bool:
    """Whether the run that made `folder` may still be working in it."""
    try:
        data = json.loads(owner.read_text(encoding="utf-8"))
        pid, started, host = int(data["pid"]), float(data["started"]), str(data["host"])
    except (OSError, ValueError, KeyError, TypeError):  # no owner file (older run) or a torn one
        try:
            return time.time() - folder.lstat().st_mtime < STALE_SECONDS
        except OSError:
            return False
    if host != socket.gethostname():
        return True  # another machine's run on a shared folder: its processes cannot be seen from here
    try:
        return abs(psutil.Process(pid).create_time() - started) < 1.0  # a reused pid started later
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
        return False


def remove_dead_scratch(models_dir: str | Path) -> int:
    """Delete scratch folders (and owner files) of runs whose process is gone; returns how many."""
    models_dir = Path(models_dir)
    removed = 0
    if not models_dir.is_dir():
        return 0
    for kind_dir in models_dir.iterdir():
        if not kind_dir.is_dir() or kind_dir.is_symlink():
            continue
        remove_stale_temporaries(kind_dir)
        for version_dir in kind_dir.iterdir():
            if version_dir.is_dir() and not version_dir.is_symlink():
                remove_stale_temporaries(version_dir)  # a save_pretrained killed half-way
        for item in sorted(kind_dir.glob(SCRATCH_PREFIX + "*")):
            if item.name.endswith(OWNER_SUFFIX):
                folder = item.with_name(item.name[: -len(OWNER_SUFFIX)])
                if not folder.exists() and not _owner_alive(item, item):
                    item.unlink(missing_ok=True)  # the run finished its rename but died before releasing
                continue
            if _owner_alive(_owner_file(item), item):
                continue
            try:
                if item.is_dir() and not item.is_symlink():
                    shutil.rmtree(item)
                else:
                    item.unlink()
                _owner_file(item).unlink(missing_ok=True)
                removed += 1
                log.info("%s: removed the scratch folder of a training run that did not finish", item)
            except OSError as exc:
                log.warning("%s: could not remove a dead run's scratch folder (%s)", item, exc)
    return removed


def tidy_project(root: str | Path) -> None:
    """Leftovers of killed runs in a project folder: dead scratch folders, stale temporary files."""
    root = Path(root)
    remove_dead_scratch(root / "models")
    for folder in (root, root / "index", root / "logs"):
        remove_stale_temporaries(folder)


def prune_indexes(index_dir: str | Path, kb_fingerprint: str, keep_models: Iterable[str]) -> int:
    """Delete name indexes (`<kb>-<model>.faiss/.json`) of another knowledge base or of a model not in
    `keep_models` (fingerprints); index files of other names are left alone. Returns pairs removed."""
    index_dir = Path(index_dir)
    if not index_dir.is_dir():
        return 0
    stems = {path.stem for path in index_dir.iterdir() if path.suffix in INDEX_SUFFIXES}
    keep = set(keep_models)
    removed = 0
    for stem in sorted(stems):
        match = _INDEX_STEM.match(stem)
        if match is None or (match["kb"] == kb_fingerprint and match["model"] in keep):
            continue
        try:
            for suffix in INDEX_SUFFIXES:  # sidecar first: a lone .faiss or .rows is never trusted
                (index_dir / f"{stem}{suffix}").unlink(missing_ok=True)
            removed += 1
            log.info("%s: removed name index %s (no model in use needs it)", index_dir, stem)
        except OSError as exc:
            log.warning("%s: could not remove name index %s (%s)", index_dir, stem, exc)
    return removed
