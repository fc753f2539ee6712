"""The `curalink` command: parses arguments, calls `core`, prints. The contract is in the README."""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402
from rich.text import Text  # noqa: E402

from app.console import cancellable, configure_logging, log_to_project, progress_bar, stderr  # noqa: E402
from core.errors import Cancelled, CuralinkError  # noqa: E402

log = logging.getLogger("curalink")
stdout = Console(soft_wrap=True)

EXIT_ERROR = 2
EXIT_CANCELLED = 130


def _print_json(payload: dict) -> None:
    sys.stdout.write(json.dumps(payload, ensure_ascii=False, default=str) + "\n")


def _open_project(args):
    from core.store import Project

    if not args.project:
        raise CuralinkError("this command needs a project: curalink -p DIR ...")
    project = Project.open(args.project)
    log_to_project(project.path)
    return project


# --- commands ------------------------------------------------------------------------------------


def cmd_init(args) -> int:
    from core.store import Project

    with Project.create(args.dir) as project:
        stdout.print(f"created Curalink project in {project.path}")
    return 0


def cmd_kb_import(args) -> int:
    from core.kb import load_kb, sniff_kb_format

    path = Path(args.file)
    if not path.exists():
        raise CuralinkError(f"{path}: no such file or folder")
    sniffed = sniff_kb_format(path)
    if sniffed is not None and sniffed != args.format:
        raise CuralinkError(f"{path}: looks like a {sniffed} file, not {args.format}; nothing was imported")
    options = {}
    if args.format == "umls-rrf":
        options = {"languages": set(args.language or ["ENG"]), "sources": set(args.sab) if args.sab else None}
    with (
        _open_project(args) as project,
        cancellable() as cancel,
        progress_bar(f"importing {path.name}") as bar,
    ):
        concepts = load_kb(path, args.format, progress=bar, cancel=cancel, **options)
        summary = project.import_concepts(
            concepts, source=str(path), fmt=args.format, progress=bar, cancel=cancel
        )
    stdout.print(
        f"{path}: {summary.added} concepts added, {summary.skipped} already present (their new names merged), "
        f"{summary.names} names added"
    )
    return 0


def cmd_corpus_import(args) -> int:
    from core.formats import read_corpus

    path = Path(args.file)
    if not path.exists():
        raise CuralinkError(f"{path}: no such file or folder")
    with (
        _open_project(args) as project,
        cancellable() as cancel,
        progress_bar(f"importing {path.name}") as bar,
    ):
        summary = project.import_documents(
            read_corpus(path, args.format),
            source=str(path),
            fmt=args.format,
            split=args.split or "",
            on_duplicate=args.on_duplicate,
            progress=bar,
            cancel=cancel,
        )
    stdout.print(
        f"{path}: {summary.added} documents ({summary.mentions} mentions) added"
        + (
            f", {summary.skipped} skipped as duplicates ({', '.join(summary.skipped_ids[:5])})"
            if summary.skipped
            else ""
        )
        + (f", {summary.updated} updated" if summary.updated else "")
    )
    return 0


def cmd_export(args) -> int:
    from core.formats import write_corpus
    from core.store.curation import curated_documents

    with _open_project(args) as project:
        documents = curated_documents(project, accepted_only=args.accepted_only, split=args.split)
        count = write_corpus(documents, Path(args.out), args.format)
    stdout.print(f"wrote {count} documents to {args.out} ({args.format})")
    return 0


def cmd_stats(args) -> int:
    with _open_project(args) as project:
        stats = project.stats()
    if args.json:
        _print_json(stats)
        return 0
    table = Table(title=f"Curalink project {stats['project']}", show_header=False)
    for key, value in stats.items():
        if key != "project":
            table.add_row(key.replace("_", " "), json.dumps(value) if isinstance(value, dict) else str(value))
    stdout.print(table)
    return 0


def cmd_demo(args) -> int:
    from app.demo import run_demo

    return run_demo(
        Path(args.out) if args.out else None,
        fresh=args.fresh,
        console=stdout,
        train_seconds=args.train_seconds,
    )


