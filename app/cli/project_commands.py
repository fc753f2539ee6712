"""Project commands: init, stats (what the project holds, a day's curation), the demo."""

from __future__ import annotations

import json
from pathlib import Path

from rich.table import Table

from app.cli.arguments import day, number, output_folder
from app.console import open_project, print_json, stdout
from core.errors import CuralinkError


def cmd_init(args) -> int:
    from core.store import Project

    with Project.create(args.dir) as project:
        stdout.print(f"created Curalink project in {project.path}")
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
