"""Link commands: `curalink link [--detect]` (a project's documents, through core.jobs.linking.link as
the desk links), `curalink link-batch` (whole collections of shards) and `curalink -p DIR import-linked`
(a link-batch folder back into a project). `curalink bench batch` is in bench/cli/batch.py."""

from __future__ import annotations

from dataclasses import asdict

from app.cli.arguments import MAX_CANDIDATES, file_option, input_path, output_folder, whole
from app.console import cancellable, escape_controls, open_project, print_json, progress_bar, stdout
from core.errors import CuralinkError
from core.jobs.linking.batch import DEFAULT_CANDIDATES

EXIT_CANCELLED = 130
EXIT_ERROR = 2  # as app.cli's: some input was refused
_SHOWN_SHARDS = 20  # rejected shards listed (100,000 missing files are not 200,000 lines)
_SHOWN_PROBLEMS = 10


def cmd_link(args) -> int:
    from core.jobs.linking.detect_targets import require_known_ids
    from core.jobs.linking.link import Detect, link
    from core.jobs.linking.suggestions import ProjectLinker

    if not args.detect and (args.include_gold or args.type is not None):
        raise CuralinkError("--include-gold and --type apply to detection: add --detect")
    with open_project(args) as project, cancellable() as cancel:
        listed = _document_list(args)
        if listed is not None:
            require_known_ids(project, listed)
        # The linker loads first: a name index rebuilt after a KB import then does not share the process
        # with the dictionary tagger (with the MeSH 2024 recipe each is hundreds of MB; issue 30's 1.5 GB).
        # The detector is chosen (and may refuse the type) before detection stores anything.
        with progress_bar("loading models") as bar:
            linker = ProjectLinker.for_project(
                project, device=args.device, candidates=args.candidates, progress=bar, cancel=cancel
            )
        if linker.linker.ranker_note:
            stdout.print(linker.linker.ranker_note)
        with progress_bar("tagging mentions and linking" if args.detect else "linking") as bar:
            outcome = link(
                project,
                linker,
                detect=Detect(args.type, include_gold=args.include_gold) if args.detect else None,
                split=args.split,
                ids=None if listed is None else list(listed),
                progress=bar,
                cancel=cancel,
            )
    if outcome.found is not None:
        _print_found(args, outcome.found)
    summary = outcome.linked
    stdout.print(
        f"linked {summary.mentions} mentions in {summary.documents} documents "
        f"({summary.mentions_per_s:.0f} mentions/s; {linker.device_description}); "
        f"{summary.suggestions} suggestions stored"
    )
    if summary.unrouted:
        counts = ", ".join(f"{t or '(none)'}: {n}" for t, n in sorted(summary.unrouted.items()))
        stdout.print(f"mentions of types no route names, matched against all concepts: {counts}")
    return 0


def _document_list(args) -> dict[str, str] | None:
    """--documents and --documents-file together: id -> where it was given (for error messages)."""
    from core.jobs.linking.detect_targets import read_id_file

    if args.documents is None and args.documents_file is None:
        return None
    ids = {doc_id: "--documents" for doc_id in args.documents or ()}
    if args.documents_file is not None:
        for doc_id, where in read_id_file(args.documents_file).items():
            ids.setdefault(doc_id, where)
    return ids


def _print_found(args, found) -> None:
    """What detection added, and what it left alone and why."""
    from core.jobs.linking.detect_targets import SKIP_GOLD, SKIP_HAS_MENTIONS, SKIP_OTHER_SPLIT

    stdout.print(
        f"detected {found.added} new mentions in {found.documents} documents with the {found.detector}"
        + (
            f"; {found.overlapping} detected spans overlapped stored mentions and were left out"
            if found.overlapping
            else ""
        )
    )
    why = {
        SKIP_HAS_MENTIONS: "already have mentions (without --documents or --split, only documents "
        "without any are tagged)",
        SKIP_GOLD: "are annotated by a gold file (detection adds to them only with --include-gold)",
        SKIP_OTHER_SPLIT: f"are not in split {args.split}",
    }
    for reason, skipped in found.skipped.items():
        examples = ", ".join(skipped[:5]) + (", ..." if len(skipped) > 5 else "")
        stdout.print(f"skipped {len(skipped)} documents that {why[reason]}: {examples}")