def cmd_bench_import(args) -> int:
    from core.evaluate.bench_import import bench_import

    with progress_bar("benchmark", quiet=args.json) as bar:
        result = bench_import(
            data_dir=Path(args.data) if args.data else None, umls_rows=args.umls_rows, progress=bar
        )
    if args.json:
        _print_json(result)
    else:
        table = Table("what", "seconds", "target", "peak MB", title="import benchmark")
        for row in result["rows"]:
            table.add_row(row["what"], f"{row['seconds']:.2f}", row["target"], f"{row.get('peak_mb', 0):.0f}")
        stdout.print(table)
    return 0


def cmd_train_retriever(args) -> int:
    from core.learn.jobs import train_retriever

    with (
        _open_project(args) as project,
        cancellable() as cancel,
        progress_bar("training the retriever") as bar,
    ):
        trained = train_retriever(
            project,
            base_model=args.base_model,
            epochs=args.epochs,
            max_seconds=args.max_seconds,
            pooling=args.pooling,
            seed=args.seed,
            progress=bar,
            cancel=cancel,
        )
    stdout.print(f"retriever {trained.version} saved in {trained.path} and made active ({trained.metrics})")
    return 0


def cmd_link(args) -> int:
    from core.pipeline import Linker, detect_into_project

    with _open_project(args) as project, cancellable() as cancel:
        kb = project.knowledge_base()
        if args.detect:
            from core.detect.dictionary import DictionaryDetector

            with progress_bar("tagging mentions") as bar:
                detector = DictionaryDetector.from_kb(kb)
                found = detect_into_project(project, detector, split=args.split, progress=bar, cancel=cancel)
            stdout.print(f"detected {found.added} new mentions in {found.documents} documents")
        with progress_bar("loading models") as bar:
            linker = Linker.for_project(
                project, kb=kb, device=args.device, candidates=args.candidates, progress=bar, cancel=cancel
            )
        with progress_bar("linking") as bar:
            summary = linker.link_project(project, split=args.split, progress=bar, cancel=cancel)
    stdout.print(
        f"linked {summary.mentions} mentions in {summary.documents} documents "
        f"({summary.mentions_per_s:.0f} mentions/s; {linker.device_description}); "
        f"{summary.suggestions} suggestions stored"
    )
    return 0


def cmd_evaluate_detect(args) -> int:
    from core.detect.dictionary import DictionaryDetector
    from core.evaluate.spans import span_scores

    with _open_project(args) as project:
        documents = list(project.documents(args.split))
        detector = DictionaryDetector.from_kb(project.knowledge_base())
        gold = [[m.span for m in d.mentions if m.origin in ("gold", "imported")] for d in documents]
        stripped = [d.with_mentions([]) for d in documents]
        predicted = [[m.span for m in found] for found in detector.detect(stripped)]
    result = {
        "detector": detector.name,
        "split": args.split,
        "documents": len(documents),
        **span_scores(gold, predicted),
    }
    _print_output(result, args.json, "mention detection")
    return 0


def _shared_data(args) -> Path:
    data = (
        Path(args.data)
        if getattr(args, "data", None)
        else Path(__file__).resolve().parents[1].parent / "shared" / "data"
    )
    if not (data / "ncbi-disease").is_dir():
        raise CuralinkError(
            f"{data}: benchmark data not found (pass --data DIR with ncbi-disease/ and vocab/)"
        )
    return data


def cmd_train_reranker(args) -> int:
    from core.rerank.project_jobs import train_reranker_for_project

    with (
        _open_project(args) as project,
        cancellable() as cancel,
        progress_bar("training the reranker") as bar,
    ):
        version, folder, metrics = train_reranker_for_project(
            project,
            packing=args.packing,
            base_model=args.base_model,
            max_seconds=args.max_seconds,
            candidates=args.candidates,
            device=args.device,
            progress=bar,
            cancel=cancel,
        )
    stdout.print(f"reranker {version} saved in {folder} and made active ({metrics})")
    return 0


def cmd_evaluate_reranker(args) -> int:
    from core.rerank.project_jobs import evaluate_reranker_for_project

    with _open_project(args) as project, cancellable() as cancel:
        result = evaluate_reranker_for_project(
            project,
            split=args.split,
            packing=args.packing,
            candidates=args.candidates,
            device=args.device,
            cancel=cancel,
        )
    _print_output(result, args.json, f"reranker on {args.split}")
    return 0


