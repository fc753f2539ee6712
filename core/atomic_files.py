"""Every file of a project is written to a temporary name beside it and renamed into place.

A kill -9 or a full disk in the middle of a write then leaves the previous file (or none), never a
truncated one that every later run trips over; the temporary file is removed on failure, and one left
by a killed process is removed later (`remove_stale_temporaries`). A failed write is one line naming
the file and the reason (`FileWriteError`), not a traceback.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from safetensors import SafetensorError

from core.errors import ProjectError

log = logging.getLogger(__name__)

WRITE_ERRORS = (OSError, RuntimeError, SafetensorError)
"""How writers report a failed write: Python (OSError), FAISS (RuntimeError), safetensors (its own)."""

TEMP_PREFIX = ".curalink-tmp-"
LOW_SPACE = 16 * 2**20
STALE_SECONDS = 15 * 60
"""A temporary file untouched this long belongs to a dead writer (a live one keeps writing to it)."""


class FileWriteError(ProjectError):
    """A project file could not be written (disk full, read-only folder, ...); the old one is intact."""


def _fsync_folder(folder: Path) -> None:
    if os.name != "posix":
        return
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def write_failed(path: Path, exc: BaseException) -> FileWriteError:
    """One line for a failed write: the file and the system's reason (FAISS and safetensors wrap it)."""
    if isinstance(exc, OSError) and exc.strerror:
        reason = exc.strerror
    else:
        lines = str(exc).strip().splitlines()
        reason = (lines[-1] if lines else type(exc).__name__).split("I/O error: ")[-1]
        system = re.search(r"\(([^()]+)\)\s*$", reason)  # FAISS and safetensors end with "(reason)"
        code = re.search(r"os error (\d+)", reason)
        if code:
            reason = os.strerror(int(code.group(1)))
        else:
            reason = system.group(1) if system and system.group(1) != "Success" else reason[:160]
        try:
            free = shutil.disk_usage(path.parent).free
        except OSError:
            free = None
        if free is not None and free < LOW_SPACE:  # FAISS reports a full disk as a short write only
            reason = f"the disk is full: {free} bytes free; {reason}"
    return FileWriteError(f"{path}: could not be written ({reason}); any previous version of it is unchanged")


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path in the same folder to write `path` through (for writers that take a file name,
    such as faiss.write_index or safetensors); renamed onto `path` when the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, name = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix="-" + path.name, dir=path.parent)
    os.close(descriptor)
    temporary = Path(name)
    try:
        yield temporary
        with temporary.open("rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException as exc:
        temporary.unlink(missing_ok=True)
        if isinstance(exc, WRITE_ERRORS) and not isinstance(exc, ProjectError):
            raise write_failed(path, exc) from exc
        raise
    _fsync_folder(path.parent)


def write_bytes_atomic(path: str | Path, data: bytes) -> Path:
    path = Path(path)
    with atomic_path(path) as temporary:
        temporary.write_bytes(data)
    return path


def write_text_atomic(path: str | Path, text: str) -> Path:
    return write_bytes_atomic(path, text.encode("utf-8"))


@contextmanager
def written_into(folder: str | Path) -> Iterator[Path]:
    """A temporary folder inside `folder` for a writer that fills a folder (save_pretrained); when the
    block succeeds each file it wrote is renamed into `folder`, one atomic replacement per file."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX, dir=folder))
    try:
        yield scratch
        for item in sorted(scratch.iterdir()):
            if item.is_file():
                with item.open("rb+") as handle:
                    os.fsync(handle.fileno())
                os.replace(item, folder / item.name)
    except WRITE_ERRORS as exc:
        raise write_failed(folder, exc) from exc
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    _fsync_folder(folder)


def remove_stale_temporaries(folder: str | Path, max_age: float = STALE_SECONDS) -> int:
    """Delete temporaries of dead writers in `folder` (not recursive); returns how many were removed."""
    folder = Path(folder)
    removed = 0
    if not folder.is_dir():
        return 0
    now = time.time()
    for item in folder.glob(TEMP_PREFIX + "*"):
        try:
            if now - item.lstat().st_mtime < max_age:
                continue
            if item.is_dir() and not item.is_symlink():
                shutil.rmtree(item)
            else:
                item.unlink()
            removed += 1
            log.info("%s: removed a temporary file left by an interrupted write", item)
        except OSError as exc:
            log.warning("%s: could not remove a stale temporary file (%s)", item, exc)
    return removed
