"""`curalink -p DIR annotate TEXT [--document ID] [--type T] [--preview]`: every word-bounded occurrence of a
string without a mention becomes a mention, in one document or the whole project (core.jobs.curation.occurrences,
the desk's Ctrl+Shift+A); `--preview` only counts them; `curalink undo` takes the lot back in one step."""

from __future__ import annotations

from app.console import open_project, print_json, stdout


def cmd_annotate(args) -> int:
    from core.jobs.curation.occurrences import annotate_occurrences, preview_occurrences

    with open_project(args) as project:
        found = preview_occurrences(project, args.text, document=args.document)
        added: list[int] = []
        if not args.preview:
            changes = annotate_occurrences(
                project, args.text, document=args.document, type=args.type, curator=args.curator
            )
            added = sorted(changes.edited)
    if args.json:
        print_json(
            {
                "occurrences": len(found.spans),
                "documents": len(found.documents),
                "skipped": found.skipped,
                "spans": [list(span) for span in found.spans],
                "mentions": added,
            }
        )
    elif args.preview:
        stdout.print(f"“{args.text}”: {found.describe()}")
    else:
        stdout.print(f"annotated “{args.text}”: {found.describe()} (`curalink undo` takes them back)")
    return 0


def register(commands) -> None:
    parser = commands.add_parser(
        "annotate", help="a mention at every word-bounded occurrence of a string (one undo step)"
    )
    parser.add_argument("text", help="the string (any case; any white space between its words)")
    parser.add_argument("--document", help="only this document (external id); default: the whole project")
    parser.add_argument("--type", default="", help="the new mentions' type")
    parser.add_argument("--curator", default="", help="whose undo history records it")
    parser.add_argument("--preview", action="store_true", help="count the occurrences; add nothing")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(handler=cmd_annotate)
