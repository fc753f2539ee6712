"""Errors that name the file, the line or item, and the problem."""

from __future__ import annotations

from pathlib import Path


class CuralinkError(Exception):
    """Base of every error the engine raises on purpose."""


class InputError(CuralinkError):
    """Bad input: the message names the file, the line (or element) and what is wrong."""

    def __init__(
        self, source: str | Path | None, problem: str, line: int | None = None, item: str | None = None
    ):
        self.source = str(source) if source is not None else None
        self.line = line
        self.item = item
        self.problem = problem
        where = self.source or "<input>"
        if line is not None:
            where += f", line {line}"
        if item:
            where += f", {item}"
        super().__init__(f"{where}: {problem}")


class ProjectError(CuralinkError):
    """The project folder is missing, not a Curalink project, or from a newer version."""


class ModelError(CuralinkError):
    """A model folder or checkpoint that cannot be used."""


class Cancelled(CuralinkError):
    """Raised inside long work when the caller asked it to stop."""
