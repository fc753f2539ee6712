"""`curalink bench cross-encoder-feature`: the compact cross-encoder as a ranker feature on NCBI-disease,
with and without it (issue 25, item 7). Logic: bench/cross_feature.py."""

from __future__ import annotations

import json
from pathlib import Path

from app.console import cancellable, print_json, progress_bar, shared_data, stdout
from core.atomic_files import write_text_atomic
from core.errors import CuralinkError


def cmd_bench_cross_feature(args) -> int:
    from bench.cross_feature import render_markdown, run, save_inputs

    data = shared_data(args)
    if args.save_candidates:
        if not args.retriever:
            raise CuralinkError("--save-candidates needs --retriever DIR (a trained ResCNN folder)")
        with progress_bar("saving candidates", quiet=args.json) as bar:
            result = save_inputs(data, args.retriever, args.save_candidates, progress=bar)
    elif args.candidates:
        with (
            cancellable() as cancel,
            progress_bar("cross-encoder as a ranker feature", quiet=args.json) as bar,
        ):
            result = run(
                data,
                args.candidates,
                base_model=args.base_model,
                device=args.device,
                max_epochs=args.max_epochs,
                patience=args.patience,
                max_seconds=args.max_seconds,
                learning_rate=args.lr,
                limit=args.limit,
                cross_fit=args.cross_fit,
                progress=bar,
                cancel=cancel,
            )
    else:
        raise CuralinkError("pass --save-candidates FILE --retriever DIR, or --candidates FILE")
    if args.out:
        write_text_atomic(Path(args.out), json.dumps(result, indent=2))
    if args.json:
        print_json(result)
    elif "rows" in result:
        stdout.print(render_markdown(result), markup=False)
        stdout.print(
            json.dumps({k: v for k, v in result["cross_encoder"].items() if k != "history"}), markup=False
        )
    else:
        stdout.print(json.dumps(result), markup=False)
    return 0


def register_bench(bench) -> None:
    """`curalink bench cross-encoder-feature`."""
    parser = bench.add_parser(
        "cross-encoder-feature",
        help="the compact cross-encoder as a ranker feature (NCBI-disease, with vs without)",
    )
    parser.add_argument("--data", help="shared data folder (default ../shared/data)")
    parser.add_argument("--save-candidates", help="step 1: write the ResCNN's candidates to this file")
    parser.add_argument("--retriever", help="the ResCNN folder step 1 retrieves with")
    parser.add_argument(
        "--candidates", help="step 2: a candidate file from step 1 (no index or faiss needed)"
    )
    parser.add_argument(
        "--base-model", help="a local BERT-family folder (default: packaged all-MiniLM-L6-v2)"
    )
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    parser.add_argument("--max-epochs", type=int, default=16, help="at most this many epochs (default 16)")
    parser.add_argument("--patience", type=int, default=3, help="epochs without a dev acc@1 gain (default 3)")
    parser.add_argument("--max-seconds", type=float, help="optional training time cap (rows it cuts say so)")
    parser.add_argument("--lr", type=float, help="learning rate (default: the trainer's)")
    parser.add_argument(
        "--limit", type=int, help="first N abstracts of each split: a smoke run, not a figure"
    )
    parser.add_argument(
        "--cross-fit",
        type=int,
        default=0,
        help="also a ranker on train with K-fold cross-encoder scores (K >= 2)",
    )
    parser.add_argument("--out", help="also write the JSON result to this file")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(handler=cmd_bench_cross_feature)
