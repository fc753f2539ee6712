"""`curalink -p DIR synonyms list | remove | restore | learning`: what the linker learnt from curators
(core.jobs.curation.learnt), as the desk's Curate ▸ Learnt from curators… shows it.

`remove CONCEPT STRING` vetoes one learnt synonym (the decisions stay; one step of the curator's undo
history, so `curalink undo` brings it back) and takes it out of the store now; `learning on|off` is the
project's switch for learning from decisions (every curator of the project works under it)."""

from __future__ import annotations

from rich.table import Table

from app.console import open_project, print_json, stdout


def cmd_list(args) -> int:
    from core.jobs.curation import learnt

    with open_project(args) as project:
        rows = learnt.learnt_synonyms(project)
        on = learnt.learning_on(project)
    if args.json:
        print_json(
            {
                "learning": on,
                "synonyms": [
                    {
                        "string": r.string,
                        "concept": r.concept_id,
                        "name": r.concept_name,
                        "action": r.action,
                        "mention": r.mention_id,
                        "document": r.document,
                        "curator": r.curator,
                        "decided_at": r.decided_at.isoformat() if r.decided_at else None,
                        "decisions": r.decisions,
                        "same_text": r.same_text,
                        "removed": r.removed,
                        "pending": r.pending,
                        "unsupported": r.unsupported,
                    }
                    for r in rows
                ],
            }
        )
        return 0
    if not on:
        stdout.print("learning from decisions is off for this project (`synonyms learning on` turns it on)")
    if not rows:
        stdout.print("no synonyms learnt from curators")
        return 0
    table = Table("string", "concept", "decision", "curator", "decisions", "same text", "state")
    for r in rows:
        table.add_row(
            r.string,
            f"{r.concept_id} {r.concept_name}",
            f"{r.action} {r.mention_id} in {r.document}" if r.action else "(no decision stands)",
            r.curator or ("(no name)" if r.action else ""),
            str(r.decisions),
            str(r.same_text),
            r.state,
        )
    stdout.print(table)
    return 0


def cmd_veto(args) -> int:
    from core.jobs.curation import learnt

    operation = learnt.remove_learnt if args.action == "remove" else learnt.restore_learnt
    with open_project(args) as project:
        changes = operation(project, args.concept, args.string, curator=args.curator)
        pruned = learnt.prune_store(project) if args.action == "remove" else 0
    if args.json:
        print_json({"label": changes.label, "mentions": sorted(changes.relearn), "names_removed": pruned})
    else:
        stdout.print(
            f"{changes.label} ({len(changes.relearn)} decision(s) behind it; `curalink undo` takes it back)"
        )
    return 0


def cmd_learning(args) -> int:
    from core.jobs.curation import learnt

    with open_project(args) as project:
        if args.state != "status":
            learnt.set_learning(project, args.state == "on")
        on = learnt.learning_on(project)
    if args.json:
        print_json({"learning": on})
    else:
        stdout.print(f"learning from decisions: {'on' if on else 'off'}")
        if args.state == "off":
            stdout.print("synonyms learnt so far are withdrawn when the models are next loaded")
    return 0


def register(commands) -> None:
    parser = commands.add_parser(
        "synonyms", help="synonyms the linker learnt from curators: list, remove, restore"
    )
    actions = parser.add_subparsers(dest="action", required=True)
    listing = actions.add_parser(
        "list", help="every learnt synonym, the decision behind it, removed ones too"
    )
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=cmd_list)
    for name, text in (
        ("remove", "stop one learnt synonym (the decisions stay; `curalink undo` takes it back)"),
        ("restore", "allow a removed synonym again"),
    ):
        veto = actions.add_parser(name, help=text)
        veto.add_argument("concept", help="the concept id")
        veto.add_argument("string", help="the learnt string")
        veto.add_argument("--curator", default="", help="whose undo history records it")
        veto.add_argument("--json", action="store_true")
        veto.set_defaults(handler=cmd_veto)
    learning = actions.add_parser("learning", help="turn learning from decisions on or off for the project")
    learning.add_argument("state", choices=["on", "off", "status"])
    learning.add_argument("--json", action="store_true")
    learning.set_defaults(handler=cmd_learning)
