"""Model lifecycle commands: retrain from curator decisions, promote a version, roll back; each relinks."""

from __future__ import annotations

from rich.table import Table

from app.cli.arguments import number, whole
from app.console import cancellable, open_project, print_json, progress_bar, stderr, stdout
from core.jobs.models.kinds import KINDS


def cmd_retrain(args) -> int:
    from core.jobs.models.relinking import retrain_and_relink
    from core.jobs.models.retrain_plan import retrain_choice

    with open_project(args) as project, cancellable() as cancel, progress_bar("retraining") as bar:
        choice = retrain_choice(project, args.device, args.kind)
        if choice.note:
            (stderr if args.json else stdout).print(f"{choice.note} (--kind reranker trains it anyway)")
        outcome = retrain_and_relink(
            project,
            kinds=choice.kinds,
            max_seconds=args.max_seconds,
            epochs=args.epochs,
            promote=args.promote,
            relink=args.relink,
            device=args.device,
            progress=bar,
            cancel=cancel,
        )
    report, relinked = outcome.report, outcome.relinked
    if args.json:
        print_json(report.to_json())
        return 0
    table = Table("model", "metric", "in force", "new", title="retraining on the held-out slice")
    for kind, metric, old, new in report.table():
        table.add_row(
            kind, metric, "-" if old is None else f"{old:.2f}", "-" if new is None else f"{new:.2f}"
        )
    stdout.print(table)
    if report.curator_synonyms:
        stdout.print(f"{report.curator_synonyms} curator synonyms added to the knowledge base and name index")
    for kind in report.kinds.values():
        if not kind.version:  # left out with its reason (too few documents to learn from)
            stdout.print(f"{kind.kind}: {kind.reason}")
            continue
        verdict = "promoted" if kind.promoted else "kept as a candidate"
        stdout.print(f"{kind.kind} {kind.version}: {verdict} ({kind.reason}); {kind.seconds:.0f} s")
    _print_relinked(relinked)
    return 0


def _print_relinked(summary) -> None:
    if summary is not None:
        stdout.print(
            f"relinked {summary.mentions} unreviewed mentions in {summary.documents} documents "
            "with the models now in force (reviewed mentions keep their decisions)"
        )


def cmd_promote(args) -> int:
    from core.jobs.models.relinking import promote_and_relink

    with open_project(args) as project, cancellable() as cancel, progress_bar("relinking") as bar:
        changed, relinked = promote_and_relink(
            project,
            {args.kind: args.version},
            relink=args.relink,
            device=args.device,
            progress=bar,
            cancel=cancel,
        )
    stdout.print(f"{args.kind} {args.version} is in force" + ("" if changed else " (it already was)"))
    _print_relinked(relinked)
    return 0


def cmd_rollback(args) -> int:
    from core.jobs.models.relinking import relink_after_change
    from core.jobs.models.retrain import rollback

    with open_project(args) as project, cancellable() as cancel, progress_bar("relinking") as bar:
        version = rollback(project, args.kind)
        relinked = (
            relink_after_change(project, device=args.device, progress=bar, cancel=cancel)
            if args.relink
            else None
        )
    stdout.print(f"{args.kind} {version} is in force again")
    _print_relinked(relinked)
    return 0


def register(commands) -> None:
    """Add this module's commands to the `curalink` parser."""
    retrain = commands.add_parser("retrain", help="fine-tune the models from curator decisions")
    retrain.add_argument(
        "--kind",
        action="append",
        choices=list(KINDS),
        help="default: retriever, ranker (reranker with a GPU), the tagger, and the span model when one is in force",
    )
    retrain.add_argument(
        "--max-seconds",
        type=number(0, above=True),
        default=None,
        help="optional time limit per model (default: none; --epochs bounds training)",
    )
    retrain.add_argument(
        "--epochs",
        type=whole(1),
        default=4,
        help="epochs of fine-tuning from the version in force (default 4)",
    )
    retrain.add_argument("--promote", choices=["if-not-worse", "always", "never"], default="if-not-worse")
    retrain.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    retrain.add_argument("--no-relink", dest="relink", action="store_false", help="keep the old suggestions")
    retrain.add_argument("--json", action="store_true")
    retrain.set_defaults(handler=cmd_retrain)

    rollback = commands.add_parser("rollback", help="put the previous model version back in force")
    rollback.add_argument("kind", choices=list(KINDS))
    promote = commands.add_parser(
        "promote", help="put a registered model version in force and relink the unreviewed mentions"
    )
    promote.add_argument("kind", choices=list(KINDS))
    promote.add_argument("version", help="e.g. v3 (named by the retrain report)")
    for parser in (rollback, promote):
        parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
        parser.add_argument(
            "--no-relink", dest="relink", action="store_false", help="keep the old models' suggestions"
        )
    rollback.set_defaults(handler=cmd_rollback)
    promote.set_defaults(handler=cmd_promote)
