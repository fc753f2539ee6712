"""Terminal plumbing for the CLI: logging, a progress bar, and Ctrl-C as a safe cancel."""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console
from rich.logging import RichHandler
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

from core.progress import CancelToken

stderr = Console(stderr=True, soft_wrap=True)


def configure_logging(level: str) -> None:
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        format="%(message)s",
        handlers=[RichHandler(console=stderr, show_path=False, show_time=False)],
    )
    logging.getLogger("alembic").setLevel(logging.WARNING)
    # transformers prints a load report and a progress bar for every fresh reranker head
    # ("classifier: MISSING", expected when a base model gains its [MASK] head): errors only, unless
    # debugging. Set before transformers is imported, which reads these once.
    if level.upper() != "DEBUG":
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


class ProjectLogHandler(logging.FileHandler):
    """The project's log file; when the disk is full (or the file cannot be written) it says so once on
    the console and stops, instead of printing a logging traceback for every later record."""

    def handleError(self, record: logging.LogRecord) -> None:
        error = sys.exc_info()[1]
        if not isinstance(error, OSError):
            super().handleError(record)
            return
        logging.getLogger().removeHandler(self)  # not closed: closing flushes, which fails again
        stderr.print(
            f"not logging to {self.baseFilename} any more: {error.strerror or error}",
            style="yellow",
            markup=False,
        )


def log_to_project(project_path: Path) -> None:
    """Every command run on a project also writes to its logs/curalink.log."""
    (project_path / "logs").mkdir(exist_ok=True)
    handler = ProjectLogHandler(project_path / "logs" / "curalink.log", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger().addHandler(handler)


@contextmanager
def cancellable() -> Iterator[CancelToken]:
    """First Ctrl-C asks the running job to stop at its next safe point; a second one aborts at once."""
    token = CancelToken()
    previous = signal.getsignal(signal.SIGINT)

    def on_interrupt(signum, frame):
        if token.cancelled:
            signal.signal(signal.SIGINT, previous)
            raise KeyboardInterrupt
        stderr.print("[yellow]stopping at the next safe point (Ctrl-C again to abort)…[/yellow]")
        token.cancel()

    signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield token
    finally:
        signal.signal(signal.SIGINT, previous)


@contextmanager
def progress_bar(description: str, *, quiet: bool = False):
    """A rich progress bar as a core progress callback (indeterminate when total is None)."""
    if quiet:
        yield lambda done, total, message="": None
        return
    columns = [
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    ]
    with Progress(*columns, console=stderr, transient=True) as bar:
        task = bar.add_task(description, total=None)

        def update(done: int, total: int | None, message: str = "") -> None:
            bar.update(task, completed=done, total=total, description=f"{description} {message}".strip())

        yield update
