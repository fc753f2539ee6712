"""Project commands: init, KB and corpus import, export, stats, the demo."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.table import Table

from app.cli import fetch_commands, kb_search_commands
from app.cli.arguments import day, input_path, number, output_folder, output_path
from app.console import cancellable, open_project, print_json, progress_bar, stdout
from core.errors import CuralinkError

CORPUS_FORMATS = ("pubtator", "bioc-xml", "bioc-json", "brat", "jsonl", "text", "pubmed-xml", "jats")
EXPORT_FORMATS = ("pubtator", "bioc-xml", "bioc-json", "brat", "jsonl", "text")  # the others are read-only


def cmd_init(args) -> int:
    from core.store import Project

    with Project.create(args.dir) as project:
        stdout.print(f"created Curalink project in {project.path}")
    return 0


def cmd_kb_import(args) -> int:
    from core.kb import load_kb, sniff_kb_format

    path = Path(args.file)
    if not path.exists():
        raise CuralinkError(f"{path}: no such file or folder")
    sniffed = sniff_kb_format(path)
    if sniffed is not None and sniffed != args.format:
        raise CuralinkError(f"{path}: looks like a {sniffed} file, not {args.format}; nothing was imported")
    options: dict = {}
    warnings: list[str] = []
    if args.format == "umls-rrf":
        options = {"languages": set(args.language or ["ENG"]), "sources": set(args.sab) if args.sab else None}
    elif args.format == "obo":
        options = {"on_warning": warnings.append}
    elif args.format == "mesh-tsv":
        options = {"tree_numbers": args.tree_numbers, "actions": args.actions, "on_summary": warnings.append}
    elif args.tree_numbers or args.actions or args.types_from:
        raise CuralinkError("--tree-numbers, --actions and --types-from apply to --format mesh-tsv only")
    with (
        open_project(args) as project,
        cancellable() as cancel,
        progress_bar(f"importing {path.name}") as bar,
    ):
        if args.format == "mesh-tsv":
            from core.store.annotated_types import annotated_semantic_types

            options["annotated_types"] = annotated_semantic_types(
                project, args.types_from or ("train", "dev")
            )
        concepts = load_kb(path, args.format, progress=bar, cancel=cancel, **options)
        summary = project.kb.import_concepts(
            concepts,
            source=str(path),
            fmt=args.format,
            names_only=args.names_only,
            progress=bar,
            cancel=cancel,
        )
        namespaces = project.settings.id_namespaces()
    if args.names_only:
        stdout.print(
            f"{path}: {summary.names} names added to {summary.skipped} concepts of the project; "
            f"{summary.unmatched} concepts of the file match none of the project's ids and were not added"
        )
        return 0
    stdout.print(
        f"{path}: {summary.added} concepts added, {summary.skipped} already present (their new names merged), "
        f"{summary.names} names added"
        + (
            f"; {summary.rekeyed} keyed by a preferred-namespace id ({', '.join(namespaces)} first), "
            "answering to their other ids too"
            if summary.rekeyed
            else ""
        )
    )
    for warning in warnings:
        stdout.print(f"  {'types' if args.format == 'mesh-tsv' else 'not kept'}: {warning}", markup=False)
    return 0


def cmd_kb_export(args) -> int:
    from core.jobs.io.kb_export import export_kb

    with (
        open_project(args) as project,
        cancellable() as cancel,
        progress_bar(f"exporting {Path(args.out).name}") as bar,
    ):
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


def cmd_corpus_import(args) -> int:
    from core.formats import get_format
    from core.jobs.io.corpus import import_corpus

    path = Path(args.file)
    get_format(args.format, path)
    if not path.exists():
        raise CuralinkError(f"{path}: no such file or folder")
    with (
        open_project(args) as project,
        cancellable() as cancel,
        progress_bar(f"importing {path.name}") as bar,
    ):
        result = import_corpus(
            project,
            path,
            args.format,
            split=args.split or "",
            on_duplicate=args.on_duplicate,
            on_invalid=args.on_invalid,
            progress=bar,
            cancel=cancel,
        )
    for line in result.lines():
        stdout.print(line)
    return 0


EXPORT_HELP = """Write the corpus with each mention's current link.

What each decision writes:
  untouched               the mention as imported, with its imported id
  accept / correct        the chosen concept id; several concepts are one link, written by the
                          format's convention (PubTator A|B, ...)
  not in KB (N)           the id -1
  reject (R), ambiguous (A)
                          the mention without an id (no link was confirmed); the imported id
                          survives as the imported_id infon where the format has infons
