"""`curalink -p DIR bench desk-opened`: did the desk store anything on a document never opened?"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from app.console import open_project, print_json, stdout
from core.errors import CuralinkError


def cmd_bench_desk_opened(args) -> int:
    from bench.desk_opened import check_opened

    try:
        since = datetime.fromisoformat(args.since) if args.since else None
    except ValueError as exc:
        raise CuralinkError(f"--since {args.since!r}: not an ISO date and time ({exc})") from exc
    with open_project(args) as project:
        log = Path(args.log) if args.log else project.path / "logs" / "curalink.log"
        result = check_opened(project, log, since=since)
    if args.json:
        print_json(result)
    else:
        stdout.print(
            f"since {result['since']}: {result['opened']} documents opened ({result['opens']} opens); "
            f"{result['key_decisions']} decisions by keys on {result['decided_by_keys']} documents, "
            f"{result['marked_done']} marked done; {result['multi_document_decisions']} decisions by "
            f"multi-document steps on {result['decided_by_multi_document_steps']} documents"
        )
        for row in result["unopened"]:
            stdout.print(
                f"  never opened: {row['document']} ({row['decisions']} decisions"
                + (", marked done" if row["done_mark"] else "")
                + ")"
            )
        stdout.print("nothing stored on an unopened document" if not result["unopened"] else "")
    return 1 if result["unopened"] else 0


def register_bench(bench) -> None:
    """`curalink bench desk-opened`."""
    parser = bench.add_parser(
        "desk-opened",
        help="documents with decisions or done marks that the desk's log never shows opened (-p project)",
    )
    parser.add_argument("--log", help="the desk's log (default: the project's logs/curalink.log)")
    parser.add_argument(
        "--since", help="ISO time to start from (default: the log's first opened document)"
    )
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(handler=cmd_bench_desk_opened)