def cmd_retrain(args) -> int:
    from core.learn.retrain import retrain
    from core.pipeline import Linker

    kinds = tuple(args.kind) if args.kind else ("retriever", "reranker")
    with _open_project(args) as project, cancellable() as cancel, progress_bar("retraining") as bar:
        report = retrain(
            project,
            kinds=kinds,
            max_seconds=args.max_seconds,
            promote=args.promote,
            device=args.device,
            progress=bar,
            cancel=cancel,
        )
        if any(kind.promoted for kind in report.kinds.values()) and args.relink:
            Linker.for_project(project, device=args.device, cancel=cancel).link_project(
                project, progress=bar, cancel=cancel
            )
    if args.json:
        _print_json(report.to_json())
        return 0
    table = Table("model", "metric", "in force", "new", title="retraining on the held-out slice")
    for kind, metric, old, new in report.table():
        table.add_row(
            kind, metric, "-" if old is None else f"{old:.2f}", "-" if new is None else f"{new:.2f}"
        )
    stdout.print(table)
    for kind in report.kinds.values():
        verdict = "promoted" if kind.promoted else "kept as a candidate"
        stdout.print(f"{kind.kind} {kind.version}: {verdict} ({kind.reason}); {kind.seconds:.0f} s")
    return 0


def cmd_rollback(args) -> int:
    from core.learn.retrain import rollback

    with _open_project(args) as project:
        version = rollback(project, args.kind)
    stdout.print(f"{args.kind} {version} is in force again")
    return 0


def cmd_bench_reranker(args) -> int:
    from core.evaluate.bench_rerank import render_markdown, run_benchmark
    from core.rerank.packing import PACKING_LEVELS

    data = _shared_data(args)
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
            progress=bar,
            cancel=cancel,
        )
    if args.json:
        _print_json(result)
    else:
        stdout.print(render_markdown(result), markup=False)
    return 0


def cmd_bench_learning(args) -> int:
    from core.evaluate.bench_learning import bench_learning

    data = _shared_data(args)
    out = Path(args.out)
    options = {"pool": 60, "step": 20, "seconds_per_retrain": 8.0, "eval_documents": 80} if args.quick else {}
    with cancellable() as cancel, progress_bar("learning-curve benchmark", quiet=args.json) as bar:
        result = bench_learning(data, out, progress=bar, cancel=cancel, **options)
    if args.json:
        _print_json(result)
    else:
        stdout.print(json.dumps(result, indent=2, default=str), markup=False)
        stdout.print(f"curves written to {out}", markup=False)
    return 0


def cmd_bench_retriever_accuracy(args) -> int:
    from core.evaluate.ncbi_retrieval import load_ncbi_inputs, ncbi_table, train_ncbi_rescnn
    from core.retrieve.rescnn import RescnnConfig
    from core.retrieve.train import TrainOptions

    data = _shared_data(args)
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
    _print_output(result, args.json, "NCBI-disease test vs MEDIC")
    return 0


def cmd_evaluate_retriever(args) -> int:
    from core.evaluate.retrieval import evaluate_project_retriever

    with _open_project(args) as project:
        result = evaluate_project_retriever(project, args.split, with_train_strings=args.with_train_strings)
    _print_output(result, args.json, f"retriever on {args.split}")
    return 0


def cmd_bench_retriever(args) -> int:
    from core.evaluate.bench_retrieval import bench_retriever
    from core.evaluate.ncbi_retrieval import load_ncbi_inputs

    data = _shared_data(args)
    kb, _, test = load_ncbi_inputs(data)
    mentions = [m.text for d in test for m in d.mentions]
    with cancellable() as cancel, progress_bar("retriever benchmark", quiet=args.json) as bar:
        result = bench_retriever(
            kb, mentions, quick=args.quick, model_dir=args.model, progress=bar, cancel=cancel
        )
    if args.json:
        _print_json(result)
    else:
        stdout.print(json.dumps(result, indent=2, default=str), markup=False)
    return 0


def cmd_bench_pipeline(args) -> int:
    from core.evaluate.bench_pipeline import bench_pipeline

    data = _shared_data(args)
    with cancellable() as cancel, progress_bar("pipeline benchmark", quiet=args.json) as bar:
        result = bench_pipeline(data, train_seconds=args.train_seconds, progress=bar, cancel=cancel)
    _print_output(result, args.json, "import + train + link NCBI-disease test against MEDIC")
    return 0


