"""`evaluate NAME`: one subcommand per registered model kind that has one (core.model_kinds; the tagger is
measured by `evaluate detect` with the detector), its options declared there. A kind's figures print as a
table of keys and values unless a view below shows them otherwise."""

from __future__ import annotations

from collections.abc import Callable

from rich.table import Table

from app.cli.kind_options import add_options, keywords
from app.console import cancellable, open_project, print_json, print_output, stdout
from core.jobs.models.kinds import KINDS, ModelKind


def evaluate_name(spec: ModelKind) -> str | None:
    """The kind's `evaluate` subcommand (None: it has none of its own)."""
    name = spec.commands.evaluate_name
    return None if name is None else name or spec.name


def cmd_evaluate(args) -> int:
    from core.jobs.models.kinds import evaluate

    spec = KINDS[args.evaluated_kind]
    options = keywords(args, spec.commands.evaluate_options)
    with open_project(args) as project, cancellable() as cancel:
        result = evaluate(project, spec.name, cancel=cancel, **options)
    if args.json:
        print_json(result)
        return 0
    VIEWS.get(spec.name, _table)(result, f"{spec.name} on {args.split}")
    return 0


def _table(result: dict, title: str) -> None:
    print_output(result, False, title)


def _ranker_view(result: dict, title: str) -> None:
    """The ranker's nested figures flattened: the orders with and without it, bulk accept in words."""
    flat = {}
    for key, value in result.items():
        if isinstance(value, dict):
            flat.update({f"{key}: {k}": v for k, v in value.items()})
        elif key == "bulk_accept":
            for row in value:
                flat[f"bulk accept p >= {row['threshold']}"] = (
                    f"{row['coverage']}% of mentions, {row['precision']}% right"
                )
        else:
            flat[key] = value
    print_output(flat, False, title)


def _detect_view(result: dict, _title: str) -> None:
    """Every detector's span and end-to-end figures, then per type."""
    table = Table(
        "detector",
        "span P",
        "span R",
        "span F1",
        "partial F1",
        "e2e strict F1",
        "e2e partial F1",
        title=f"mention detection on {result['split']} ({result['documents']} documents, "
        f"{result['gold_mentions']} gold mentions)",
    )
    for row in result["detectors"]:
        table.add_row(
            row["name"],
            f"{row['strict']['precision']:.2f}",
            f"{row['strict']['recall']:.2f}",
            f"{row['strict']['f1']:.2f}",
            f"{row['partial']['f1']:.2f}",
            f"{row['end_to_end_strict']['f1']:.2f}",
            f"{row['end_to_end_partial']['f1']:.2f}",
        )
    stdout.print(table)
    types = Table(
        "detector",
        "type",
        "gold",
        "detected",
        "span recall",
        "typed span F1",
        "e2e strict P",
        "e2e strict R",
        "e2e strict F1",
        title="per type (typed: a detected mention against the gold of its own type)",
    )
    for row in result["detectors"]:
        for mention_type, block in row["types"].items():
            types.add_row(
                row["name"],
                mention_type or "(none)",
                str(block["gold"]),
                str(block["detected"]),
                f"{block['span_recall']:.2f}",
                f"{block['strict']['f1']:.2f}",
                f"{block['end_to_end_strict']['precision']:.2f}",
                f"{block['end_to_end_strict']['recall']:.2f}",
                f"{block['end_to_end_strict']['f1']:.2f}",
            )
    stdout.print(types)
    stdout.print(f"link --detect uses: {result['detector']}")


VIEWS: dict[str, Callable[[dict, str], None]] = {"ranker": _ranker_view, "detector": _detect_view}


def add_evaluate_command(evaluate, spec: ModelKind) -> None:
    name = evaluate_name(spec)
    if name is None:
        return
    parser = evaluate.add_parser(name, help=spec.commands.evaluate_help)
    add_options(parser, spec.commands.evaluate_options)
    parser.set_defaults(handler=cmd_evaluate, evaluated_kind=spec.name)


def register(commands) -> None:
    """Add `evaluate NAME` for every registered kind that has one to the `curalink` parser."""
    evaluate = commands.add_parser("evaluate", help="measure a model on a split").add_subparsers(
        dest="evaluate_command", required=True
    )
    for spec in KINDS.values():
        add_evaluate_command(evaluate, spec)
