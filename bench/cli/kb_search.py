"""`curalink bench kb-search`: KB search latency per keystroke (the -p project, else MEDIC)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from rich.table import Table

from app.console import open_project, print_json, progress_bar, shared_data, stdout


def cmd_bench_kb_search(args) -> int:
    from bench.kb_search import bench_kb_search

    with tempfile.TemporaryDirectory(prefix="curalink-kbsearch-") as scratch:
        project = open_project(args) if args.project else _medic_project(args, Path(scratch))
        with project, progress_bar("KB search benchmark", quiet=args.json) as bar:
            result = bench_kb_search(project, progress=bar)
    if args.json:
        print_json(result)
        return 0
    stdout.print(
        f"KB: {result['concepts']:,} concepts, {result['names']:,} names, {result['index_words']:,} distinct "
        f"words; forgiving-search index built in {result['index_build_ms']:.0f} ms"
    )
    stdout.print(
        f"{result['keystrokes']} keystrokes: median {result['median_ms']} ms, p95 {result['p95_ms']} ms, "
        f"max {result['max_ms']} ms (target < {result['target_ms']:.0f} ms)"
    )
    table = Table("query", "ms", "top hit", "preferred name", "matched name", title="full queries")
    for row in result["rows"]:
        table.add_row(row["query"], str(row["ms"]), row["top"], row["name"], row["via"])
    stdout.print(table)
    return 0


def _medic_project(args, scratch: Path):
    """A scratch project with MEDIC from the shared data imported (when no -p project is given)."""
    from core.kb import load_kb
    from core.store import Project

    medic = shared_data(args) / "vocab" / "medic_06Jul2012.txt"
    project = Project.create(scratch / "medic")
    with progress_bar(f"importing {medic.name}", quiet=args.json) as bar:
        project.kb.import_concepts(load_kb(medic, "medic", progress=bar), source=str(medic), fmt="medic")
    return project


def register_bench(bench) -> None:
    """`curalink bench kb-search`."""
    bench_search = bench.add_parser(
        "kb-search",
        help="KB search latency per keystroke and top hits (the -p project, else MEDIC from the shared data)",
    )
    bench_search.add_argument("--data", help="shared data folder (default ../shared/data)")
    bench_search.add_argument("--json", action="store_true")
    bench_search.set_defaults(handler=cmd_bench_kb_search)
