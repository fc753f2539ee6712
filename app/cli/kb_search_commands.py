"""`curalink kb search QUERY`: the desk's KB search from the command line (`curalink bench kb-search` is in
bench/cli/kb_search.py)."""

from __future__ import annotations

from rich.table import Table

from app.cli.arguments import whole
from app.console import open_project, print_json, stdout
from core.kb.links import link_outs


def cmd_kb_search(args) -> int:
    """The same `Project.kb.search_names` as the desk: names, synonyms, any id; typos forgiven."""
    with open_project(args) as project:
        hits = project.kb.search_names(args.query, limit=args.limit)
        top = project.kb.concept(hits[0][0]) if hits and args.details else None
        parents = project.kb.concept_names(top.parents) if top else {}
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


def register_search(kb) -> None:
    """`curalink kb search`."""
    search = kb.add_parser(
        "search",
        help="find concepts by name, synonym or any id (spelling variants, word order and typos forgiven)",
    )
    search.add_argument("query")
    search.add_argument("--limit", type=whole(1, 10_000), default=20)
    search.add_argument("--details", action="store_true", help="also describe the top hit")
    search.add_argument("--json", action="store_true")
    search.set_defaults(handler=cmd_kb_search)
