"""Model commands: train, evaluate (retrain, promote and rollback: app/cli/lifecycle_commands.py; link:
app/cli/link_commands.py)."""

from __future__ import annotations

import time

from app.cli import detector_commands
from app.cli.arguments import MAX_CANDIDATES, input_path, number, whole
from app.console import cancellable, open_project, print_json, print_output, progress_bar, stdout
from core.jobs.models.retriever import DEFAULT_EPOCHS, DEFAULT_PATIENCE


def _training_report(metrics: dict, wall: float) -> str:
    """The end-of-training line: steps, epochs, why it stopped, training and wall-clock seconds."""
    best = metrics.get("best_epoch")
    stop = metrics.get("stopped_by", "epochs")
    reason = {"epochs": "the epoch limit", "max_epochs": "the epoch limit", "patience": "no dev gain"}.get(
        stop, "the time limit"
    )
    return (
        f"trained {metrics.get('steps', '?')} steps, {metrics.get('epochs', '?')} epochs; stopped by {reason}"
        + (f" (best dev epoch {best} kept)" if best is not None else "")
        + f"; {metrics.get('train_seconds', 0):.1f} s training, {wall:.1f} s wall"
    )


def cmd_train_retriever(args) -> int:
    from core.jobs.models.kinds import train

    started = time.perf_counter()
    with (
        open_project(args) as project,
        cancellable() as cancel,
        progress_bar("training the retriever") as bar,
    ):
        trained = train(
            project,
            "retriever",
            base_model=args.base_model,
            epochs=args.epochs,
            max_seconds=args.max_seconds,
            patience=args.patience,
            pooling=args.pooling,
            seed=args.seed,
            progress=bar,
            cancel=cancel,
        )
    stdout.print(f"retriever {trained.version} saved in {trained.path} and {trained.verdict}")
    stdout.print(_training_report(trained.metrics, time.perf_counter() - started))
    return 0


def cmd_train_reranker(args) -> int:
    from core.jobs.models.kinds import train

    started = time.perf_counter()
    with (
        open_project(args) as project,
        cancellable() as cancel,
        progress_bar("training the reranker") as bar,
    ):
        trained = train(
            project,
            "reranker",
            packing=args.packing,
            base_model=args.base_model,
            max_seconds=args.max_seconds,
            max_epochs=args.max_epochs,
            patience=args.patience,
            candidates=args.candidates,
            device=args.device,
            progress=bar,
            cancel=cancel,
        )
    stdout.print(f"reranker {trained.version} saved in {trained.path} and {trained.verdict}")
    stdout.print(_training_report(trained.metrics, time.perf_counter() - started))
    return 0


def cmd_train_ranker(args) -> int:
    from core.jobs.models.kinds import train

    with open_project(args) as project, cancellable() as cancel, progress_bar("training the ranker") as bar:
        outcome = train(
            project,
            "ranker",
            candidates=args.candidates,
            use_cross_encoder=args.with_reranker,
            scorer=args.scorer,
            device=args.device,
            progress=bar,
            cancel=cancel,
        )
    stdout.print(outcome.message)
    if outcome.trained:
        stdout.print(_ranker_report(outcome.metrics))
    return 0


def _ranker_report(metrics: dict) -> str:
    """What the ranker learnt from, in a sentence (not the metrics dictionary)."""
    return (
        f"trained on {metrics.get('mentions', 0):,} mentions in {metrics.get('documents', 0):,} documents; "
        f"the gold concept was among the {metrics.get('candidates', '?')} candidates for "
        f"{metrics.get('gold_among_candidates', 0):,} of them; {metrics.get('train_seconds', 0):.1f} s"
    )


def cmd_evaluate_ranker(args) -> int:
    from core.jobs.models.kinds import evaluate

    with open_project(args) as project, cancellable() as cancel:
        result = evaluate(
            project, "ranker", split=args.split, candidates=args.candidates, device=args.device, cancel=cancel
        )
    if args.json:
        print_json(result)
        return 0
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
    print_output(flat, False, f"ranker on {args.split}")
    return 0


def cmd_evaluate_reranker(args) -> int:
    from core.jobs.models.kinds import evaluate

    with open_project(args) as project, cancellable() as cancel:
        result = evaluate(
            project,
            "reranker",
            split=args.split,
            packing=args.packing,
            candidates=args.candidates,
            device=args.device,
            cancel=cancel,
        )
    print_output(result, args.json, f"reranker on {args.split}")
    return 0


def cmd_evaluate_retriever(args) -> int:
    from core.jobs.models.kinds import evaluate

    with open_project(args) as project:
        result = evaluate(project, "retriever", split=args.split, with_train_strings=args.with_train_strings)
    print_output(result, args.json, f"retriever on {args.split}")
    return 0


