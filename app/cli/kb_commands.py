"""`curalink kb ...`: import a vocabulary, export the project's KB, its id namespaces and type routes, and
search it (`curalink bench kb-search` is in bench/cli/kb_search.py)."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from app.cli.arguments import file_option, input_path, output_path, whole
from app.console import open_project, print_json, project_task, stdout
from core.errors import CuralinkError
from core.kb.links import link_outs

KB_IMPORT_FORMATS = ("mesh-xml", "mesh-tsv", "umls-rrf", "ctd", "medic", "obo", "tsv")


def cmd_kb_import(args) -> int:
    """core.jobs.io.kb_import, as the desk and the demo import a KB; prints its report."""
    from core.jobs.io.kb_import import import_kb

    path = Path(args.file)
    umls = {"languages": args.language, "sources": args.sab}
    mesh = {"tree_numbers": args.tree_numbers, "actions": args.actions, "types_from": args.types_from}
    with project_task(args, f"importing {path.name}") as (project, bar, cancel):
        report = import_kb(
            project, path, args.format, names_only=args.names_only, progress=bar, cancel=cancel, **umls, **mesh
        )
    for line in report.lines():
        stdout.print(line, markup=False)
    return 0


def cmd_kb_export(args) -> int:
    from core.jobs.io.kb_export import export_kb

    with project_task(args, f"exporting {Path(args.out).name}") as (project, bar, cancel):
        count = export_kb(
            project,
            args.out,
            fmt=args.format,
            with_curator_synonyms=args.with_curator_synonyms,
            progress=bar,
            cancel=cancel,
        )
    curator = "with" if args.with_curator_synonyms else "without"
    stdout.print(f"{args.out}: {count} concepts written ({args.format}, {curator} curator synonyms)")
    return 0


def cmd_kb_routes(args) -> int:
    from core.kb.routing import DEFAULT_ROUTES, SETTING_KEY, TypeRouter, route_table, set_route

    action = list(args.action)
    with open_project(args) as project:
        stored = project.settings.setting(SETTING_KEY)
        if action[:1] == ["set"] and len(action) >= 3:
            stored = set_route(stored, action[1], " ".join(action[2:]))
            project.settings.set_setting(SETTING_KEY, stored)
        elif action == ["reset"]:
            project.settings.set_setting(SETTING_KEY, {})
            stored = {}
        elif action:
            raise CuralinkError(f"kb routes {' '.join(action)}: expected nothing, 'set TYPE SPEC' or 'reset'")
        table = route_table(stored)
        router = TypeRouter(project.kb.knowledge_base(), table)
        rows = []
        for mention_type, spec in table.items():
            admitted = router.admitted(router.route_key(mention_type))
            own = mention_type in (stored or {}) or mention_type not in DEFAULT_ROUTES
            rows.append(
                {
                    "type": mention_type,
                    "route": spec,
                    "concepts": len(router.kb) if admitted is None else len(admitted),
                    "origin": "project" if own else "default",
                }
            )
    if args.json:
        print_json({"routes": rows, "concepts": len(router.kb), "warnings": router.warnings})
        return 0
    stdout.print(f"type routes over {len(router.kb)} concepts (mention type: route, concepts admitted):")
    for row in rows:
        stdout.print(f"  {row['type']}: {row['route']} ({row['concepts']} concepts, {row['origin']})")
    return 0


def cmd_kb_namespaces(args) -> int:
    with open_project(args) as project:
        if args.namespaces:
            changed = project.kb.set_id_namespaces(args.namespaces)
            stdout.print(
                f"preferred id namespaces: {', '.join(project.settings.id_namespaces())}; "
                f"{changed} stored concepts re-keyed (links made earlier export with the new ids)"
            )
        else:
            stdout.print(f"preferred id namespaces: {', '.join(project.settings.id_namespaces())}")
    return 0


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


def register(commands) -> None:
    """Add `kb` and its subcommands to the `curalink` parser."""
    kb = commands.add_parser("kb", help="knowledge bases").add_subparsers(dest="kb_command", required=True)
    _register_import(kb)
    kb_export = kb.add_parser("export", help="write the project's knowledge base to a file kb import reads")
    kb_export.add_argument("--out", required=True, type=output_path(), help="the file to write")
    kb_export.add_argument("--format", choices=["tsv", "obo", "medic"], default="tsv")
    kb_export.add_argument(
        "--with-curator-synonyms",
        action="store_true",
        help="include the names curators' accepted corrections added (left out by default)",
    )
    kb_export.set_defaults(handler=cmd_kb_export)
    kb_namespaces = kb.add_parser(
        "namespaces",
        help="show or set the preferred id namespaces (default MESH OMIM): a concept with an id in a "
        "better-ranked namespace is keyed, linked and exported by it",
    )
    kb_namespaces.add_argument("namespaces", nargs="*", help="namespaces, best first (e.g. MESH OMIM UMLS)")
    kb_namespaces.set_defaults(handler=cmd_kb_namespaces)
    kb_routes = kb.add_parser(
        "routes",
        help="show the mention type -> concept routes, or change one: "
        "kb routes set TYPE SPEC (SPEC: tree:C,tree:F03,group:DISO,sty:T047,vocab:MEDIC or all); "
        "kb routes reset drops the project's own routes",
    )
    kb_routes.add_argument("action", nargs="*", metavar="set TYPE SPEC | reset")
    kb_routes.add_argument("--json", action="store_true")
    kb_routes.set_defaults(handler=cmd_kb_routes)
    search = kb.add_parser(
        "search",
        help="find concepts by name, synonym or any id (spelling variants, word order and typos forgiven)",
    )
    search.add_argument("query")
    search.add_argument("--limit", type=whole(1, 10_000), default=20)
    search.add_argument("--details", action="store_true", help="also describe the top hit")
    search.add_argument("--json", action="store_true")
    search.set_defaults(handler=cmd_kb_search)


def _register_import(kb) -> None:
    """`curalink kb import`: the options of core.jobs.io.kb_import.import_kb."""
    kb_import = kb.add_parser("import", help="import a vocabulary")
    kb_import.add_argument("file", type=input_path())
    kb_import.add_argument("--format", required=True, choices=list(KB_IMPORT_FORMATS))
    file_option(
        kb_import,
        "--tree-numbers",
        "mesh-tsv: a MeSH tree-number table (mesh_id, mesh_name, mesh_tree_number) that types descriptors",
    )
    file_option(
        kb_import,
        "--actions",
        "mesh-tsv: MeSH pharmacological actions (DescriptorUI ... PharmActionName); a record with one is a chemical",
    )
    kb_import.add_argument(
        "--types-from",
        nargs="+",
        choices=["train", "dev"],
        help="mesh-tsv: the splits whose annotations type records nothing else types (default: train dev; "
        "leave out a split you evaluate on)",
    )
    kb_import.add_argument("--language", action="append", default=None, help="UMLS: languages to keep (ENG)")
    kb_import.add_argument("--sab", action="append", help="UMLS: source vocabularies to keep (all)")
    kb_import.add_argument(
        "--names-only",
        action="store_true",
        help="add the file's names to the concepts the project already has (matched by id: MEDIC's disease "
        "synonyms onto MeSH descriptors); add no concept",
    )
    kb_import.set_defaults(handler=cmd_kb_import)
