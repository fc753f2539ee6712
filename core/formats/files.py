"""File handling every corpus format shares: strict UTF-8 with line numbers, empty-file checks,
gzip read transparently, atomic writes.

Corpus files arrive from many tools; a decoding error must name the line (not just a byte
offset), an empty file must say so instead of importing zero documents, a gzipped corpus
(`corpus.pubtator.gz`, recognised by its magic bytes whatever its name) reads like the plain one,
and an interrupted export must not leave a half-written file where a good one used to be.
"""

from __future__ import annotations

import gzip
import logging
import os
import re
import stat
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, TextIO

from core.atomic_files import TEMP_PREFIX, atomic_path
from core.errors import InputError
from core.limits import (
    CR_ONLY,
    CUT_LAST_LINE,
    bounded_lines,
    cr_only_lines,
    not_text,
    read_bounded,
    too_long_line,
)

log = logging.getLogger(__name__)

_BOM = b"\xef\xbb\xbf"
GZIP_MAGIC = b"\x1f\x8b"
# characters no file name may hold on Windows, macOS or Linux, so one export opens everywhere
_NAME_BYTES = 255
_TEMPORARY_NAME_EXTRA = len(TEMP_PREFIX) + 8 + 1  # mkstemp's random part and the "-" before the name
_UNSAFE_NAME = re.compile(r'[/\\\x00-\x1f:*?"<>|]')


def document_file(folder: Path, doc_id: str, suffix: str) -> Path:
    """`folder/<doc_id><suffix>` for formats with one file per document; refuses ids that are not
    portable file names rather than silently renaming (the stem is the doc_id on reading back), and
    ids too long for one: file systems allow 255 bytes a name, and the file is written through a
    temporary sibling whose name is longer (core.atomic_files)."""
    if not doc_id or doc_id in (".", "..") or doc_id != doc_id.strip() or _UNSAFE_NAME.search(doc_id):
        raise InputError(folder, "doc_id cannot be used as a file name", item=f"document {doc_id!r}")
    allowed = _NAME_BYTES - _TEMPORARY_NAME_EXTRA - len(suffix.encode("utf-8"))
    size = len(doc_id.encode("utf-8"))
    if size > allowed:
        raise InputError(
            folder,
            f"doc_id is too long for a file name: {size:,} bytes in UTF-8, at most {allowed} fit "
            f"(file systems allow {_NAME_BYTES} bytes a name); export to a single-file format instead",
            item=f"document {doc_id[:40]!r}...",
        )
    return folder / f"{doc_id}{suffix}"


