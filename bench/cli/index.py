"""`curalink bench index`: a UMLS-size name index on a laptop (compressed index, parallel encoding)."""

from __future__ import annotations

import json
from pathlib import Path

from rich.table import Table

from app.console import cancellable, print_json, progress_bar, stdout


def cmd_bench_index(args) -> int:
    from bench.index import bench_index

    data = Path(args.data) if args.data else Path(__file__).resolve().parents[2].parent / "shared" / "data"
    with cancellable() as cancel, progress_bar("name index benchmark", quiet=args.json) as bar:
        result = bench_index(
            args.names,
            data_dir=data if data.is_dir() else None,
            model_dir=args.model,
            workers=args.workers,
            engine=args.engine,
            queries=args.queries,
            compare_sample=args.compare_sample,
            train_epochs=args.train_epochs,
            kind=args.kind,
            progress=bar,
            cancel=cancel,
            on_size=(lambda report: Path(args.out).write_text(json.dumps(report, indent=1)))
            if args.out
            else (lambda r: None),
        )
    if args.json:
        print_json(result)
        return 0
    stdout.print(
        f"{result['model']}; names from {result['vocabulary']}; {result['engine']} x {result['workers']}"
    )
    table = Table("names", "kind", "setting", "encode+build s", "index MB", "load RSS MB", "p50 ms", "p95 ms",
                  "recall@64", title="name index at scale")  # fmt: skip
    for run in result["runs"]:
        table.add_row(
            f"{run['names']:,}",
            run["index_kind"],
            str(run["search"]),
            str(run["encode_and_build_s"]),
            str(run["index_file_mb"]),
            str(run["load_with_rows"]["peak_mb"]),
            str(run["query_p50_ms"]),
            str(run["query_p95_ms"]),
            str(run["recall@64_vs_exact"]),
        )
    stdout.print(table)
    for key in ("kinds_on_sample", "encoding", "extrapolated_15000000", "targets"):
        if key in result:
            stdout.print(f"{key}: {result[key]}", markup=False)
    return 0


def register_bench(bench) -> None:
    parser = bench.add_parser("index", help="compressed name index at 1M-5M synthetic MRCONSO names")
    parser.add_argument("--names", type=int, nargs="+", default=[1_000_000, 5_000_000])
    parser.add_argument("--data", help="shared data folder (default ../shared/data; MEDIC's words)")
    parser.add_argument(
        "--model", help="a ResCNN folder (default: untrained convolutions on MiniLM embeddings)"
    )
    parser.add_argument("--workers", type=int, help="encoding processes (default: one per core)")
    parser.add_argument("--engine", choices=["local", "ray"], default="local")
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument(
        "--compare-sample", type=int, default=200_000, help="names to compare kinds on; 0: skip"
    )
    parser.add_argument(
        "--train-epochs",
        type=int,
        default=0,
        help="train the ResCNN this many epochs on synthetic synonyms first (vectors shaped like a "
        "trained retriever's, for the recall; 0: untrained, enough for speed)",
    )
    parser.add_argument(
        "--kind",
        choices=["flat", "hnsw", "ivf-sq8", "ivf-sq6", "ivf-pq"],
        help="force this index kind at every size (default: chosen by size, IVF-SQ8 from 1M names)",
    )
    parser.add_argument("--out", help="also write the report to this JSON file after each size")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(handler=cmd_bench_index)