def register(commands) -> None:
    """Add this module's commands to the `curalink` parser."""
    train = commands.add_parser("train", help="train a model").add_subparsers(
        dest="train_command", required=True
    )
    train_retriever = train.add_parser(
        "retriever", help="train a ResCNN retriever (KB synonyms + gold + curator links)"
    )
    train_retriever.add_argument(
        "--base-model",
        type=input_path("folder"),
        help="a local BERT-family folder (default: packaged all-MiniLM-L6-v2)",
    )
    train_retriever.add_argument(
        "--epochs",
        type=whole(1),
        default=DEFAULT_EPOCHS,
        help=f"at most this many epochs (default {DEFAULT_EPOCHS})",
    )
    train_retriever.add_argument(
        "--patience",
        type=whole(0),
        default=DEFAULT_PATIENCE,
        help=f"stop after this many epochs without a held-out recall@20 gain (acc@1 breaks a tie), keeping "
        f"the best (default {DEFAULT_PATIENCE}; held out: the dev split, else a tenth of train; 0: no early "
        "stopping, train on all)",
    )
    train_retriever.add_argument(
        "--max-seconds", type=number(0, above=True), default=None, help="optional time limit (default: none)"
    )
    train_retriever.add_argument("--pooling", choices=["max", "mean", "attention"], default="max")
    train_retriever.add_argument("--seed", type=whole(), default=13)
    train_retriever.set_defaults(handler=cmd_train_retriever)

    train_reranker = train.add_parser(
        "reranker", help="train a packed cross-encoder on the retriever's candidates"
    )
    train_reranker.add_argument(
        "--packing", choices=["pair", "mention", "sentence", "document", "compact"], default="compact"
    )
    train_reranker.add_argument(
        "--base-model",
        type=input_path("folder"),
        help="a local BERT-family folder (default: packaged all-MiniLM-L6-v2)",
    )
    train_reranker.add_argument(
        "--max-epochs", type=whole(1), default=16, help="at most this many epochs (default 16)"
    )
    train_reranker.add_argument(
        "--patience",
        type=whole(0),
        default=3,
        help="stop after this many dev checks without a gain (default 3)",
    )
    train_reranker.add_argument(
        "--max-seconds", type=number(0, above=True), default=None, help="optional time limit (default: none)"
    )
    train_reranker.add_argument("--candidates", type=whole(1, MAX_CANDIDATES), default=16)
    train_reranker.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    train_reranker.set_defaults(handler=cmd_train_reranker)

    train_ranker = train.add_parser(
        "ranker", help="fit the learned ranker on gold and curator decisions (seconds, CPU)"
    )
    train_ranker.add_argument(
        "--candidates", type=whole(1, MAX_CANDIDATES), default=20, help="retriever candidates per mention"
    )
    train_ranker.add_argument(
        "--with-reranker",
        action="store_true",
        help="use the cross-encoder in force as a feature (it then runs before the ranker when linking)",
    )
    train_ranker.add_argument(
        "--scorer", choices=["logistic", "lightgbm"], default="logistic", help="lightgbm: boosted trees"
    )
    train_ranker.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    train_ranker.set_defaults(handler=cmd_train_ranker)
    detector_commands.register_train(train)

    evaluate = commands.add_parser("evaluate", help="measure a model on a split").add_subparsers(
        dest="evaluate_command", required=True
    )
    detector_commands.register_evaluate(evaluate)

    evaluate_retriever = evaluate.add_parser(
        "retriever", help="acc@1/5/10, recall@20/64 of the active retriever"
    )
    evaluate_retriever.add_argument("--split", choices=["train", "dev", "test"], default="test")
    evaluate_retriever.add_argument(
        "--with-train-strings",
        action="store_true",
        help="add train+dev gold mention strings as synonyms (reference protocol)",
    )
    evaluate_retriever.add_argument("--json", action="store_true")
    evaluate_retriever.set_defaults(handler=cmd_evaluate_retriever)

    evaluate_reranker = evaluate.add_parser("reranker", help="acc@1 of retriever + reranker (pure and fused)")
    evaluate_reranker.add_argument("--split", choices=["train", "dev", "test"], default="test")
    evaluate_reranker.add_argument(
        "--packing", choices=["pair", "mention", "sentence", "document", "compact"]
    )
    evaluate_reranker.add_argument("--candidates", type=whole(1, MAX_CANDIDATES), default=16)
    evaluate_reranker.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    evaluate_reranker.add_argument("--json", action="store_true")
    evaluate_reranker.set_defaults(handler=cmd_evaluate_reranker)

    evaluate_ranker = evaluate.add_parser(
        "ranker", help="acc@1/5, recall@20 without and with the ranker; calibration of its probabilities"
    )
    evaluate_ranker.add_argument("--split", choices=["train", "dev", "test"], default="test")
    evaluate_ranker.add_argument("--candidates", type=whole(1, MAX_CANDIDATES), default=20)
    evaluate_ranker.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    evaluate_ranker.add_argument("--json", action="store_true")
    evaluate_ranker.set_defaults(handler=cmd_evaluate_ranker)
