"""`curalink kb search QUERY` and `curalink bench kb-search`: the desk's KB search from the command line."""

from __future__ import annotations

import tempfile
from pathlib import Path

from rich.table import Table

from app.cli.output import open_project, print_json, shared_data, stdout
from app.console import progress_bar
from core.kb.links import link_outs


def cmd_kb_search(args) -> int:
    """The same `Project.search_names` as the desk: names, synonyms, any id; typos forgiven."""
    with open_project(args) as project:
        hits = project.search_names(args.query, limit=args.limit)
        top = project.concept(hits[0][0]) if hits and args.details else None
        parents = project.concept_names(top.parents) if top else {}
    if args.json:
        print_json({"query": args.query, "hits": [{"id": i, "name": p, "matched": m} for i, m, p in hits]})
        return 0 if hits else 1
    if not hits:
        stdout.print(f"nothing in the knowledge base matches {args.query!r}")
        return 1
    table = Table("#", "id", "preferred name", "matched name", title=f"KB search: {args.query}")
    for rank, (concept_id, matched, preferred) in enumerate(hits, 1):
        table.add_row(str(rank), concept_id, preferred, matched if matched != preferred else "")
    stdout.print(table)
    if top is not None:
        stdout.print(f"{top.concept_id}  {top.preferred_name}")
        for label, values in (
            ("definition", [top.definition] if top.definition else []),
            ("semantic types", top.semantic_types),
            ("tree numbers", top.tree_numbers),
            ("parents", [f"{parents.get(p, '?')} ({p})" for p in top.parents]),
            ("also known as", top.alt_ids),
            ("links", [url for _label, url in link_outs(top)]),
        ):
            if values:
                stdout.print(f"  {label}: {'; '.join(values)}")
    return 0


def cmd_bench_kb_search(args) -> int:
    from core.evaluate.bench_kb_search import bench_kb_search

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
        project.import_concepts(load_kb(medic, "medic", progress=bar), source=str(medic), fmt="medic")
    return project


def register_search(kb) -> None:
    """`curalink kb search`."""
    search = kb.add_parser(
        "search",
        help="find concepts by name, synonym or any id (spelling variants, word order and typos forgiven)",
    )
    search.add_argument("query")
    search.add_argument("--limit", type=int, default=20)
    search.add_argument("--details", action="store_true", help="also describe the top hit")
    search.add_argument("--json", action="store_true")
    search.set_defaults(handler=cmd_kb_search)


def register_bench(bench) -> None:
    """`curalink bench kb-search`."""
    bench_search = bench.add_parser(
        "kb-search",
        help="KB search latency per keystroke and top hits (the -p project, else MEDIC from the shared data)",
    )
    bench_search.add_argument("--data", help="shared data folder (default ../shared/data)")
    bench_search.add_argument("--json", action="store_true")
    bench_search.set_defaults(handler=cmd_bench_kb_search)
