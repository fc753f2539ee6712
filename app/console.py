"""Terminal plumbing for the CLI and the benchmark commands: logging, safe printing and JSON, a progress
bar, Ctrl-C as a safe cancel, opening the project a command names (bench depends on this, not on app.cli)."""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.logging import RichHandler
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Column, Table
from rich.text import Text

from core.errors import CuralinkError, ProjectError
from core.progress import CancelToken, ProgressCallback

if TYPE_CHECKING:
    from core.store.project import Project

_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_LINE_BREAKS = re.compile(r"[\n\r\u2028\u2029\x85]")


def _escaped(match: re.Match) -> str:
    code = ord(match.group())
    return {10: "\\n", 13: "\\r"}.get(code, f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def escape_controls(text: str, *, line_breaks: bool = False) -> str:
    """`text` with terminal control characters (ESC and the rest of C0/C1, bidirectional overrides)
    shown as escapes, so text from a project or a file cannot move the cursor, recolour or retitle the
    terminal; with `line_breaks` newlines too (a log record stays one line)."""
    text = _CONTROLS.sub(_escaped, text)
    return _LINE_BREAKS.sub(_escaped, text) if line_breaks else text


class SafeConsole(Console):
    """A rich Console that prints strings as they are: no markup (a stored "[red]" or "[/]" is text) and
    control characters escaped. Styled output is passed as rich Text, which is not reinterpreted."""

    def render_str(self, text: str, **kwargs) -> Text:
        kwargs["markup"] = False
        return super().render_str(escape_controls(text), **kwargs)


class OneLineFormatter(logging.Formatter):
    """Log records with every control character and line break of the message escaped, so a stored
    string (a version "v2" + newline + "ERROR ...") cannot forge a line of logs/curalink.log or write
    escapes to a terminal.
    A traceback appended by the logging module keeps its lines."""

    def format(self, record: logging.LogRecord) -> str:
        record = logging.makeLogRecord(record.__dict__)
        record.msg, record.args = escape_controls(record.getMessage(), line_breaks=True), None
        return super().format(record)


stderr = SafeConsole(stderr=True, soft_wrap=True, markup=False)


def configure_logging(level: str) -> None:
    handler = RichHandler(console=stderr, show_path=False, show_time=False, markup=False)
    handler.setFormatter(OneLineFormatter("%(message)s"))
    logging.basicConfig(level=getattr(logging, level.upper(), logging.INFO), handlers=[handler])
    logging.getLogger("alembic").setLevel(logging.WARNING)
    # faiss says which instruction set it loaded (and which it could not) at INFO, on every command
    logging.getLogger("faiss.loader").setLevel(logging.DEBUG if level.upper() == "DEBUG" else logging.WARNING)
    # transformers prints a load report and a progress bar for every fresh reranker head
    # ("classifier: MISSING", expected when a base model gains its [MASK] head): errors only, unless
    # debugging. Set before transformers is imported, which reads these once.
    if level.upper() != "DEBUG":
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


class ProjectLogHandler(logging.FileHandler):
    """The project's log file; when the disk is full (or the file cannot be written) it says so once on
    the console and stops, instead of printing a logging traceback for every later record."""

    stopped = False

    def emit(self, record: logging.LogRecord) -> None:
        if not self.stopped:
            super().emit(record)

    def handleError(self, record: logging.LogRecord) -> None:
        error = sys.exc_info()[1]
        if not isinstance(error, OSError):
            super().handleError(record)
            return
        self.stopped = True
        # Not removeHandler: the logger is iterating its handler list right now, and removing from it
        # in place skips the next handler (the console, or a test's log capture) for this record.
        # A new list leaves that iteration whole. Not closed: closing flushes, which fails again.
        root = logging.getLogger()
        root.handlers = [h for h in root.handlers if h is not self]
        stderr.print(
            f"not logging to {self.baseFilename} any more: {error.strerror or error}",
            style="yellow",
            markup=False,
        )


def log_to_project(project_path: Path) -> None:
    """Every command run on a project also writes to its logs/curalink.log (never through a link that
    leads outside the project: refused with a ProjectError naming it)."""
    from core.locations import inside_project

    logs = inside_project(project_path, project_path / "logs", "the project's logs folder")
    logs.mkdir(exist_ok=True)
    path = inside_project(project_path, logs / "curalink.log", "the project's log file")
    if path.exists() and not path.is_file():
        raise ProjectError(f"{path}: is not a regular file; the project's log is written nowhere else")
    handler = ProjectLogHandler(path, encoding="utf-8")
    handler.setFormatter(OneLineFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    # One project at a time: the desk that opens another project stops writing into the first one's log.
    for previous in [h for h in root.handlers if isinstance(h, ProjectLogHandler)]:
        root.removeHandler(previous)
        with suppress(OSError):  # a log that already failed (full disk) fails again on its last flush
            previous.close()
    root.addHandler(handler)


@contextmanager
def cancellable() -> Iterator[CancelToken]:
    """First Ctrl-C asks the running job to stop at its next safe point; a second one aborts at once."""
    token = CancelToken()
    previous = signal.getsignal(signal.SIGINT)

    def on_interrupt(signum, frame):
        if token.cancelled:
            signal.signal(signal.SIGINT, previous)
            raise KeyboardInterrupt
        stderr.print(Text("stopping at the next safe point (Ctrl-C again to abort)…", style="yellow"))
        token.cancel()

    signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield token
    finally:
        signal.signal(signal.SIGINT, previous)


NARROW_TERMINAL = 100
"""Below this many columns the bar drops the step count and the elapsed time, so what is done stays whole."""


def progress_columns(width: int) -> list:
    """The bar's columns for a terminal `width` wide. The description takes what the others leave and is cut
    at its end; the others keep their full width (rich shrank every column alike, so at 80 columns the
    counts and times read "7…", "0:0…")."""
    described = TextColumn(
        "{task.description}", markup=False, table_column=Column(ratio=1, overflow="ellipsis", no_wrap=True)
    )
    if width < NARROW_TERMINAL:
        return [
            SpinnerColumn(),
            described,
            BarColumn(bar_width=10),
            TaskProgressColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
        ]
    return [
        SpinnerColumn(),
        described,
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),  # "-:--:--" until the total and a first step are known
    ]


@contextmanager
def progress_bar(description: str, *, quiet: bool = False):
    """A rich progress bar as a core progress callback (indeterminate when total is None)."""
    if quiet:
        yield lambda done, total, message="": None
        return
    with Progress(*progress_columns(stderr.width), console=stderr, transient=True) as bar:
        task = bar.add_task(description, total=None)

        def update(done: int, total: int | None, message: str = "") -> None:
            text = escape_controls(f"{description} {message}".strip(), line_breaks=True)
            bar.update(task, completed=done, total=total, description=text)

        yield update


stdout = SafeConsole(soft_wrap=True, markup=False)
"""Strings printed here come from projects and files: no markup, control characters escaped."""


_JSON_UNSAFE = re.compile("[\x7f-\x9f\u200e\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069]")


def print_json(payload: dict) -> None:
    """JSON escapes C0 controls itself; C1 controls and bidirectional overrides are escaped here too."""
    text = json.dumps(payload, ensure_ascii=False, default=str)
    sys.stdout.write(_JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n")


def open_project(args):
    from core.store import Project

    if not args.project:
        raise CuralinkError("this command needs a project: curalink -p DIR ...")
    project = Project.open(args.project)
    log_to_project(project.path)
    return project



@contextmanager
def project_task(
    args, title: str, *, quiet: bool = False
) -> Iterator[tuple[Project, ProgressCallback, CancelToken]]:
    """What a long command runs under: the project it names, Ctrl-C as a cancel token and a progress bar
    titled `title`; yields (project, progress, cancel) and closes the project after."""
    with open_project(args) as project, cancellable() as cancel, progress_bar(title, quiet=quiet) as bar:
        yield project, bar, cancel


def shared_data(args) -> Path:
    data = (
        Path(args.data)
        if getattr(args, "data", None)
        else Path(__file__).resolve().parents[1].parent / "shared" / "data"
    )
    if not (data / "ncbi-disease").is_dir():
        raise CuralinkError(
            f"{data}: benchmark data not found (pass --data DIR with ncbi-disease/ and vocab/)"
        )
    return data


def print_output(result: dict, as_json: bool, title: str) -> None:
    if as_json:
        print_json(result)
        return
    table = Table("metric", "value", title=title)
    for key, value in result.items():
        table.add_row(key, f"{value:.4f}" if isinstance(value, float) else str(value))
    stdout.print(table)
