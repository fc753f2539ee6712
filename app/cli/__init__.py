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
    corpus_commands,
    curation_commands,
    evaluate_commands,
    kb_commands,
    lifecycle_commands,
    link_commands,
    project_commands,
    train_commands,
)
from app.cli.arguments import Checked, OneLineParser, number  # noqa: E402
from app.console import configure_logging, escape_controls, stderr  # noqa: E402
from core.errors import Cancelled, CuralinkError  # noqa: E402
from core.limits import LIMITS, default_limit, parse_limit_value, set_limit  # noqa: E402

log = logging.getLogger("curalink")

EXIT_ERROR = 2
EXIT_CANCELLED = 130


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="curalink", description="Biomedical entity linking assistant.")
    parser.add_argument("-p", "--project", help="project folder")
    parser.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING or ERROR")
    parser.add_argument(
        "--smoke",
        type=number(0, above=True),
        metavar="SECONDS",
        help="open the desk, print its start-up times as JSON once it is usable, quit (fail after SECONDS)",
    )
    parser.add_argument(
        "--limit",
        action="append",
        dest="limits",  # `kb search --limit` is another option of the same name
        default=[],
        type=Checked("limit", _limit_option),
        metavar="NAME=N",
        help="raise or lower an input bound (repeatable): "
        + ", ".join(f"{name} (default {default_limit(name):,})" for name in LIMITS),
    )
    commands = parser.add_subparsers(dest="command")
    for module in (
        project_commands,
        kb_commands,
        corpus_commands,
        curation_commands,
        train_commands,
        link_commands,
        evaluate_commands,
        lifecycle_commands,
    ):
        module.register(commands)
    bench = commands.add_parser(
        "bench",
        help="benchmarks, the fault harness and the fuzz run (`curalink bench --help`; from a clone only)",
        add_help=False,  # `curalink bench --help` is the harness's own help
    )
    bench.add_argument("bench_args", nargs=argparse.REMAINDER)
    bench.set_defaults(handler=_run_bench)
    return parser


def _limit_option(text: str) -> tuple[str, int]:
    """`NAME=N` of core.limits.LIMITS, checked by the parser (one line when wrong)."""
    name, _, value = text.partition("=")
    if name not in LIMITS:
        raise argparse.ArgumentTypeError(f"{name!r} is not a limit; limits: {', '.join(LIMITS)}")
    try:
        return name, parse_limit_value(name, value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give NAME=N with N a positive whole number") from None


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:  # a bad argument is one line from the parser (app.cli.arguments), returned as the exit status
        args, unknown = parser.parse_known_args(argv)
        if args.command == "bench":  # the harness parses its own options
            args.bench_args = unknown + args.bench_args
        elif unknown:
            parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    except SystemExit as exited:
        return exited.code if isinstance(exited.code, int) else EXIT_ERROR
    configure_logging(args.log_level)
    for name, value in args.limits:
        set_limit(name, value)
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
    except OSError as exc:  # a path the parser could not judge (/proc, a full disk): one line, no traceback
        where = f"{exc.filename}: " if exc.filename else ""
        stderr.print(Text("error: ", style="red") + Text(escape_controls(f"{where}{exc.strerror or exc}")))
        return EXIT_ERROR


def _run_bench(args) -> int:
    """`curalink bench ...`: the harness is the top-level package bench/, imported only here. The packaged
    app leaves it out, so there this is a one-line error."""
    try:
        from bench.cli import run
    except ModuleNotFoundError as exc:
        if exc.name not in ("bench", "bench.cli"):
            raise
        raise CuralinkError(
            "`curalink bench` needs the benchmark harness (the bench/ package), which this install does not "
            "have (the packaged app leaves it out): run it from a clone installed with `pip install -e .`"
        ) from None
    return run(args.bench_args, project=args.project)


def _launch_desk(args) -> int:
    """No subcommand: the desktop app (its start-up errors print like any command's)."""
    from app.gui.launch import launch_gui

    return launch_gui(Path(args.project) if args.project else None, smoke_seconds=args.smoke)


if __name__ == "__main__":
    raise SystemExit(main())
