"""`curalink -p DIR bench detect`: mentions/s and acc@1 of the linkers on identical gold mentions."""

from __future__ import annotations

from rich.table import Table

from app.cli.output import open_project, print_json, stdout
from app.console import cancellable, progress_bar


def cmd_bench_detect(args) -> int:
    from bench.detect import bench_detect

    with (
        open_project(args) as project,
        cancellable() as cancel,
        progress_bar("detect benchmark", quiet=args.json) as bar,
    ):
        result = bench_detect(
            project,
            split=args.split,
            documents=args.documents,
            candidates=args.candidates,
            progress=bar,
            cancel=cancel,
        )
    if args.json:
        print_json(result)
        return 0
    table = Table(
        "linker",
        "mentions/s",
        "acc@1",
        "x one-mention DE",
        title=f"linking {result['mentions']} gold mentions",
    )
    for row in result["linkers"]:
        table.add_row(
            row["name"],
            f"{row['mentions_per_s']:.1f}",
            "-" if row["acc@1"] is None else f"{row['acc@1']:.2f}",
            f"{row['speedup_vs_one_mention']:.2f}",
        )
    stdout.print(table)
    return 0


def register_bench(bench) -> None:
    parser = bench.add_parser(
        "detect",
        help="mentions/s and acc@1 on identical gold mentions: collective linking, ResCNN, one-mention "
        "dual encoder, pair cross-encoder (CPU)",
    )
    parser.add_argument("--split", choices=["train", "dev", "test"], default="test")
    parser.add_argument(
        "--documents", type=int, default=30, help="the first N documents of the split (default 30)"
    )
    parser.add_argument(
        "--candidates", type=int, default=16, help="retriever candidates the cross-encoder scores"
    )
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(handler=cmd_bench_detect)
