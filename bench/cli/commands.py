"""Benchmark commands: `curalink bench import|retriever|retriever-accuracy|pipeline|routing|reranker|
learning|faults`; the others are registered from their own modules in bench/cli/."""

from __future__ import annotations

import json
from pathlib import Path

from rich.table import Table

from app.console import cancellable, print_json, print_output, progress_bar, shared_data, stdout
from bench.cli import (
    batch,
    cross_feature,
    desk,
    desk_opened,
    detect,
    index,
    inputs,
    kb_search,
    link_memory,
    loop,
    missed_spans,
    quality,
    spelling,
)
from bench.faults import SECTIONS as FAULT_SECTIONS
from core.errors import CuralinkError


def cmd_bench_import(args) -> int:
    from bench.imports import bench_import

    with progress_bar("benchmark", quiet=args.json) as bar:
        result = bench_import(
            data_dir=Path(args.data) if args.data else None, umls_rows=args.umls_rows, progress=bar
        )
    if args.json:
        print_json(result)
    else:
        table = Table("what", "seconds", "peak MB", "target", "result", title="import benchmark")
        for row in result["rows"]:
            measured = row["seconds"] is not None
            table.add_row(
                row["what"],
                f"{row['seconds']:.2f}" if measured else "-",
                f"{row['peak_mb']:.0f}" if measured else "-",
                row["target"],
                row["status"] + (f": {row['reason']}" if row.get("reason") else ""),
            )
        stdout.print(table)
    return 0


def cmd_bench_routing(args) -> int:
    from bench.routing import bench_routing

    data = shared_data(args)
    with progress_bar("routing benchmark", quiet=args.json) as bar:
        result = bench_routing(data, Path(args.model) if args.model else None, progress=bar)
    if args.json:
        print_json(result)
        return 0
    stdout.print(f"{result['kb']}; {result['mentions']} NCBI-disease test mentions, k = {result['k']}")
    for row in result["rows"]:
        stdout.print("  " + ", ".join(f"{key} {value}" for key, value in row.items()))
    return 0


def cmd_bench_reranker(args) -> int:
    from bench.rerank import render_markdown, run_benchmark
    from core.rerank.packing import PACKING_LEVELS

    data = shared_data(args)
    with cancellable() as cancel, progress_bar("reranker benchmark", quiet=args.json) as bar:
        result = run_benchmark(
            data / "ncbi-disease",
            data / "vocab" / "medic_06Jul2012.txt",
            quick=args.quick,
            retriever=args.retriever or "tfidf",
            save_candidates_to=args.save_candidates,
            base_model=args.base_model,
            packings=args.packing or PACKING_LEVELS,
            candidate_counts=args.candidates or (8, 16),
            speed_docs=args.test_docs,
            dev_docs=args.dev_docs,
            train_seconds=args.train_seconds,
            max_epochs=args.max_epochs,
            learning_rate=args.lr,
            batch_tokens=args.batch_tokens,
            max_batch_tokens=args.max_batch_tokens,
            timing_repeats=args.timing_repeats,
            model=args.model,
            progress=bar,
            cancel=cancel,
        )
    if args.json:
        print_json(result)
    else:
        stdout.print(render_markdown(result), markup=False)
    return 0


def cmd_bench_learning(args) -> int:
    from bench.learning import bench_learning

    data = shared_data(args)
    out = Path(args.out)
    options = {"pool": 60, "step": 20, "eval_documents": 80} if args.quick else {}
    if (args.epochs is not None and args.epochs < 1) or (
        args.max_seconds is not None and args.max_seconds <= 0
    ):
        raise CuralinkError("--epochs must be at least 1 and --max-seconds above 0")
    if args.epochs is not None:
        options["epochs_per_retrain"] = args.epochs
    with cancellable() as cancel, progress_bar("learning-curve benchmark", quiet=args.json) as bar:
        result = bench_learning(
            data, out, seconds_per_retrain=args.max_seconds, progress=bar, cancel=cancel, **options
        )
    if args.json:
        print_json(result)
    else:
        stdout.print(json.dumps(result, indent=2, default=str), markup=False)
        stdout.print(f"curves written to {out}", markup=False)
    return 0