Decided mentions carry the decision, curator, time and model version as infons (BioC, JSONL).
Deleted mentions are never written."""


def cmd_export(args) -> int:
    from core.formats import get_format
    from core.jobs.io.corpus import export_corpus

    get_format(args.format, args.out, writing=True)
    with open_project(args) as project:
        result = export_corpus(
            project,
            Path(args.out),
            args.format,
            accepted_only=args.accepted_only,
            curated_only=args.curated_only,
            split=args.split,
        )
    for line in result.lines():
        stdout.print(line)
    return 0


def cmd_stats(args) -> int:
    if args.today or args.day:
        return _day_stats(args)
    with open_project(args) as project:
        stats = project.desk.stats()
    if args.json:
        print_json(stats)
        return 0
    table = Table(title=f"Curalink project {stats['project']}", show_header=False)
    for key, value in stats.items():
        if key != "project":
            table.add_row(key.replace("_", " "), json.dumps(value) if isinstance(value, dict) else str(value))
    stdout.print(table)
    return 0


def _day_stats(args) -> int:
    """`stats --today` / `--day D`: the working day from the decision log's times (local time zone)."""
    from datetime import date

    from core.store.day_stats import day_stats

    try:
        day = date.fromisoformat(args.day) if args.day else None
    except ValueError as exc:
        raise CuralinkError(f"--day {args.day!r}: not a date (use YYYY-MM-DD)") from exc
    with open_project(args) as project:
        shown = day_stats(project, day, curator=args.curator).as_dict()
    if args.json:
        print_json(shown)
        return 0
    title = f"Curation on {shown['day']}" + (f" by {args.curator}" if args.curator else "")
    table = Table(title=title, show_header=False)
    rate = shown["top1_rate"]
    for label, value in (
        ("decisions (not undone)", shown["decisions"]),
        ("by action", ", ".join(f"{k} {v}" for k, v in sorted(shown["by_action"].items())) or "-"),
        ("active minutes (pauses over 5 min left out)", shown["active_minutes"]),
        ("decisions per active hour", shown["decisions_per_hour"] if shown["decisions_per_hour"] else "-"),
        ("top suggestion accepted", "-" if rate is None else f"{rate:.1%} ({shown['top1_accepts']})"),
        ("first / last", f"{shown['first_at'] or '-'} / {shown['last_at'] or '-'}"),
    ):
        table.add_row(label, str(value))
    stdout.print(table)
    return 0


def cmd_demo(args) -> int:
    from app.demo import run_demo

    return run_demo(
        Path(args.out) if args.out else None,
        fresh=args.fresh,
        console=stdout,
        train_seconds=args.train_seconds,
    )


def register(commands) -> None:
    """Add this module's commands to the `curalink` parser."""
    init = commands.add_parser("init", help="create a project folder")
    init.add_argument("dir", type=output_folder())
    init.set_defaults(handler=cmd_init)

    kb = commands.add_parser("kb", help="knowledge bases").add_subparsers(dest="kb_command", required=True)
    kb_import = kb.add_parser("import", help="import a vocabulary")
    kb_import.add_argument("file", type=input_path())
    kb_import.add_argument(
        "--format", required=True, choices=["mesh-xml", "mesh-tsv", "umls-rrf", "ctd", "medic", "obo", "tsv"]
    )
    kb_import.add_argument(
        "--tree-numbers",
        metavar="FILE",
        type=input_path("file"),
        help="mesh-tsv: a MeSH tree-number table (mesh_id, mesh_name, mesh_tree_number) that types descriptors",
    )
    kb_import.add_argument(
        "--actions",
        metavar="FILE",
        type=input_path("file"),
        help="mesh-tsv: MeSH pharmacological actions (DescriptorUI ... PharmActionName); a record with one is a chemical",
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
    kb_search_commands.register_search(kb)

    corpus = commands.add_parser("corpus", help="annotated corpora").add_subparsers(
        dest="corpus_command", required=True
    )
    corpus_import = corpus.add_parser("import", help="import documents")
    corpus_import.add_argument("file", type=input_path())
    corpus_import.add_argument("--format", required=True, metavar="{" + ",".join(CORPUS_FORMATS) + "}")
    corpus_import.add_argument("--split", choices=["train", "dev", "test"])
    corpus_import.add_argument(
        "--on-duplicate",
        default="skip",
        choices=["skip", "update", "error"],
        help="a document already in the project (imported before): skip it (default), replace it, or stop",
    )
    corpus_import.add_argument(
        "--on-invalid",
        default="error",
        choices=["error", "skip"],
        help="items of the file that cannot be read (an annotation not at its offsets, a malformed line): "
        "list them all and import nothing (error, default), or import the rest and write a report of "
        "each skipped item next to the project's logs (skip)",
    )
    corpus_import.set_defaults(handler=cmd_corpus_import)
    fetch_commands.register_fetch(corpus)

    export = commands.add_parser(
        "export",
        help="export the annotated corpus",
        description=EXPORT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    export.add_argument("--format", required=True, metavar="{" + ",".join(EXPORT_FORMATS) + "}")
    export.add_argument("--out", required=True, type=output_path())
    export.add_argument(
        "--accepted-only",
        action="store_true",
        help="only mentions a curator accepted or corrected, in only the documents that have one",
    )
    export.add_argument(
        "--curated-only",
        action="store_true",
        help="only documents with at least one decided mention (each with all its mentions)",
    )
    export.add_argument("--split", choices=["train", "dev", "test"], help="only documents of this split")
    export.set_defaults(handler=cmd_export)

    stats = commands.add_parser("stats", help="what the project holds")
    stats.add_argument("--json", action="store_true")
    stats.add_argument("--today", action="store_true", help="today's curation: decisions, rate, top-1 share")
    stats.add_argument("--day", type=day(), help="that day's curation (YYYY-MM-DD, local time)")
    stats.add_argument("--curator", help="with --today / --day: one curator's decisions only")
    stats.set_defaults(handler=cmd_stats)

    demo = commands.add_parser("demo", help="build the bundled demo project, link it, print a summary")
    demo.add_argument("--out", type=output_folder(), help="where to build it (default: the user data folder)")
    demo.add_argument("--fresh", action="store_true", help="rebuild even if it exists")
    demo.add_argument("--train-seconds", type=number(0, above=True), default=60.0, help="retriever training budget")
    demo.set_defaults(handler=cmd_demo)