def _print_output(result: dict, as_json: bool, title: str) -> None:
    if as_json:
        _print_json(result)
        return
    table = Table("metric", "value", title=title)
    for key, value in result.items():
        table.add_row(key, f"{value:.4f}" if isinstance(value, float) else str(value))
    stdout.print(table)


# --- argument parsing ----------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="curalink", description="Biomedical entity linking assistant.")
    parser.add_argument("-p", "--project", help="project folder")
    parser.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING or ERROR")
    commands = parser.add_subparsers(dest="command")

    init = commands.add_parser("init", help="create a project folder")
    init.add_argument("dir")
    init.set_defaults(handler=cmd_init)

    kb = commands.add_parser("kb", help="knowledge bases").add_subparsers(dest="kb_command", required=True)
    kb_import = kb.add_parser("import", help="import a vocabulary")
    kb_import.add_argument("file")
    kb_import.add_argument(
        "--format", required=True, choices=["mesh-xml", "umls-rrf", "ctd", "medic", "obo", "tsv"]
    )
    kb_import.add_argument("--language", action="append", default=None, help="UMLS: languages to keep (ENG)")
    kb_import.add_argument("--sab", action="append", help="UMLS: source vocabularies to keep (all)")
    kb_import.set_defaults(handler=cmd_kb_import)

    corpus = commands.add_parser("corpus", help="annotated corpora").add_subparsers(
        dest="corpus_command", required=True
    )
    corpus_import = corpus.add_parser("import", help="import documents")
    corpus_import.add_argument("file")
    corpus_import.add_argument(
        "--format", required=True, choices=["pubtator", "bioc-xml", "bioc-json", "brat", "jsonl", "text"]
    )
    corpus_import.add_argument("--split", choices=["train", "dev", "test"])
    corpus_import.add_argument(
        "--on-duplicate",
        default="skip",
        choices=["skip", "update", "error"],
        help="a document id already stored: skip it (default), replace it, or stop",
    )
    corpus_import.set_defaults(handler=cmd_corpus_import)

    train = commands.add_parser("train", help="train a model").add_subparsers(
        dest="train_command", required=True
    )
    train_retriever = train.add_parser(
        "retriever", help="train a ResCNN retriever (KB synonyms + gold + curator links)"
    )
    train_retriever.add_argument(
        "--base-model", help="a local BERT-family folder (default: packaged all-MiniLM-L6-v2)"
    )
    train_retriever.add_argument("--epochs", type=int, default=10)
    train_retriever.add_argument(
        "--max-seconds", type=float, default=None, help="stop training after this long"
    )
    train_retriever.add_argument("--pooling", choices=["max", "mean", "attention"], default="max")
    train_retriever.add_argument("--seed", type=int, default=13)
    train_retriever.set_defaults(handler=cmd_train_retriever)

    train_reranker = train.add_parser(
        "reranker", help="train a packed cross-encoder on the retriever's candidates"
    )
    train_reranker.add_argument(
        "--packing", choices=["pair", "mention", "sentence", "document", "compact"], default="compact"
    )
    train_reranker.add_argument(
        "--base-model", help="a local BERT-family folder (default: packaged all-MiniLM-L6-v2)"
    )
    train_reranker.add_argument("--max-seconds", type=float, default=600.0)
    train_reranker.add_argument("--candidates", type=int, default=16)
    train_reranker.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    train_reranker.set_defaults(handler=cmd_train_reranker)

    link = commands.add_parser("link", help="suggest concepts for every mention")
    link.add_argument("--split", choices=["train", "dev", "test"])
    link.add_argument("--detect", action="store_true", help="first tag new mentions with the KB dictionary")
    link.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    link.add_argument("--candidates", type=int, default=16)
    link.set_defaults(handler=cmd_link)

    evaluate = commands.add_parser("evaluate", help="measure a model on a split").add_subparsers(
        dest="evaluate_command", required=True
    )
    evaluate_detect = evaluate.add_parser(
        "detect", help="span P/R/F1 of the dictionary detector against gold"
    )
    evaluate_detect.add_argument("--split", choices=["train", "dev", "test"], default="test")
    evaluate_detect.add_argument("--json", action="store_true")
    evaluate_detect.set_defaults(handler=cmd_evaluate_detect)

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
    evaluate_reranker.add_argument("--candidates", type=int, default=16)
    evaluate_reranker.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    evaluate_reranker.add_argument("--json", action="store_true")
    evaluate_reranker.set_defaults(handler=cmd_evaluate_reranker)

    retrain = commands.add_parser("retrain", help="fine-tune the models from curator decisions")
    retrain.add_argument("--kind", action="append", choices=["retriever", "reranker"], help="default: both")
    retrain.add_argument("--max-seconds", type=float, default=240.0, help="training budget per model")
    retrain.add_argument("--promote", choices=["if-not-worse", "always", "never"], default="if-not-worse")
    retrain.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    retrain.add_argument("--no-relink", dest="relink", action="store_false", help="keep the old suggestions")
    retrain.add_argument("--json", action="store_true")
    retrain.set_defaults(handler=cmd_retrain)

    rollback = commands.add_parser("rollback", help="put the previous model version back in force")
    rollback.add_argument("kind", choices=["retriever", "reranker"])
    rollback.set_defaults(handler=cmd_rollback)

    export = commands.add_parser("export", help="export the annotated corpus")
    export.add_argument(
        "--format", required=True, choices=["pubtator", "bioc-xml", "bioc-json", "brat", "jsonl", "text"]
    )
    export.add_argument("--out", required=True)
    export.add_argument(
        "--accepted-only", action="store_true", help="only mentions a curator accepted or corrected"
    )
    export.add_argument("--split", choices=["train", "dev", "test"])
    export.set_defaults(handler=cmd_export)

    stats = commands.add_parser("stats", help="what the project holds")
    stats.add_argument("--json", action="store_true")
    stats.set_defaults(handler=cmd_stats)

    demo = commands.add_parser("demo", help="build the bundled demo project, link it, print a summary")
    demo.add_argument("--out", help="where to build it (default: the user data folder)")
    demo.add_argument("--fresh", action="store_true", help="rebuild even if it exists")
    demo.add_argument("--train-seconds", type=float, default=60.0, help="retriever training budget")
    demo.set_defaults(handler=cmd_demo)

    bench = commands.add_parser("bench", help="benchmarks").add_subparsers(
        dest="bench_command", required=True
    )
    bench_import = bench.add_parser("import", help="corpus and KB import speed")
    bench_import.add_argument("--data", help="shared data folder (default ../shared/data)")
    bench_import.add_argument("--umls-rows", type=int, default=1_000_000)
    bench_import.add_argument("--json", action="store_true")
    bench_import.set_defaults(handler=cmd_bench_import)
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
    bench_reranker.add_argument("--train-seconds", type=float, help="training budget per row (default 40)")
    bench_reranker.add_argument("--max-epochs", type=int, default=16)
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

    bench_learning = bench.add_parser(
        "learning", help="uncertainty-first vs random curation order (NCBI-disease)"
    )
    bench_learning.add_argument("--data", help="shared data folder (default ../shared/data)")
    bench_learning.add_argument("--out", default="bench-out/learning", help="where the curves (JSON, PNG) go")
    bench_learning.add_argument("--quick", action="store_true")
    bench_learning.add_argument("--json", action="store_true")
    bench_learning.set_defaults(handler=cmd_bench_learning)

    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging(args.log_level)
    if not getattr(args, "handler", None):
        if args.command is None and importlib.util.find_spec("app.gui.launch") is not None:
            from app.gui.launch import launch_gui

            return launch_gui(Path(args.project) if args.project else None)
        parser.print_help()
        return EXIT_ERROR
    try:
        return args.handler(args)
    except Cancelled:
        stderr.print("[yellow]cancelled: the project is as it was before this command[/yellow]")
        return EXIT_CANCELLED
    except KeyboardInterrupt:
        stderr.print("[yellow]aborted: the open transaction was rolled back[/yellow]")
        return EXIT_CANCELLED
    except CuralinkError as exc:
        stderr.print(Text("error: ", style="red") + Text(str(exc)))
        return EXIT_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
