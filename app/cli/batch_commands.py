"""Batch commands: `curalink link-batch`, `curalink -p DIR import-linked`, `curalink bench batch`."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from rich.table import Table

from app.cli.output import open_project, print_json, shared_data, stdout
from app.console import cancellable, progress_bar
from core.errors import CuralinkError
from core.jobs.batch import DEFAULT_CANDIDATES

EXIT_CANCELLED = 130


def cmd_link_batch(args) -> int:
    from core.jobs.batch import run_batch

    project = args.model_from or args.project
    if not project:
        raise CuralinkError(
            "link-batch needs a project whose KB and models in force it links with: "
            "curalink -p DIR link-batch ... (or --model-from DIR)"
        )
    if args.type is not None and not args.detect:
        raise CuralinkError("--type applies to detection: add --detect")
    with cancellable() as cancel, progress_bar("link-batch", quiet=args.json) as bar:
        shards = {"done": 0, "total": None}

        def overall(done: int, total: int | None, message: str = "") -> None:
            shards.update(done=done, total=total)
            bar(done, total, f"shards {message}")

        def within(documents: int, _total: int | None, message: str = "") -> None:
            bar(shards["done"], shards["total"], message)

        summary = run_batch(
            args.inputs,
            args.out,
            project,
            engine=args.engine,
            workers=args.workers,
            address=args.address,
            fmt=args.format,
            out_format=args.out_format,
            detect=args.detect,
            mention_type=args.type,
            candidates=args.candidates,
            device=args.device,
            overwrite=args.overwrite,
            progress=overall,
            shard_progress=within,
            cancel=cancel,
        )
    if args.json:
        payload = asdict(summary)
        payload["malformed"] = [
            {"input": e["input"], "problem_count": e["problem_count"], "problems": e["problems"][:20]}
            for e in summary.malformed
        ]
        print_json(payload)
    else:
        _print_batch(summary)
    return EXIT_CANCELLED if summary.cancelled else 0


def _print_batch(summary) -> None:
    figures = summary.figures
    stdout.print(
        f"linked {summary.linked} shard(s): {summary.documents} documents, {summary.mentions} mentions"
        + (f" ({summary.detected} detected)" if summary.detected else "")
        + f" in {summary.seconds:.1f} s on {summary.engine} with {summary.workers} worker(s)"
        + (f"; {summary.already_done} already linked, skipped" if summary.already_done else "")
    )
    if figures.get("abstracts_per_s"):
        stdout.print(
            f"steady state {figures['abstracts_per_s']} abstracts/s, {figures['mentions_per_s']} mentions/s; "
            f"start-up (models + name index) per worker: {figures['load_s_per_worker']} s"
        )
    if summary.removed_by_deletions:
        stdout.print(f"{summary.removed_by_deletions} citation(s) removed: later inputs delete them")
    for entry in summary.malformed:
        stdout.print(f"malformed, skipped: {entry['input']} ({entry['problem_count']} problem(s))")
        for problem in entry["problems"][:5]:
            stdout.print(f"  {problem}")
    if summary.cancelled:
        stdout.print("stopped at a shard boundary: run the same command again to link the rest")
    stdout.print(f"results and manifest.json in {summary.out_dir}")


def cmd_import_linked(args) -> int:
    from core.jobs.batch import import_linked

    with open_project(args) as project, cancellable() as cancel, progress_bar("importing") as bar:
        summary = import_linked(project, args.out_dir, split=args.split, progress=bar, cancel=cancel)
    stdout.print(
        f"imported {summary.shards} linked shard(s): {summary.documents_added} documents added "
        f"({summary.documents_present} already in the project), {summary.suggestions} suggestions for "
        f"{summary.mentions_suggested} mentions"
        + (f"; {summary.reviewed_kept} reviewed mentions kept theirs" if summary.reviewed_kept else "")
        + (f"; {summary.unmatched} linked mentions match no stored mention" if summary.unmatched else "")
    )
    return 0


def cmd_bench_batch(args) -> int:
    from core.evaluate.bench_batch import bench_batch

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


def register(commands) -> None:
    link = commands.add_parser(
        "link-batch", help="link whole collections of shards into linked shards + a manifest (local or Ray)"
    )
    link.add_argument("inputs", nargs="+", metavar="INPUT", help="input shards (files, or folders of them)")
    link.add_argument("--out", required=True, help="output folder: linked shards and manifest.json")
    link.add_argument(
        "--model-from",
        metavar="PROJECT",
        help="project whose KB and models in force are used, read-only (default: -p DIR)",
    )
    link.add_argument("--engine", choices=["local", "ray"], default="local")
    link.add_argument("--workers", type=int, default=1, help="worker processes (local) or actors (ray)")
    link.add_argument("--address", help="Ray cluster address (host:port or ray://host:port); --engine ray")
    link.add_argument("--format", help="input format (default: guessed per file)")
    link.add_argument("--out-format", default="jsonl", choices=["jsonl", "bioc-json", "bioc-xml"])
    link.add_argument("--detect", action="store_true", help="tag mentions first (dictionary of the KB)")
    link.add_argument("--type", help="mention type of detected mentions (default: from the project)")
    link.add_argument("--candidates", type=int, default=DEFAULT_CANDIDATES, help="top-k kept per mention")
    link.add_argument("--device", default="auto", help="reranker device: auto, cpu or cuda")
    link.add_argument(
        "--overwrite", action="store_true", help="replace a folder made with other models, KB or files"
    )
    link.add_argument("--json", action="store_true")
    link.set_defaults(handler=cmd_link_batch)

    imported = commands.add_parser(
        "import-linked", help="a link-batch folder into the project as suggestions"
    )
    imported.add_argument("out_dir", metavar="OUT_DIR")
    imported.add_argument("--split", default="", help="split of the documents added (default none)")
    imported.set_defaults(handler=cmd_import_linked)


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
