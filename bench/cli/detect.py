"""`curalink -p DIR bench detect`: mentions/s and acc@1 of the linkers on identical gold mentions;
with `--detectors`, the detectors side by side per type, end to end, with their speed."""

from __future__ import annotations

from rich.table import Table

from app.console import cancellable, open_project, print_json, progress_bar, stdout

DEFAULT_DOCUMENTS = 30


def cmd_bench_detect(args) -> int:
    from bench.detect import bench_detect

    if args.detectors:
        return _bench_detectors(args)

    with (
        open_project(args) as project,
        cancellable() as cancel,
        progress_bar("detect benchmark", quiet=args.json) as bar,
    ):
        result = bench_detect(
            project,
            split=args.split,
            documents=args.documents,
            candidates=args.candidates,
            progress=bar,
            cancel=cancel,
        )
    if args.json:
        print_json(result)
        return 0
    table = Table(
        "linker",
        "mentions/s",
        "acc@1",
        "x one-mention DE",
        title=f"linking {result['mentions']} gold mentions",
    )
    for row in result["linkers"]:
        table.add_row(
            row["name"],
            f"{row['mentions_per_s']:.1f}",
            "-" if row["acc@1"] is None else f"{row['acc@1']:.2f}",
            f"{row['speedup_vs_one_mention']:.2f}",
        )
    stdout.print(table)
    return 0


def _bench_detectors(args) -> int:
    from bench.detectors import bench_detectors

    with (
        open_project(args) as project,
        cancellable() as cancel,
        progress_bar("detectors benchmark", quiet=args.json) as bar,
    ):
        result = bench_detectors(
            project,
            split=args.split,
            candidates=args.candidates,
            documents=args.documents if args.documents != DEFAULT_DOCUMENTS else None,
            progress=bar,
            cancel=cancel,
        )
    if args.json:
        print_json(result)
        return 0
    table = Table(
        "detector",
        "type",
        "gold",
        "span recall",
        "span P",
        "span R",
        "span F1",
        "e2e P",
        "e2e R",
        "e2e F1",
        "abstracts/s",
        title=f"detection on {result['split']} ({result['documents']} documents, {result['gold_mentions']} "
        f"gold mentions of {', '.join(result['types'])}; linker {result['linker']}; load "
        f"{result['load_average'][0]} on {result['cpus']} CPUs)",
    )
    for row in result["detectors"]:
        blocks = [("all", None)] + [(t, row["types"].get(t)) for t in result["types"]]
        for kind, block in blocks:
            if kind == "all":
                table.add_row(
                    row["name"],
                    "all",
                    str(result["gold_mentions"]),
                    f"{row['strict']['recall']:.2f}",
                    f"{row['strict']['precision']:.2f}",
                    f"{row['strict']['recall']:.2f}",
                    f"{row['strict']['f1']:.2f}",
                    f"{row['end_to_end_strict']['precision']:.2f}",
                    f"{row['end_to_end_strict']['recall']:.2f}",
                    f"{row['end_to_end_strict']['f1']:.2f}",
                    f"{row['abstracts_per_s']}",
                )
            elif block is not None:
                table.add_row(
                    "",
                    kind,
                    str(block["gold"]),
                    f"{block['span_recall']:.2f}",
                    f"{block['strict']['precision']:.2f}",
                    f"{block['strict']['recall']:.2f}",
                    f"{block['strict']['f1']:.2f}",
                    f"{block['end_to_end_strict']['precision']:.2f}",
                    f"{block['end_to_end_strict']['recall']:.2f}",
                    f"{block['end_to_end_strict']['f1']:.2f}",
                    "",
                )
    stdout.print(table)
    errors = Table("detector", "type", "missed", "by cause", "found / gold by form", title="missed spans")
    for name, per_type in result["errors"].items():
        for kind, block in sorted(per_type.items()):
            causes = ", ".join(f"{cause} {n}" for cause, n in block["causes"].items() if n)
            forms = ", ".join(f"{form} {c['found']}/{c['gold']}" for form, c in block["forms"].items())
            errors.add_row(name, kind, str(block["missed"]), causes, forms)
    stdout.print(errors)
    stdout.print(f"link --detect uses: {result['detector_in_force']}")
    return 0


def register_bench(bench) -> None:
    parser = bench.add_parser(
        "detect",
        help="mentions/s and acc@1 on identical gold mentions: collective linking, ResCNN, one-mention "
        "dual encoder, pair cross-encoder (CPU)",
    )
    parser.add_argument("--split", choices=["train", "dev", "test"], default="test")
    parser.add_argument(
        "--documents",
        type=int,
        default=DEFAULT_DOCUMENTS,
        help="the first N documents of the split (default 30)",
    )
    parser.add_argument(
        "--candidates", type=int, default=16, help="retriever candidates the cross-encoder scores"
    )
    parser.add_argument(
        "--detectors",
        action="store_true",
        help="instead: dictionary, span model, tagger and the detector in force per type, end to end, "
        "with abstracts/s and missed spans by cause (every document of the split unless --documents)",
    )
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(handler=cmd_bench_detect)
