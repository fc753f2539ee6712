"""`curalink bench ...`: the harness's own command line, loaded by app/cli only when `bench` is asked for."""

from __future__ import annotations

import argparse

from bench.cli import commands


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="curalink bench", description="Benchmarks, the fault harness and the fuzz run (from a clone)."
    )
    benchmarks = parser.add_subparsers(dest="bench_command", required=True, metavar="BENCHMARK")
    commands.register(benchmarks)
    return parser


def run(argv: list[str], project: str | None = None) -> int:
    """Parse `argv` (what follows `curalink bench`) and run that benchmark; `project` is `curalink -p DIR`."""
    args = build_parser().parse_args(argv, namespace=argparse.Namespace(project=project))
    return args.handler(args)
