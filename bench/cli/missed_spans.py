"""`curalink -p DIR bench missed-spans`: the gold spans a detector missed on a split, per type, by cause."""

from __future__ import annotations

from rich.table import Table

from app.console import cancellable, open_project, print_json, stdout


def cmd_bench_missed_spans(args) -> int:
    from bench.missed_spans import CAUSES, missed_spans

    with open_project(args) as project, cancellable() as cancel:
        result = missed_spans(
            project,
            split=args.split,
            detector=args.detector,
            detected_file=args.detected,
            detected_format=args.detected_format,
            types=set(args.type) if args.type else None,
            cancel=cancel,
        )
    if args.json:
        print_json(result)
        return 0
    table = Table(
        "type",
        "gold",
        "found",
        "missed",
        *CAUSES,
        title=f"missed spans on {result['split']} ({result['documents']} documents), detected by "
        f"{result['detected_by']}",
    )
    rows = [*result["types"].items(), ("all", result["all"])]
    for name, row in rows:
        missed = row["missed"] or 1
        table.add_row(
            name,
            str(row["gold"]),
            str(row["found"]),
            str(row["missed"]),
            *(f"{row['causes'][c]} ({100 * row['causes'][c] / missed:.0f} %)" for c in CAUSES),
        )
    stdout.print(table)
    if args.examples:
        for name, row in result["types"].items():
            for cause, texts in row["examples"].items():
                stdout.print(f"  {name}, {cause}: " + "; ".join(texts), markup=False)
    return 0


def register_bench(bench) -> None:
    parser = bench.add_parser(
        "missed-spans",
        help="the gold spans a detector missed on a split, per type, by cause (type confusion, coordination, "
        "boundary, abbreviation, gold id outside the KB, not in the lexicon)",
    )
    parser.add_argument("--split", choices=["train", "dev", "test"], default="dev", help="default dev")
    parser.add_argument(
        "--detector",
        choices=["in-force", "dictionary"],
        default="in-force",
        help="the detector link --detect uses (default), or the project's dictionary alone",
    )
    parser.add_argument(
        "--detected",
        metavar="FILE",
        help="read the detected mentions from this corpus file instead (any detector's output, same texts)",
    )
    parser.add_argument("--detected-format", help="its format (default: guessed)")
    parser.add_argument("--type", action="append", help="only gold mentions of this type (repeatable)")
    parser.add_argument("--examples", action="store_true", help="print a few missed texts per cause")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(handler=cmd_bench_missed_spans)
