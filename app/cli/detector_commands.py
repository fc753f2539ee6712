"""Detector commands: `train detector` (the span model), `train tagger` (the CRF tagger), `evaluate
detect` (registered by the modules that own `train` and `evaluate`; `bench detect` is in
bench/cli/detect.py)."""

from __future__ import annotations

import time

from rich.table import Table

from app.cli.arguments import MAX_CANDIDATES, input_path, number, whole
from app.console import cancellable, open_project, print_json, progress_bar, stdout


def cmd_train_detector(args) -> int:
    from core.jobs.models.detector import DetectorTrainingOptions
    from core.jobs.models.kinds import train

    options = DetectorTrainingOptions()
    if args.epochs is not None:
        options.max_epochs = args.epochs
    if args.patience is not None:
        options.patience = args.patience
    if args.trainable_layers is not None:
        options.trainable_layers = args.trainable_layers or None
    started = time.perf_counter()
    with open_project(args) as project, cancellable() as cancel, progress_bar("training the detector") as bar:
        trained = train(
            project,
            "detector",
            base_model=args.base_model,
            options=options,
            device=args.device,
            against_dictionary=args.promote == "if-better",
            progress=bar,
            cancel=cancel,
        )
    metrics = trained.metrics
    stdout.print(f"detector {trained.version} saved in {trained.path} and {trained.verdict}")
    stdout.print(
        f"trained {metrics['steps']} steps, {metrics['epochs']} epochs on {metrics['segments']} segments "
        f"({metrics['device']}); stopped by {metrics['stopped_by']} (best dev epoch {metrics['best_epoch']} "
        f"kept: {metrics['dev']}); {metrics['train_seconds']:.0f} s training, "
        f"{time.perf_counter() - started:.0f} s wall"
    )
    return 0


def cmd_train_tagger(args) -> int:
    from core.jobs.models.kinds import train

    started = time.perf_counter()
    with open_project(args) as project, cancellable() as cancel, progress_bar("training the tagger") as bar:
        trained = train(
            project,
            "tagger",
            promote="never" if args.promote == "never" else "always",
            c1=args.c1,
            c2=args.c2,
            max_iterations=args.iterations,
            folds=args.folds,
            device=args.device,
            rule="always" if args.promote == "always" else "if-not-worse",
            progress=bar,
            cancel=cancel,
        )
    metrics = trained.metrics
    stdout.print(f"tagger {trained.version} saved in {trained.path} and {trained.verdict}")
    for name, scores in metrics.get("held_out_scores", {}).items():
        by_type = ", ".join(f"{kind} {score:.2f}" for kind, score in scores.items() if kind != "all")
        stdout.print(f"  held out, {name}: {scores['all']:.2f} ({by_type})")
    stdout.print(
        f"{metrics['sequences']} documents, {metrics['tokens']} tokens, {metrics['iterations']} iterations; "
        f"{metrics['train_seconds']:.0f} s training, {time.perf_counter() - started:.0f} s wall"
    )
    return 0


def cmd_evaluate_detect(args) -> int:
    from core.jobs.models.kinds import evaluate

    with open_project(args) as project, cancellable() as cancel:
        result = evaluate(
            project,
            "detector",
            split=args.split,
            device=args.device,
            candidates=args.candidates,
            requested_type=args.type,
            cancel=cancel,
        )
    if args.json:
        print_json(result)
        return 0
    table = Table(
        "detector",
        "span P",
        "span R",
        "span F1",
        "partial F1",
        "e2e strict F1",
        "e2e partial F1",
        title=f"mention detection on {args.split} ({result['documents']} documents, "
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
    return 0


def register_train(train) -> None:
    parser = train.add_parser(
        "detector", help="train the span model (collective dual encoder) on gold and curator-checked spans"
    )
    parser.add_argument(
        "--base-model", type=input_path("folder"), help="a local BERT-family folder (default: packaged all-MiniLM-L6-v2)"
    )
    parser.add_argument("--epochs", type=whole(1), default=None, help="at most this many epochs (default 4)")
    parser.add_argument(
        "--patience",
        type=whole(0),
        default=None,
        help="stop after this many epochs without a dev gain (default 2)",
    )
    parser.add_argument(
        "--trainable-layers",
        type=whole(0),
        default=None,
        help="fine-tune only the top N encoder layers (default: the CPU recipe; 0: all)",
    )
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    parser.add_argument(
        "--promote",
        choices=["if-better", "always"],
        default="if-better",
        help="if-better (default): in force only if link --detect links the held-out documents at least as "
        "well end to end with it as with the dictionary alone; always: in force regardless",
    )
    parser.set_defaults(handler=cmd_train_detector)

    tagger = train.add_parser(
        "tagger",
        help="train the CRF tagger on gold and curator-checked spans, with the project's dictionary as "
        "features; the held-out documents decide, per type, whether it goes in force",
    )
    tagger.add_argument("--c1", type=number(0), default=0.05, help="L1 penalty (default 0.05)")
    tagger.add_argument("--c2", type=number(0), default=0.01, help="L2 penalty (default 0.01)")
    tagger.add_argument("--iterations", type=whole(1, 100_000), default=150, help="at most this many L-BFGS iterations")
    tagger.add_argument(
        "--folds", type=whole(1, 50), default=4, help="dictionaries that leave out each fold's annotations (default 4)"
    )
    tagger.add_argument("--device", choices=["auto", "cpu", "cuda"], default="cpu", help="for the linker")
    tagger.add_argument(
        "--promote",
        choices=["if-better", "always", "never"],
        default="if-better",
        help="if-better (default): in force for the types where link --detect links the held-out documents "
        "at least as well end to end with it as with the detector in force; always; never",
    )
    tagger.set_defaults(handler=cmd_train_tagger)


def register_evaluate(evaluate) -> None:
    parser = evaluate.add_parser(
        "detect",
        help="span and end-to-end P/R/F1, overall and per type, of what `link --detect` would store on the "
        "split's raw text (and of each detector's own concepts; neleval's definitions)",
    )
    parser.add_argument("--split", choices=["train", "dev", "test"], default="test")
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default="cpu")
    parser.add_argument("--candidates", type=whole(1, MAX_CANDIDATES), default=16, help="as link --candidates (default 16)")
    parser.add_argument("--type", help="as link --detect --type: tag only this mention type")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(handler=cmd_evaluate_detect)
