"""`curalink -p DIR bench link-memory`: the peak memory of `link --detect`, its name index rebuilt."""

from __future__ import annotations

from pathlib import Path

from app.console import print_json, stdout
from core.errors import CuralinkError


def cmd_bench_link_memory(args) -> int:
    from bench.link_memory import link_memory

    if not args.project:
        raise CuralinkError("bench link-memory measures a project: give -p DIR")
    result = link_memory(Path(args.project), ["--detect", *args.link_args])
    if args.json:
        print_json(result)
        return 0
    stdout.print(
        f"{result['command']}: peak {result['peak_mb']} MB (with encoding workers {result['peak_with_workers_mb']} MB), "
        f"target {result['target_mb']} MB: {'met' if result['met'] else 'NOT met'}; {result['seconds']} s",
        markup=False,
    )
    for line in result["said"]:
        stdout.print("  " + line, markup=False)
    return 0


def register_bench(bench) -> None:
    parser = bench.add_parser(
        "link-memory",
        help="peak memory of link --detect on a copy of the project, its name index rebuilt (target 1.5 GB)",
    )
    parser.add_argument("link_args", nargs="*", help="more link options (after --), e.g. -- --split test")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(handler=cmd_bench_link_memory)