def cmd_link_batch(args) -> int:
    from core.jobs.linking.batch import run_batch

    project = args.model_from or args.project
    if not project:
        raise CuralinkError(
            "link-batch needs a project whose KB and models in force it links with: "
            "curalink -p DIR link-batch ... (or --model-from DIR)"
        )
    if args.type is not None and not args.detect:
        raise CuralinkError("--type applies to detection: add --detect")
    run = {
        "inputs": args.inputs,
        "fmt": args.format,
        "out_format": args.out_format,
        "detect": args.detect,
        "mention_type": args.type,
        "candidates": args.candidates,
    }
    if args.resume:
        from core.jobs.linking.batch import recorded_run

        if args.inputs:
            raise CuralinkError("--resume links the inputs the folder records: give no INPUT with it")
        run = recorded_run(args.out)
    elif not args.inputs:
        raise CuralinkError("link-batch: give the input shards (files or folders), or --resume --out DIR")
    with cancellable() as cancel, progress_bar("link-batch", quiet=args.json) as bar:
        shards = {"done": 0, "total": None}

        def overall(done: int, total: int | None, message: str = "") -> None:
            shards.update(done=done, total=total)
            bar(done, total, f"shards {message}")

        def within(documents: int, _total: int | None, message: str = "") -> None:
            bar(shards["done"], shards["total"], message)

        summary = run_batch(
            run.pop("inputs"),
            args.out,
            project,
            engine=args.engine,
            workers=args.workers,
            address=args.address,
            **run,
            device=args.device,
            overwrite=args.overwrite,
            progress=overall,
            shard_progress=within,
            cancel=cancel,
        )
    if args.json:
        payload = asdict(summary)
        payload["malformed"] = [
            {"input": e["input"], "problem_count": e["problem_count"], "problems": e["problems"][:20]}
            for e in summary.malformed
        ]
        print_json(payload)
    else:
        _print_batch(summary)
    return EXIT_CANCELLED if summary.cancelled else 0


def _print_batch(summary) -> None:
    figures = summary.figures
    stdout.print(
        f"linked {summary.linked} shard(s): {summary.documents} documents, {summary.mentions} mentions"
        + (f" ({summary.detected} detected)" if summary.detected else "")
        + f" in {summary.seconds:.1f} s on {summary.engine} with {summary.workers} worker(s)"
        + (f"; {summary.already_done} already linked, skipped" if summary.already_done else "")
    )
    if figures.get("abstracts_per_s"):
        stdout.print(
            f"steady state {figures['abstracts_per_s']} abstracts/s, {figures['mentions_per_s']} mentions/s; "
            f"start-up (models + name index) per worker: {figures['load_s_per_worker']} s"
        )
    if summary.removed_by_deletions:
        stdout.print(f"{summary.removed_by_deletions} citation(s) removed: later inputs delete them")
    for entry in summary.malformed:
        stdout.print(f"malformed, skipped: {entry['input']} ({entry['problem_count']} problem(s))")
        for problem in entry["problems"][:5]:
            stdout.print(f"  {problem}")
    for note in summary.notes:
        stdout.print(f"note: {note}")
    if summary.cancelled:
        stdout.print("stopped at a shard boundary: run the same command again to link the rest")
    stdout.print(f"results and manifest.json in {summary.out_dir}")


def cmd_import_linked(args) -> int:
    from core.jobs.linking.batch import import_linked

    with open_project(args) as project, cancellable() as cancel, progress_bar("importing") as bar:
        summary = import_linked(project, args.out_dir, split=args.split, progress=bar, cancel=cancel)
    stdout.print(
        f"imported {summary.shards} linked shard(s): {summary.documents_added} documents added "
        f"({summary.documents_present} already in the project), {summary.suggestions} suggestions for "
        f"{summary.mentions_suggested} mentions"
        + (f"; {summary.reviewed_kept} reviewed mentions kept theirs" if summary.reviewed_kept else "")
        + (f"; {summary.unmatched} linked mentions match no stored mention" if summary.unmatched else "")
    )
    for note in summary.notes:
        stdout.print(f"note: {note}")
    if not summary.rejected:
        return 0
    stdout.print(
        f"{len(summary.rejected)} shard(s) not imported ({summary.problem_count} problem(s)); "
        "nothing of them was stored:"
    )
    for problems in list(summary.rejected.values())[:_SHOWN_SHARDS]:
        for problem in problems[:_SHOWN_PROBLEMS]:
            stdout.print(f"  {escape_controls(problem)}", markup=False, highlight=False)
        if len(problems) > _SHOWN_PROBLEMS:
            stdout.print(f"  ... and {len(problems) - _SHOWN_PROBLEMS} more problem(s) in this shard")
    if len(summary.rejected) > _SHOWN_SHARDS:
        stdout.print(f"  ... and {len(summary.rejected) - _SHOWN_SHARDS} more shard(s) not imported")
    return EXIT_ERROR


