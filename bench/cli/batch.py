"""`curalink bench batch`: link-batch throughput (issue 15)."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from app.console import cancellable, print_json, progress_bar, shared_data, stdout


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


def cmd_bench_batch_manifest(args) -> int:
    from bench.batch_manifest import bench_batch_manifest

    with cancellable() as cancel, progress_bar("manifest benchmark", quiet=args.json) as bar:
        result = bench_batch_manifest(
            Path(args.work),
            files=args.files,
            kind=args.kind,
            project=Path(args.project_dir or args.project) if (args.project_dir or args.project) else None,
            progress=bar,
            cancel=cancel,
        )
    if args.json:
        print_json(result)
        return 0
    stdout.print(
        f"link-batch over {result['files']:,} {result['kind']} input files in {result['wall_s']} s: "
        f"recording a shard took {result['record_ms_first_100']} ms (median, shards 1-100) and "
        f"{result['record_ms_last_100']} ms (the last 100), {result['record_ratio_last_to_first']}x; "
        f"a shard all told {result['shard_ms_first_100']} ms and {result['shard_ms_last_100']} ms"
    )
    stdout.print(f"target: {result['target']}: {'met' if result['met'] else 'NOT met'}")
    return 0


def register_bench_manifest(bench) -> None:
    """`curalink bench batch-manifest` (issue 33)."""
    scale = bench.add_parser(
        "batch-manifest", help="link-batch manifest cost per shard at 100 and at 10,000 shards, one run"
    )
    scale.add_argument("--files", type=int, default=10_000, help="input files, one shard each")
    scale.add_argument(
        "--kind", choices=["empty", "tiny"], default="empty", help="empty or one-abstract files"
    )
    scale.add_argument(
        "--project", dest="project_dir", metavar="DIR", help="a project to link with (default: demo)"
    )
    scale.add_argument("--work", default="bench-out/batch-manifest", help="work folder")
    scale.add_argument("--json", action="store_true")
    scale.set_defaults(handler=cmd_bench_batch_manifest)