def cmd_bench_retriever_accuracy(args) -> int:
    from bench.ncbi_retrieval import load_ncbi_inputs, ncbi_table, train_ncbi_rescnn
    from core.retrieve.rescnn import RescnnConfig
    from core.retrieve.train import TrainOptions

    data = shared_data(args)
    kb, train, test = load_ncbi_inputs(data)
    result: dict = {}
    model = Path(args.model) if args.model else None
    if model is None:
        if not args.out:
            raise CuralinkError("pass --model DIR to evaluate a trained ResCNN, or --out DIR to train one")
        options = TrainOptions(
            kb_names_per_epoch=args.kb_names_per_epoch,
            pair_repeats=2,
            batch_size=args.batch_size,
            hard_negative_every=args.hard_negatives_every,
            device=args.device,
        )
        config = RescnnConfig(**({"base_model": args.base_model} if args.base_model else {}))
        with cancellable() as cancel, progress_bar("training ResCNN on NCBI + MEDIC", quiet=args.json) as bar:
            trained = train_ncbi_rescnn(
                kb,
                [] if args.synonyms_only else train,
                args.out,
                config=config,
                options=options,
                epochs=args.epochs,
                max_seconds=args.train_seconds,
                init_from=args.init_from,
                progress=bar,
                cancel=cancel,
            )
        result["training"] = {k: v for k, v in trained.metrics.items() if k != "history"}
        model = Path(args.out)
    if not args.skip_eval:
        from core.retrieve.rescnn_retriever import RescnnRetriever  # faiss: not needed to train only

        retrievers: dict = {"rescnn": RescnnRetriever.load(model)}
        if args.baselines:
            from core.retrieve.biencoder import BiEncoderRetriever
            from core.retrieve.exact import ExactMatchRetriever
            from core.retrieve.tfidf import TfidfRetriever

            retrievers.update(
                {"exact": ExactMatchRetriever(), "tfidf": TfidfRetriever(), "biencoder": BiEncoderRetriever()}
            )
        with cancellable() as cancel, progress_bar("evaluating on NCBI test", quiet=args.json) as bar:
            result["table"] = ncbi_table(kb, train, test, retrievers, progress=bar, cancel=cancel)
    print_output(result, args.json, "NCBI-disease test vs MEDIC")
    return 0


def cmd_bench_retriever(args) -> int:
    from bench.ncbi_retrieval import load_ncbi_inputs
    from bench.retrieval import bench_retriever

    data = shared_data(args)
    from core.retrieve.query_plan import query_strings

    kb, _, test = load_ncbi_inputs(data)
    mentions = query_strings(test)  # the queries the linker sends, abbreviations expanded, parts split
    with cancellable() as cancel, progress_bar("retriever benchmark", quiet=args.json) as bar:
        result = bench_retriever(
            kb, mentions, quick=args.quick, model_dir=args.model, progress=bar, cancel=cancel
        )
    if args.json:
        print_json(result)
    else:
        stdout.print(json.dumps(result, indent=2, default=str), markup=False)
    return 0


def cmd_bench_pipeline(args) -> int:
    from bench.pipeline import bench_pipeline

    data = shared_data(args)
    with cancellable() as cancel, progress_bar("pipeline benchmark", quiet=args.json) as bar:
        result = bench_pipeline(data, train_seconds=args.train_seconds, progress=bar, cancel=cancel)
    print_output(result, args.json, "import + train + link NCBI-disease test against MEDIC")
    return 0


def cmd_bench_faults(args) -> int:
    from bench.faults import SECTIONS, run_faults
    from bench.faults.report import render_markdown

    sections = tuple(args.section) if args.section else SECTIONS
    with cancellable() as cancel, progress_bar("fault harness", quiet=args.json) as bar:
        result = run_faults(
            Path(args.work),
            sections=sections,
            trials=args.trials,
            train_seconds=args.train_seconds,
            contention_seconds=args.contention_seconds,
            limit=args.limit,
            seed=args.seed,
            progress=bar,
            cancel=cancel,
        )
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2, default=str), encoding="utf-8")
    if args.json:
        print_json(result)
    else:
        stdout.print(render_markdown(result), markup=False)
    return 0