def register(commands) -> None:
    """Add `link`, `link-batch` and `import-linked` to the `curalink` parser."""
    _register_link(commands)
    link = commands.add_parser(
        "link-batch", help="link whole collections of shards into linked shards + a manifest (local or Ray)"
    )
    link.add_argument("inputs", nargs="*", metavar="INPUT", type=input_path(), help="input shards (files, or folders of them)")
    link.add_argument(
        "--resume",
        action="store_true",
        help="finish the batch of --out with the inputs and settings its manifest records",
    )
    link.add_argument("--out", required=True, type=output_folder(), help="output folder: linked shards and manifest.json")
    link.add_argument(
        "--model-from",
        metavar="PROJECT",
        type=input_path("folder"),
        help="project whose KB and models in force are used, read-only (default: -p DIR)",
    )
    link.add_argument("--engine", choices=["local", "ray"], default="local")
    link.add_argument("--workers", type=whole(1, 256), default=1, help="worker processes (local) or actors (ray)")
    link.add_argument("--address", help="Ray cluster address (host:port or ray://host:port); --engine ray")
    link.add_argument("--format", help="input format (default: guessed per file)")
    link.add_argument("--out-format", default="jsonl", choices=["jsonl", "bioc-json", "bioc-xml"])
    link.add_argument("--detect", action="store_true", help="tag mentions first (dictionary of the KB)")
    link.add_argument("--type", help="mention type of detected mentions (default: from the project)")
    link.add_argument("--candidates", type=whole(1, MAX_CANDIDATES), default=DEFAULT_CANDIDATES, help="top-k kept per mention")
    link.add_argument("--device", default="auto", help="reranker device: auto, cpu or cuda")
    link.add_argument(
        "--overwrite", action="store_true", help="replace a folder made with other models, KB or files"
    )
    link.add_argument("--json", action="store_true")
    link.set_defaults(handler=cmd_link_batch)

    imported = commands.add_parser(
        "import-linked", help="a link-batch folder into the project as suggestions"
    )
    imported.add_argument("out_dir", metavar="OUT_DIR", type=input_path("folder"))
    imported.add_argument("--split", default="", help="split of the documents added (default none)")
    imported.set_defaults(handler=cmd_import_linked)


def _register_link(commands) -> None:
    link = commands.add_parser("link", help="suggest concepts for every mention")
    link.add_argument("--split", choices=["train", "dev", "test"], help="only the documents of this split")
    link.add_argument("--documents", nargs="+", metavar="ID", help="only these documents")
    file_option(link, "--documents-file", "only the documents listed, one id a line")
    link.add_argument(
        "--detect",
        action="store_true",
        help="first tag new mentions (the detector in force per type: tagger, span model or KB dictionary): in the documents chosen by --documents / "
        "--split, else in the documents without mentions; never in gold documents unless --include-gold",
    )
    link.add_argument(
        "--include-gold",
        action="store_true",
        help="with --detect: also add detected mentions to documents annotated by a gold file",
    )
    link.add_argument(
        "--type",
        help="with --detect: tag only this mention type (default: every type the project's routes admit, "
        "each name typed by its route, named as the project's annotations name it; where the KB's concepts "
        "cannot be told apart by type, the type the annotations give them, else the KB's own, e.g. Disease "
        "for MEDIC)",
    )
    link.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    link.add_argument("--candidates", type=whole(1, MAX_CANDIDATES), default=16)
    link.set_defaults(handler=cmd_link)
