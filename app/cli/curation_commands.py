"""`curalink -p DIR undo | redo | history --curator NAME`: the desk's Ctrl+Z, Ctrl+Shift+Z and its Edit menu,
over the same history in the project (core.jobs.curation.operations), so a script can take a step back too."""

from __future__ import annotations

from app.console import open_project, print_json, stdout

SHOWN_LABEL = 160
"""Characters of a step's label shown on its line: a stored label of 120 KB (a long mention text) took
the terminal's word wrapping a minute; --json gives every label whole."""


def shown(label: str) -> str:
    """The label, cut to `SHOWN_LABEL` characters with what was left out counted."""
    if len(label) <= SHOWN_LABEL:
        return label
    return f"{label[:SHOWN_LABEL]}… ({len(label):,} characters; --json shows it whole)"


def _history_payload(history) -> dict:
    return {
        "steps": list(history.labels),
        "done": history.done,
        "undo": history.undo_text,
        "redo": history.redo_text,
    }


def cmd_step(args) -> int:
    from core.jobs.curation import operations as curation

    operation = curation.undo if args.command == "undo" else curation.redo
    with open_project(args) as project:
        changes = operation(project, args.curator)
    if args.json:
        focus = changes.focus or ("", None)
        print_json(
            {
                "label": changes.label,
                "document": focus[0],
                "mention": focus[1],
                **_history_payload(changes.history),
            }
        )
    elif changes.label:
        done = {"undo": "undone", "redo": "redone"}[args.command]
        stdout.print(f"{done}: {shown(changes.label[len(args.command) + 1 :])}", markup=False, highlight=False)
    else:
        stdout.print(f"nothing to {args.command} for curator {args.curator or '(no name)'}")
    return 0


def cmd_history(args) -> int:
    from core.jobs.curation import operations as curation

    with open_project(args) as project:
        history = curation.history_of(project, args.curator)
    if args.json:
        print_json(_history_payload(history))
        return 0
    for number, label in enumerate(history.labels, start=1):
        mark = "  " if number <= history.done else "↷ "  # undone steps, which redo does again
        stdout.print(f"{mark}{number:>3}  {shown(label)}", markup=False, highlight=False)
    if not history.labels:
        stdout.print(f"no history for curator {args.curator or '(no name)'}")
    return 0


def register(commands) -> None:
    for name, text, handler in (
        (
            "undo",
            "undo the curator's newest step (a decision, a bulk accept, an edit, a note or mark)",
            cmd_step,
        ),
        ("redo", "do again the curator's step undone last", cmd_step),
        ("history", "the curator's undo history, oldest first (↷: undone, redo does it again)", cmd_history),
    ):
        parser = commands.add_parser(name, help=text)
        parser.add_argument("--curator", default="", help="whose history (the desk's curator name)")
        parser.add_argument("--json", action="store_true")
        parser.set_defaults(handler=handler)
    from app.cli import occurrence_commands, synonym_commands  # issue 23 items 4 and 12

    synonym_commands.register(commands)
    occurrence_commands.register(commands)
