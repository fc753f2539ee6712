"""Argument kinds the parser checks itself, so a bad value is one line from argparse (`curalink link-batch:
error: argument --candidates: 0 is below the least allowed, 1`) before any work starts, never an
AssertionError or an OSError traceback from deep inside a command (issue 33).

Numbers: whole numbers and finite numbers with a range. Paths: an input that must exist (a file, a
folder, or either; never a FIFO or a device, which would block or never end), an output folder (not an
existing file; its nearest existing ancestor a writable folder) and an output file (not an existing
folder, likewise creatable). Each kind is a `Checked` callable carrying what it checks, so the test that
walks every subcommand's parser can tell a checked argument from a bare `type=int`.
"""

from __future__ import annotations

import argparse
import math
import os
import stat
import sys
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any, NoReturn

MAX_CANDIDATES = 1_000  # candidates kept per mention: more is no ranking and only memory


class Checked:
    """A parser `type` that checks a value; `kind` and `minimum` say what (read by the parser walk)."""

    def __init__(self, kind: str, convert: Callable[[str], Any], *, minimum: float | None = None):
        self.kind = kind
        self.convert = convert
        self.minimum = minimum
        self.__name__ = kind  # argparse names the type in "invalid <name> value"

    def __call__(self, text: str) -> Any:
        return self.convert(text)

    def __repr__(self) -> str:
        return f"Checked({self.kind!r}, minimum={self.minimum!r})"


def whole(minimum: int | None = None, maximum: int | None = None) -> Checked:
    """A whole number (ASCII digits, an optional sign) within [minimum, maximum]."""

    def convert(text: str) -> int:
        body = text.strip()
        digits = body[1:] if body[:1] in "+-" else body
        if not digits.isascii() or not digits.isdigit():
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
        return _in_range(int(body), minimum, maximum)

    return Checked("whole number", convert, minimum=minimum)


def number(minimum: float | None = None, maximum: float | None = None, *, above: bool = False) -> Checked:
    """A finite number within the range (`above`: strictly greater than `minimum`)."""

    def convert(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
        if above and minimum is not None and value <= minimum:
            raise argparse.ArgumentTypeError(f"{text} must be more than {minimum:g}")
        return _in_range(value, None if above else minimum, maximum)

    return Checked("number", convert, minimum=minimum)


def _in_range(value, minimum, maximum):
    if minimum is not None and value < minimum:
        raise argparse.ArgumentTypeError(f"{value} is below the least allowed, {minimum}")
    if maximum is not None and value > maximum:
        raise argparse.ArgumentTypeError(f"{value} is above the most allowed, {maximum}")
    return value


def _special(path: Path) -> str | None:
    """'a FIFO (named pipe)' / 'a device' / 'a socket' for a special file (links followed), else None."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return None


def input_path(kind: str = "any") -> Checked:
    """An existing input: `file`, `folder` or `any` (a file or a folder)."""

    def convert(text: str) -> str:
        path = Path(text)
        if not text or not path.exists():
            raise argparse.ArgumentTypeError(f"{text}: no such file or folder")
        special = _special(path)
        if special:
            raise argparse.ArgumentTypeError(f"{text}: {special}, not a file or folder")
        if kind == "file" and path.is_dir():
            raise argparse.ArgumentTypeError(f"{text}: a folder; give a file")
        if kind == "folder" and not path.is_dir():
            raise argparse.ArgumentTypeError(f"{text}: not a folder")
        return text

    return Checked(f"input {kind}", convert)



def file_option(parser: argparse.ArgumentParser, flag: str, help: str) -> None:
    """An option naming one existing file (FILE), checked by the parser."""
    parser.add_argument(flag, metavar="FILE", type=input_path("file"), help=help)

def _creatable(path: Path, text: str) -> None:
    """The nearest existing ancestor of `path` must be a folder this user can write into."""
    parent = path.absolute().parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: cannot be created ({parent} is a file, not a folder)")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{text}: cannot be created ({parent} is not writable)")


def output_folder() -> Checked:
    """A folder to write into: an existing folder, or a path that can be created (not an existing file)."""

    def convert(text: str) -> str:
        path = Path(text)
        if not text:
            raise argparse.ArgumentTypeError("an empty path")
        if path.is_symlink() and not path.is_dir():
            raise argparse.ArgumentTypeError(f"{text}: a symbolic link, not a folder")
        if path.exists() and not path.is_dir():
            raise argparse.ArgumentTypeError(f"{text}: names a file; give a folder (new or existing)")
        if not path.exists():
            _creatable(path, text)
        elif not os.access(path, os.W_OK | os.X_OK):
            raise argparse.ArgumentTypeError(f"{text}: the folder is not writable")
        return text

    return Checked("output folder", convert)


def output_path() -> Checked:
    """A file (or, for one-file-per-document formats, a folder) to write: creatable where it is."""

    def convert(text: str) -> str:
        path = Path(text)
        if not text:
            raise argparse.ArgumentTypeError("an empty path")
        special = _special(path)
        if special:
            raise argparse.ArgumentTypeError(f"{text}: {special}, not a file")
        if not path.exists():
            _creatable(path, text)
        return text

    return Checked("output path", convert)


def day() -> Checked:
    """A calendar day, YYYY-MM-DD."""

    def convert(text: str) -> str:
        try:
            date.fromisoformat(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a date (use YYYY-MM-DD)") from None
        return text

    return Checked("day", convert)


class OneLineParser(argparse.ArgumentParser):
    """An argparse parser whose errors are one line (the usage is on --help), exit status 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message} (see {self.prog} --help)\n")
        raise SystemExit(2)