def file_kind(path: Path) -> str:
    """What a path is, in words, without following a symbolic link: "a symbolic link to X", "a FIFO
    (named pipe)", "a device", "a socket", "a folder", "a file", or "missing"."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return "missing"
    if stat.S_ISLNK(mode):
        return f"a symbolic link to {os.path.realpath(path)}"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a folder" if stat.S_ISDIR(mode) else "a file"


def folder_files(folder: Path, pattern: str = "*", notes: list[str] | None = None) -> list[Path]:
    """The regular files of `folder` matching `pattern`, sorted by name: the one rule of every reader
    that lists a folder. Symbolic links, FIFOs, devices and sockets are skipped with a note (logged, and
    added to `notes`): a link could reach a file outside the folder (/etc/passwd), and reading a FIFO or
    a device blocks or never ends. Hidden files (a leading '.') are left out."""
    files = []
    for path in sorted(folder.glob(pattern)):
        if path.name.startswith("."):
            continue
        kind = file_kind(path)
        if kind == "a file":
            files.append(path)
        elif kind != "a folder":
            note = f"{path}: {kind}, not a regular file; skipped"
            log.warning(note)
            if notes is not None:
                notes.append(note)
    return files


def skipped_note(notes: list[str]) -> str:
    """What `folder_files` skipped, for the error that says a folder held nothing to read."""
    if not notes:
        return ""
    named = []
    for note in notes[:5]:
        where, what = note.rsplit(": ", 1)
        named.append(f"{Path(where).name} ({what.split(', not')[0]})")
    more = f" and {len(notes) - 5} more" if len(notes) > 5 else ""
    return f"; skipped as not regular files: {', '.join(named)}{more}"


def require_regular(path: Path) -> None:
    """Refuse a FIFO, device or socket named as an input (it blocks, or never ends); a symbolic link
    given by name is followed to what it names, which must be a regular file or a folder."""
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    kind = file_kind(target)
    if kind in ("a FIFO (named pipe)", "a device", "a socket"):
        raise InputError(path, f"{kind}, not a regular file: give a file or a folder of files")


def require_nonempty(path: Path) -> None:
    """Raise a clear error for a missing, unreadable, special or zero-byte file."""
    require_regular(path)
    if not path.exists():
        raise InputError(path, "file not found")
    if path.is_dir():
        raise InputError(path, "expected a file, got a folder")
    if path.stat().st_size == 0:
        raise InputError(path, "the file is empty (0 bytes): no documents to read")


def require_text(path: Path) -> None:
    """`require_nonempty`, and a clear error for a UTF-16 or binary file (core.limits.not_text)."""
    require_nonempty(path)
    with open_bytes(path) as handle:
        found = not_text(handle.read(4096))
    if found is not None:
        raise InputError(path, found[0], line=found[1])


def require_lines(path: Path) -> None:
    """`require_text`, and a clear error for a file whose lines end in CR alone (core.limits.CR_ONLY),
    for the line-based formats: otherwise the whole file is one line, "cut short" at its end."""
    require_text(path)
    with open_bytes(path) as handle:
        if cr_only_lines(handle.read(4096)):
            raise InputError(path, CR_ONLY, line=1)


def raw_lines(path: Path) -> Iterator[tuple[int, bytes | InputError]]:
    """(1-based line number, the line's bytes with its break) of a plain or gzip file, a line longer than
    core.limits.MAX_LINE_BYTES coming as its InputError (read past, never held)."""
    with open_bytes(path) as handle:
        for line_no, raw in enumerate(bounded_lines(handle), start=1):
            yield line_no, raw if raw is not None else InputError(path, too_long_line(), line=line_no)


def is_gzip(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(2) == GZIP_MAGIC


@contextmanager
def open_bytes(path: Path) -> Iterator[BinaryIO]:
    """The file's bytes, decompressed when it is gzip; a damaged gzip stream is an InputError."""
    with path.open("rb") as raw:
        compressed = raw.read(2) == GZIP_MAGIC
        raw.seek(0)
        stream: BinaryIO = gzip.GzipFile(fileobj=raw, mode="rb") if compressed else raw  # type: ignore[assignment]
        try:
            yield stream
        except (gzip.BadGzipFile, EOFError, zlib.error) as error:
            raise InputError(path, f"damaged or truncated gzip data ({error})") from None


def stem(path: Path) -> str:
    """The file name without its suffix, and without `.gz` first (`x.txt.gz` -> `x`)."""
    if path.suffix.lower() == ".gz":
        path = path.with_suffix("")
    return path.stem


def decode_line(raw: bytes, path: Path, line_no: int) -> str:
    """One line as text; bad bytes are reported with the line and column."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(
            path,
            f"not valid UTF-8: byte 0x{raw[error.start]:02x} at column {error.start + 1}",
            line=line_no,
        ) from None


def iter_lines(
    path: Path, *, allow_empty: bool = False, whole_lines: bool = False
) -> Iterator[tuple[int, str]]:
    """(1-based line number, text) without the line ending; splits on \\n only, so the Unicode
    line separators some abstracts contain stay inside their line."""
    for line_no, line in iter_lines_lenient(path, allow_empty=allow_empty, whole_lines=whole_lines):
        if isinstance(line, InputError):
            raise line
        yield line_no, line


def iter_lines_lenient(
    path: Path, *, allow_empty: bool = False, whole_lines: bool = False
) -> Iterator[tuple[int, str | InputError]]:
    """Like `iter_lines`, but a line that is not UTF-8 comes as its InputError, so a reader that
    reports every problem of a file can skip the line and go on. With `whole_lines`, a last line
    without a line break (other than blank) comes as an InputError too: it may have been cut short
    (core.limits.CUT_LAST_LINE)."""
    if not (allow_empty and path.is_file()):
        require_nonempty(path)
    if path.stat().st_size:
        require_lines(path)
    for line_no, raw in raw_lines(path):
        if isinstance(raw, InputError):
            yield line_no, raw
            continue
        if line_no == 1 and raw.startswith(_BOM):
            raw = raw[len(_BOM) :]
        if raw.endswith(b"\n"):
            raw = raw[:-1]
        elif whole_lines and raw.strip():
            yield line_no, InputError(path, CUT_LAST_LINE, line=line_no)
            continue
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        line: str | InputError
        try:
            line = decode_line(raw, path, line_no)
        except InputError as error:
            line = error
        yield line_no, line


def read_text(path: Path) -> str:
    """The whole file as text, newlines untouched (brat offsets count every character); at most the
    text-bytes limit once decompressed (core.limits.read_bounded)."""
    require_text(path)
    with open_bytes(path) as handle:
        data = read_bounded(handle, path)
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line_no = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise InputError(
            path, f"not valid UTF-8: byte 0x{data[error.start]:02x} at column {column}", line=line_no
        ) from None


@contextmanager
def atomic_output(path: Path) -> Iterator[Path]:
    """A sibling temporary path, moved onto `path` only when the block finished without error: the
    project files' writer (core/atomic_files), so an export cut by a full disk or a kill leaves the old
    file (or none) and a failed write is one line naming the file."""
    with atomic_path(path) as temporary:
        yield temporary


@contextmanager
def atomic_text_writer(path: Path) -> Iterator[TextIO]:
    """UTF-8 with Unix line endings, moved into place only when writing succeeded."""
    with atomic_output(path) as temporary, temporary.open("w", encoding="utf-8", newline="\n") as handle:
        yield handle
