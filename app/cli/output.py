"""Shared output and project helpers of the CLI commands."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from app.console import log_to_project
from core.errors import CuralinkError

stdout = Console(soft_wrap=True)


def print_json(payload: dict) -> None:
    sys.stdout.write(json.dumps(payload, ensure_ascii=False, default=str) + "\n")


def open_project(args):
    from core.store import Project

    if not args.project:
        raise CuralinkError("this command needs a project: curalink -p DIR ...")
    project = Project.open(args.project)
    log_to_project(project.path)
    return project


def shared_data(args) -> Path:
    data = (
        Path(args.data)
        if getattr(args, "data", None)
        else Path(__file__).resolve().parents[2].parent / "shared" / "data"
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