def register(bench) -> None:
    """Add every benchmark to the `curalink bench` parser's subcommands."""
    detect.register_bench(bench)
    missed_spans.register_bench(bench)  # missed spans by cause (issue 30, item 6)
    link_memory.register_bench(bench)  # peak memory of link --detect (issue 30)
    bench_import = bench.add_parser("import", help="corpus and KB import speed")
    bench_import.add_argument("--data", help="shared data folder (default ../shared/data)")
    bench_import.add_argument("--umls-rows", type=int, default=1_000_000)
    bench_import.add_argument("--json", action="store_true")
    bench_import.set_defaults(handler=cmd_bench_import)
    inputs.register_bench(bench)  # bad-inputs, fuzz, pubmed
    kb_search.register_bench(bench)  # kb-search
    loop.register_bench(bench)  # loop
    spelling.register_bench(bench)  # spelling variants through the linker (issue 31 item 6)
    desk.register_bench(bench)  # desk speed on the real window (issue 12)
    desk_opened.register_bench(bench)  # decisions on documents the desk never opened (issue 31)
    batch.register_bench(bench)  # link-batch throughput (issue 15)
    batch.register_bench_manifest(bench)  # manifest cost per shard at 100 and 10,000 shards (issue 33)
    index.register_bench(bench)  # a UMLS-size name index (issue 15, item 4)
    bench_retriever = bench.add_parser(
        "retriever", help="ResCNN vs bi-encoder vs TF-IDF speed, index choice, 1M scale"
    )
    bench_retriever.add_argument("--data", help="shared data folder (default ../shared/data)")
    bench_retriever.add_argument("--quick", action="store_true", help="1-2 minutes instead of ~11")
    bench_retriever.add_argument(
        "--model", help="a trained ResCNN folder (speed does not depend on the weights)"
    )
    bench_retriever.add_argument("--json", action="store_true")
    bench_retriever.set_defaults(handler=cmd_bench_retriever)

    bench_accuracy = bench.add_parser(
        "retriever-accuracy", help="train ResCNN on NCBI train+dev + MEDIC; acc@k vs baselines on test"
    )
    bench_accuracy.add_argument("--data", help="shared data folder (default ../shared/data)")
    bench_accuracy.add_argument("--out", help="train a fresh ResCNN into this folder")
    bench_accuracy.add_argument("--model", help="evaluate this trained ResCNN folder instead")
    bench_accuracy.add_argument("--base-model", help="BERT-family folder for the embeddings")
    bench_accuracy.add_argument("--train-seconds", type=float, default=600.0)
    bench_accuracy.add_argument("--epochs", type=int, default=10)
    bench_accuracy.add_argument("--batch-size", type=int, default=128)
    bench_accuracy.add_argument("--kb-names-per-epoch", type=int, default=6000)
    bench_accuracy.add_argument("--hard-negatives-every", type=int, default=0, help="epochs; 0 = off")
    bench_accuracy.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    bench_accuracy.add_argument(
        "--synonyms-only", action="store_true", help="train on MEDIC synonyms alone (no NCBI mentions)"
    )
    bench_accuracy.add_argument("--init-from", help="continue training this saved ResCNN folder")
    bench_accuracy.add_argument("--baselines", action="store_true", help="also exact, TF-IDF, bi-encoder")
    bench_accuracy.add_argument("--skip-eval", action="store_true", help="train only (e.g. on a GPU box)")
    bench_accuracy.add_argument("--json", action="store_true")
    bench_accuracy.set_defaults(handler=cmd_bench_retriever_accuracy)

    bench_pipeline = bench.add_parser(
        "pipeline", help="import, train, index and link NCBI-disease test end to end"
    )
    bench_pipeline.add_argument("--data", help="shared data folder (default ../shared/data)")
    bench_pipeline.add_argument("--train-seconds", type=float, default=120.0)
    bench_pipeline.add_argument("--json", action="store_true")
    bench_pipeline.set_defaults(handler=cmd_bench_pipeline)

    bench_routing = bench.add_parser(
        "routing", help="type routing: over-fetch and filter vs a per-route index (NCBI-disease vs MeSH)"
    )
    bench_routing.add_argument("--data", help="shared data folder (default ../shared/data)")
    bench_routing.add_argument("--model", help="also a trained ResCNN folder")
    bench_routing.add_argument("--json", action="store_true")
    bench_routing.set_defaults(handler=cmd_bench_routing)

    bench_reranker = bench.add_parser(
        "reranker", help="packing levels: accuracy, speed, token bound (NCBI-disease)"
    )
    bench_reranker.add_argument("--data", help="shared data folder (default ../shared/data)")
    bench_reranker.add_argument("--quick", action="store_true", help="a few minutes instead of ~25")
    bench_reranker.add_argument(
        "--retriever", help="'tfidf' (default), a trained ResCNN folder, or a candidate file (.json)"
    )
    bench_reranker.add_argument(
        "--save-candidates", metavar="FILE", help="also write the retrieved candidates to FILE (.json)"
    )
    bench_reranker.add_argument("--base-model", help="BERT-family folder (default: packaged MiniLM)")
    bench_reranker.add_argument(
        "--packing",
        action="append",
        choices=["pair", "mention", "sentence", "document", "compact"],
        help="repeat to choose levels (default: all five)",
    )
    bench_reranker.add_argument(
        "--candidates", type=int, action="append", help="C, repeatable (default: 8 and 16)"
    )
    bench_reranker.add_argument(
        "--test-docs", type=int, help="test abstracts measured (default 20; quick 10)"
    )
    bench_reranker.add_argument("--dev-docs", type=int, help="dev abstracts for early stopping (default 6)")
    bench_reranker.add_argument(
        "--train-seconds",
        type=float,
        help="optional wall-clock cap per row (none by default: rows train to the stopping rule; a row "
        "it cuts short is marked untrained); 0 measures speed only",
    )
    bench_reranker.add_argument(
        "--max-epochs",
        type=int,
        help="epochs per row at most (default 16; quick 2); dev patience 3 stops earlier",
    )
    bench_reranker.add_argument(
        "--model", help="a trained cross-encoder folder, measured as it is (no training; its packing level)"
    )
    bench_reranker.add_argument("--timing-repeats", type=int, default=1, help="median of N timed passes")
    bench_reranker.add_argument("--lr", type=float, default=3e-4, help="learning rate")
    bench_reranker.add_argument(
        "--batch-tokens", type=int, help="training batch (default 1,024 CPU, 16,384 GPU)"
    )
    bench_reranker.add_argument(
        "--max-batch-tokens", type=int, help="scoring batch in tokens (default 2,048 CPU, 65,536 GPU)"
    )
    bench_reranker.add_argument("--json", action="store_true")
    bench_reranker.set_defaults(handler=cmd_bench_reranker)

    quality.register_bench(bench)  # quality: main table, per type, across corpora (issue 25)
    cross_feature.register_bench(bench)  # the cross-encoder as a ranker feature (issue 25, item 7)

    bench_learning = bench.add_parser(
        "learning", help="uncertainty-first vs random curation order (NCBI-disease)"
    )
    bench_learning.add_argument("--data", help="shared data folder (default ../shared/data)")
    bench_learning.add_argument("--out", default="bench-out/learning", help="where the curves (JSON, PNG) go")
    bench_learning.add_argument(
        "--quick", action="store_true", help="60 documents in steps of 20, 80 evaluated"
    )
    bench_learning.add_argument(
        "--epochs", type=int, help="training epochs per retrain (default 2; the zero-shot model: 1)"
    )
    bench_learning.add_argument(
        "--max-seconds",
        type=float,
        help="optional cap on each training run's seconds (off by default: runs are bounded by epochs)",
    )
    bench_learning.add_argument("--json", action="store_true")
    bench_learning.set_defaults(handler=cmd_bench_learning)

    bench_faults = bench.add_parser(
        "faults", help="kill -9, full disk, lock contention, hostile projects, bad files (issue 11)"
    )
    bench_faults.add_argument(
        "--section",
        action="append",
        choices=list(FAULT_SECTIONS),
        help="repeat to choose sections (default: all)",
    )
    bench_faults.add_argument(
        "--trials",
        type=int,
        default=9,
        help="kill -9 trials per operation (6 of them); rounds of each issue-24 section",
    )
    bench_faults.add_argument("--train-seconds", type=float, default=2.0, help="training budget in trials")
    bench_faults.add_argument("--contention-seconds", type=float, default=25.0)
    bench_faults.add_argument("--limit", type=int, help="at most this many hostile variants and bad files")
    bench_faults.add_argument("--seed", type=int, default=11)
    bench_faults.add_argument(
        "--work", default="bench-out/faults", help="where the base project is kept between runs"
    )
    bench_faults.add_argument("--out", help="also write the raw results to this JSON file")
    bench_faults.add_argument("--json", action="store_true")
    bench_faults.set_defaults(handler=cmd_bench_faults)
