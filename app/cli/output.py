"""Shared output and project helpers of the CLI commands."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from rich.table import Table

from app.console import SafeConsole, log_to_project
from core.errors import CuralinkError

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
