"""`curalink bench quality`: the NCBI-disease quality table, the per-type table (BioRED vs MeSH) and the
cross-corpus rows (NCBI-disease <-> BioRED vs MEDIC) with the calibration comparison (issues 13, 25)."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from app.console import cancellable, print_json, progress_bar, shared_data, stdout
from core.errors import CuralinkError


def cmd_bench_quality(args) -> int:
    from bench.quality import plot_bulk_accept, run_quality

    data = shared_data(args)
    if not args.retriever and not args.out:
        raise CuralinkError("pass --retriever DIR (a trained ResCNN folder) or --out DIR to train one")
    result: dict = {}
    with cancellable() as cancel, progress_bar("quality table", quiet=args.json) as bar:
        if not args.skip_main:
            result = run_quality(
                data,
                retriever_dir=args.retriever,
                train_out=args.out,
                epochs=args.epochs,
                biencoder=not args.no_biencoder,
                cross_encoder_dir=args.cross_encoder,
                ranker_dir=args.ranker,
                device=args.device,
                progress=bar,
                cancel=cancel,
            )
        if not args.skip_cross:
            result.update(_types_and_corpora(args, data, bar, cancel))
    if args.plot and "calibration" in result:
        result["plot"] = str(plot_bulk_accept(result["calibration"], args.plot))
    if args.json:
        print_json(result)
        return 0
    if "rows" in result:
        _print_main_quality(result, args)
    if "per_type" in result:
        _print_types_and_corpora(result)
    return 0


def _types_and_corpora(args, data: Path, bar, cancel) -> dict:
    """The per-type table (BioRED vs MeSH) and the cross-corpus rows (NCBI-disease <-> BioRED, MEDIC)."""
    from bench.quality_cross import run_cross_corpus, run_per_type

    retriever = args.retriever or args.out
    return {
        "per_type": run_per_type(
            data,
            args.mesh_out or args.mesh_retriever or retriever,
            final=args.final,
            train_epochs=args.mesh_epochs if args.mesh_out else 0,
            progress=bar,
            cancel=cancel,
        ),
        "cross_corpus": run_cross_corpus(data, retriever, final=args.final, progress=bar, cancel=cancel),
    }


def _print_main_quality(result: dict, args) -> None:
    columns = ("acc@1", "acc@5", "recall@20", "pool", "mentions_per_s", "train_s")
    table = Table("row", "dictionary", *columns, title=f"NCBI-disease test vs MEDIC ({result['rescnn']})")
    for row, settings in result["rows"].items():
        for setting, metrics in settings.items():
            table.add_row(row, setting, *("-" if metrics[c] is None else str(metrics[c]) for c in columns))
    stdout.print(table)
    for setting, figures in result["calibration"].items():
        bulk = "; ".join(
            f"p>={b['threshold']}: coverage {b['coverage']} %, precision {b['precision']} %"
            for b in figures["bulk_accept"]
        )
        stdout.print(f"ranker calibration, {setting}: top-1 ECE {figures['top1_ece']}; {bulk}", markup=False)
    stdout.print(f"ranker: {result['ranker']}; cross-encoder: {result['cross_encoder']}", markup=False)
    if args.plot:
        stdout.print(f"bulk accept curve written to {result['plot']}", markup=False)


_FIGURES = ("mentions", "in_kb", "acc@1", "recall@20", "top1_ece", "threshold", "promised_precision")
_REALISED = ("realised_precision", "coverage", "promise_gap")
_OLD_RULE = (
    "old_threshold",
    "old_promised_precision",
    "old_realised_precision",
    "old_coverage",
    "old_promise_gap",
)


def _cell(value) -> str:
    return "-" if value is None else str(value)


def _print_types_and_corpora(result: dict) -> None:
    per_type, cross = result["per_type"], result["cross_corpus"]
    if "skipped" in per_type:
        stdout.print(f"per-type table skipped: {per_type['skipped']}", markup=False)
    else:
        table = Table("set", "type", *_FIGURES, *_REALISED, title=f"per type: BioRED vs {per_type['kb']}")
        for row in per_type["rows"]:
            table.add_row(row["set"], row["type"], *(_cell(row[c]) for c in _FIGURES + _REALISED))
        stdout.print(table)
        stdout.print(
            f"{per_type['split']}; retriever: {per_type['retriever']}; ranker: {per_type['ranker']}",
            markup=False,
        )
    if "skipped" in cross:
        stdout.print(f"cross-corpus rows skipped: {cross['skipped']}", markup=False)
        return
    table = Table(
        "trained on", "measured on", *_FIGURES, *_REALISED, title=f"across corpora vs {cross['kb']}"
    )
    for row in cross["rows"]:
        table.add_row(row["trained_on"], row["measured_on"], *(_cell(row[c]) for c in _FIGURES + _REALISED))
    stdout.print(table)
    table = Table(
        "trained on", "measured on", *_OLD_RULE, title="the same rankers, promise by the rule before issue 25"
    )
    for row in cross["rows"]:
        table.add_row(row["trained_on"], row["measured_on"], *(_cell(row.get(c)) for c in _OLD_RULE))
    stdout.print(table)
    sets = next(iter(cross["comparison"].values()), {})
    table = Table("calibration", *sets, title="top-1 ECE by calibration shape (development sets)")
    for method, figures in cross["comparison"].items():
        table.add_row(
            method, *(f"{figures[s]['top1_ece']} ({_cell(figures[s]['promise_gap'])})" for s in sets)
        )
    stdout.print(table)
    stdout.print(
        f"calibration chosen by the rule: {cross['chosen']}; in force: {cross['in_force']} "
        "(cells: top-1 ECE (realised - promised bulk-accept precision, points))",
        markup=False,
    )


def register_bench(bench) -> None:
    """`curalink bench quality`."""
    quality = bench.add_parser(
        "quality", help="one table: exact, TF-IDF, MiniLM, ResCNN, union, ranker (+ cross-encoder)"
    )
    quality.add_argument("--data", help="shared data folder (default ../shared/data)")
    quality.add_argument("--retriever", help="a trained ResCNN folder to measure (no training)")
    quality.add_argument(
        "--out", help="train a ResCNN into this folder first (fixed --epochs, no time limit)"
    )
    quality.add_argument("--epochs", type=int, default=10, help="ResCNN training epochs (with --out)")
    quality.add_argument("--ranker", help="a trained ranker folder to apply instead of fitting one")
    quality.add_argument("--cross-encoder", help="a trained cross-encoder folder: adds its row")
    quality.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    quality.add_argument("--no-biencoder", action="store_true", help="leave out the MiniLM row (slow)")
    quality.add_argument("--plot", help="write the bulk accept precision/coverage curve to this PNG")
    quality.add_argument(
        "--mesh-retriever", help="ResCNN folder for the per-type BioRED vs MeSH table (default: --retriever)"
    )
    quality.add_argument(
        "--mesh-out", help="train a ResCNN on the BioRED train slice + MeSH names into this folder first"
    )
    quality.add_argument("--mesh-epochs", type=int, default=3, help="its epochs (with --mesh-out)")
    quality.add_argument(
        "--final",
        action="store_true",
        help="also measure the test splits (final figures, never for choosing)",
    )
    quality.add_argument(
        "--skip-main", action="store_true", help="only the per-type table and the cross-corpus rows"
    )
    quality.add_argument(
        "--skip-cross", action="store_true", help="leave out the per-type table and the cross-corpus rows"
    )
    quality.add_argument("--json", action="store_true")
    quality.set_defaults(handler=cmd_bench_quality)
