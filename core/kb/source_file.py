"""Reading vocabulary files: gzip by magic bytes, UTF-8 checked line by line, progress in bytes.

Every text loader goes through `read_lines`, so a bad byte is reported with its line number
(a TextIOWrapper would only say "position 81920"), a line too long to hold is refused with its number
(core.limits.bounded_lines), gzip is recognised whatever the file is
called, and cancellation and progress work the same way for every format.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from core.errors import InputError
from core.formats.files import require_regular
from core.limits import CR_ONLY, CUT_LAST_LINE, bounded_lines, cr_only_lines, not_text, too_long_line
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress

GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"
BATCH_LINES = 10_000


def require_file(path: str | Path) -> Path:
    """The path as a Path, or InputError when it is missing, a folder or zero bytes long."""
    path = Path(path)
    require_regular(path)  # a FIFO or a device: reading it blocks or never ends
    if not path.exists():
        raise InputError(path, "no such file")
    if path.is_dir():
        raise InputError(path, "is a folder, not a file")
    if path.stat().st_size == 0:
        raise InputError(path, "the file is empty")
    return path


class _Position:
    """Where the reader is in the file on disk (compressed bytes for gzip), for progress."""

    def __init__(self, raw: BinaryIO, size: int):
        self.raw = raw
        self.size = size

    def done(self) -> int:
        return min(self.raw.tell(), self.size)


@contextmanager
def open_binary(path: str | Path) -> Iterator[tuple[BinaryIO, _Position]]:
    """The decompressed byte stream of a plain or gzip file, and its on-disk position."""
    path = require_file(path)
    raw = open(path, "rb")  # closed in `finally`; wrapped when gzip
    try:
        compressed = raw.read(2) == GZIP_MAGIC
        raw.seek(0)
        stream: BinaryIO = gzip.GzipFile(fileobj=raw, mode="rb") if compressed else raw  # type: ignore[assignment]
        yield stream, _Position(raw, path.stat().st_size)
    except (gzip.BadGzipFile, EOFError, zlib.error, OSError) as exc:
        if isinstance(exc, gzip.BadGzipFile | EOFError | zlib.error) or "gzip" in str(exc).lower():
            raise InputError(path, f"damaged or truncated gzip data ({exc})") from exc
        raise
    finally:
        raw.close()


def decode_line(raw_line: bytes, path: str | Path, number: int) -> str:
    """One line as text, or InputError naming the line, the column and the offending byte."""
    try:
        return raw_line.decode("utf-8")
    except UnicodeDecodeError as exc:
        byte = raw_line[exc.start : exc.start + 1].hex()
        raise InputError(
            path,
            f"not valid UTF-8 (byte 0x{byte} at column {exc.start + 1}); save the file as UTF-8",
            line=number,
        ) from exc


def read_lines(
    path: str | Path,
    *,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
    message: str = "",
) -> Iterator[tuple[int, str]]:
    """(line number, text without its line ending) for every line, 1-based, streaming.

    Progress is reported in bytes of the file on disk every `BATCH_LINES` lines, where the
    cancel token is also checked. A last line without a line break (other than blank) is an error: it
    may have been cut short (core.limits.CUT_LAST_LINE), and a cut line often still parses.
    """
    message = message or f"reading {Path(path).name}"
    cancel.raise_if_cancelled()
    with open_binary(path) as (stream, _):
        head = stream.read(4096)
    found = not_text(head)
    if found is not None:
        raise InputError(path, found[0], line=found[1])
    if cr_only_lines(head):
        raise InputError(path, CR_ONLY, line=1)
    with open_binary(path) as (stream, position):
        progress(0, position.size, message)
        number = 0
        for number, raw_line in enumerate(bounded_lines(stream), start=1):
            if raw_line is None:
                raise InputError(path, too_long_line(), line=number)
            if number == 1 and raw_line.startswith(UTF8_BOM):
                raw_line = raw_line[len(UTF8_BOM) :]
            if not raw_line.endswith(b"\n") and raw_line.strip():
                raise InputError(path, CUT_LAST_LINE, line=number)
            text = decode_line(raw_line, path, number)
            if text.endswith("\n"):
                text = text[:-1]
            if text.endswith("\r"):
                text = text[:-1]
            yield number, text
            if number % BATCH_LINES == 0:
                cancel.raise_if_cancelled()
                progress(position.done(), position.size, message)
        progress(position.size, position.size, message)
        if number == 0:
            raise InputError(path, "the file is empty")


def head_text(path: str | Path, limit: int = 65_536) -> str:
    """The first `limit` decompressed bytes as text (undecodable bytes replaced), for sniffing."""
    with open_binary(path) as (stream, _):
        data = stream.read(limit)
    if data.startswith(UTF8_BOM):
        data = data[len(UTF8_BOM) :]
    return data.decode("utf-8", errors="replace")


def first_undecodable_line(path: str | Path) -> InputError | None:
    """The InputError for the first line that is not UTF-8, for parsers that only say "bad UTF-8"."""
    with open_binary(path) as (stream, _):
        for number, raw_line in enumerate(bounded_lines(stream), start=1):
            if raw_line is None:
                continue
            try:
                decode_line(raw_line, path, number)
            except InputError as error:
                return error
    return None
