"""The `curalink` command: parses arguments, calls `core`, prints. The contract is in the README."""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from rich.text import Text  # noqa: E402

from app.cli import (  # noqa: E402
    batch_commands,
    bench_commands,
    curation_commands,
    model_commands,
    project_commands,
)
from app.console import configure_logging, escape_controls, stderr  # noqa: E402
from core.errors import Cancelled, CuralinkError  # noqa: E402

log = logging.getLogger("curalink")

EXIT_ERROR = 2
EXIT_CANCELLED = 130


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="curalink", description="Biomedical entity linking assistant.")
    parser.add_argument("-p", "--project", help="project folder")
    parser.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING or ERROR")
    parser.add_argument(
        "--smoke",
        type=float,
        metavar="SECONDS",
        help="open the desk, print its start-up times as JSON once it is usable, quit (fail after SECONDS)",
    )
    commands = parser.add_subparsers(dest="command")
    for module in (project_commands, curation_commands, model_commands, batch_commands, bench_commands):
        module.register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging(args.log_level)
    handler = getattr(args, "handler", None)
    if handler is None:
        if args.command is not None or importlib.util.find_spec("app.gui.launch") is None:
            parser.print_help()
            return EXIT_ERROR
        handler = _launch_desk
    try:
        return handler(args)
    except Cancelled:
        stderr.print(Text("cancelled: the project is as it was before this command", style="yellow"))
        return EXIT_CANCELLED
    except KeyboardInterrupt:
        stderr.print(Text("aborted: the open transaction was rolled back", style="yellow"))
        return EXIT_CANCELLED
    except CuralinkError as exc:
        stderr.print(Text("error: ", style="red") + Text(escape_controls(str(exc))))
        return EXIT_ERROR


def _launch_desk(args) -> int:
    """No subcommand: the desktop app (its start-up errors print like any command's)."""
    from app.gui.launch import launch_gui

    return launch_gui(Path(args.project) if args.project else None, smoke_seconds=args.smoke)


if __name__ == "__main__":
    raise SystemExit(main())
