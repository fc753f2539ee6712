"""`curalink bench batch`: link-batch throughput (issue 15)."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from app.cli.output import print_json, shared_data, stdout
from app.console import cancellable, progress_bar


def cmd_bench_batch(args) -> int:
    from bench.batch import bench_batch

    data = shared_data(args)
    with cancellable() as cancel, progress_bar("batch benchmark", quiet=args.json) as bar:
        result = bench_batch(
            data,
            Path(args.work),
            documents=args.documents,
            shard_documents=args.shard_documents,
            project=Path(args.project_dir or args.project) if (args.project_dir or args.project) else None,
            train_seconds=args.train_seconds,
            progress=bar,
            cancel=cancel,
        )
    if args.json:
        print_json(result)
        return 0
    table = Table(
        "engine",
        "abstracts/s",
        "mentions/s",
        "wall s",
        "CPU ms/abstract",
        "index loads",
        "start-up s per worker",
        "peak MB per worker",
        title=f"link-batch on {result['documents']:,} abstracts in {result['shards']} shards",
    )
    for row in result["runs"]:
        table.add_row(
            row["engine"],
            str(row.get("abstracts_per_s")),
            str(row.get("mentions_per_s")),
            str(row["wall_s"]),
            f"{1000 * (row.get('cpu_seconds_per_abstract') or 0):.2f}",
            f"{row['index_loads']} for {row['workers']} workers",
            str(row["load_s_per_worker"]),
            str(row["peak_rss_mb_per_worker"]),
        )
    stdout.print(table)
    stdout.print(result["note"])
    return 0


def register_bench(bench) -> None:
    """`curalink bench batch`."""
    batch = bench.add_parser("batch", help="link-batch throughput: local 1 and 2 workers, Ray 2 actors")
    batch.add_argument("--data", help="shared data folder (default ../shared/data)")
    batch.add_argument("--documents", type=int, default=20_000, help="abstracts (NCBI-disease replicated)")
    batch.add_argument("--shard-documents", type=int, default=500, help="abstracts per shard")
    batch.add_argument(
        "--project",
        dest="project_dir",
        metavar="DIR",
        help="a project with MEDIC and a trained retriever to use",
    )
    batch.add_argument(
        "--train-seconds", type=float, default=60.0, help="retriever training budget when no project is given"
    )
    batch.add_argument("--work", default="bench-out/batch", help="work folder (shards, project, outputs)")
    batch.add_argument("--json", action="store_true")
    batch.set_defaults(handler=cmd_bench_batch)
