"""`curalink bench loop`: the curation loop from raw text, measured (bench/loop.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.table import Table

from app.console import cancellable, print_json, progress_bar, shared_data, stdout


def _points(text: str) -> tuple[int | None, ...]:
    """'10,25,50,all' -> (10, 25, 50, None)."""
    try:
        points = tuple(None if p.strip() == "all" else int(p) for p in text.split(",") if p.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"points must be whole numbers or 'all', comma-separated: {text!r}") from None
    if not points or any(p is not None and p < 1 for p in points):
        raise argparse.ArgumentTypeError(f"points must be at least 1: {text!r}")
    return points


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def cmd_bench_loop(args) -> int:
    from bench.loop import bench_loop

    data = shared_data(args)
    out = Path(args.out)
    live = {"on": (True,), "off": (False,), "both": (True, False)}[args.live]
    with cancellable() as cancel, progress_bar("curation loop", quiet=args.json) as bar:
        summary = bench_loop(
            data,
            out,
            orders=args.orders.split(","),
            seeds=tuple(range(args.seeds)),
            live=live,
            points=args.points,
            pool_size=args.pool,
            held_out_split=args.held_out,
            held_out_size=args.held_out_size,
            kb_concepts=None if args.kb_concepts == 0 else args.kb_concepts,
            zero_shot_epochs=args.zero_shot_epochs,
            retrain_epochs=args.retrain_epochs,
            progress=bar,
            cancel=cancel,
        )
    if args.json:
        print_json(summary)
        return 0
    held = summary["held_out"]
    table = Table(
        "curve", "abstracts", "seeds", "e2e strict F1", "(range)", "keys / gold mention", "(range)",
        title=f"NCBI-disease {held['split']} ({held['abstracts']} abstracts, {held['gold']} gold), raw text",
    )
    for key, rows in summary["mean"].items():
        for row in rows:
            table.add_row(
                key, str(row["documents"]), str(row["seeds"]), f"{row['e2e_f1']:.2f}",
                "–".join(f"{v:.2f}" for v in row["e2e_f1_range"]), f"{row['keys_per_mention']:.3f}",
                "–".join(f"{v:.3f}" for v in row["keys_per_mention_range"]),
            )
    stdout.print(table)
    stdout.print(f"curves: {out / 'loop.json'}, {out / 'loop.png'}", markup=False)
    return 0


def register_bench(bench) -> None:
    """`curalink bench loop`."""
    parser = bench.add_parser("loop", help="a simulated curator on raw NCBI-disease abstracts: F1 and keys per mention as the models learn")
    parser.add_argument("--data", help="shared data folder (default ../shared/data)")
    parser.add_argument("--out", default="bench-out/loop", help="work folder; loop.json and loop.png go here")
    parser.add_argument("--orders", default="uncertainty,random", help="curation orders, comma-separated")
    parser.add_argument("--seeds", type=_positive, default=3, help="seeds per order (default 3)")
    parser.add_argument("--live", choices=("on", "off", "both"), default="on", help="live learning between retrains")
    parser.add_argument("--points", type=_points, default=(10, 25, 50, 100, 200, None), help="retrain after this many abstracts (default 10,25,50,100,200,all)")
    parser.add_argument("--pool", type=_positive, help="curate at most this many NCBI train abstracts (default all 592)")
    parser.add_argument("--held-out", choices=("dev", "test"), default="dev", help="held-out abstracts (choose on dev; test once)")
    parser.add_argument("--held-out-size", type=_positive, help="at most this many held-out abstracts")
    parser.add_argument("--kb-concepts", type=int, default=8000, help="MEDIC slice size (0: all of MEDIC)")
    parser.add_argument("--zero-shot-epochs", type=_positive, default=1)
    parser.add_argument("--retrain-epochs", type=_positive, default=4, help="the desk's retrain default")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(handler=cmd_bench_loop)
