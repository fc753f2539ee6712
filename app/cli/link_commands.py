"""`link`: suggest concepts for every mention (moved verbatim out of app/cli/model_commands.py when `train`
and `evaluate` moved to train_commands.py and evaluate_commands.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.cli.arguments import MAX_CANDIDATES, input_path, whole
from app.console import cancellable, open_project, progress_bar, stdout
from core.errors import CuralinkError

if TYPE_CHECKING:
    from core.store.project import Project


def cmd_link(args) -> int:
    from core.jobs.linking.detect_targets import require_known_ids
    from core.jobs.linking.mentions import detector_for_project
    from core.jobs.linking.suggestions import ProjectLinker

    if not args.detect and (args.include_gold or args.type is not None):
        raise CuralinkError("--include-gold and --type apply to detection: add --detect")
    with open_project(args) as project, cancellable() as cancel:
        listed = _document_list(args)
        if listed is not None:
            require_known_ids(project, listed)
        ids = None if listed is None else list(listed)
        kb = project.kb.knowledge_base()
        # Everything that can refuse the run (ids, type, models) is checked before detection stores anything.
        # The linker first: a name index rebuilt after a KB import then does not share the process with
        # the dictionary tagger (with the MeSH 2024 recipe each is hundreds of MB; issue 30's 1.5 GB).
        with progress_bar("loading models") as bar:
            linker = ProjectLinker.for_project(
                project, kb=kb, device=args.device, candidates=args.candidates, progress=bar, cancel=cancel
            )
        chosen = (
            detector_for_project(project, kb, requested_type=args.type, device=args.device)
            if args.detect
            else None
        )
        if linker.linker.ranker_note:
            stdout.print(linker.linker.ranker_note)
        if chosen is not None:
            _detect(args, project, chosen, ids, cancel)
        with progress_bar("linking") as bar:
            summary = linker.link_project(project, split=args.split, ids=ids, progress=bar, cancel=cancel)
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


def _detect(args, project: Project, chosen, ids: list[str] | None, cancel) -> None:
    from core.jobs.linking.detect_targets import SKIP_GOLD, SKIP_HAS_MENTIONS, SKIP_OTHER_SPLIT
    from core.jobs.linking.mentions import detect_into_project

    with progress_bar("tagging mentions") as bar:
        found = detect_into_project(
            project,
            chosen.detector,
            split=args.split,
            ids=ids,
            include_gold=args.include_gold,
            progress=bar,
            cancel=cancel,
        )
    stdout.print(
        f"detected {found.added} new mentions in {found.documents} documents with the {chosen.description}"
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


def register(commands) -> None:
    """Add this module's commands to the `curalink` parser."""
    link = commands.add_parser("link", help="suggest concepts for every mention")
    link.add_argument("--split", choices=["train", "dev", "test"], help="only the documents of this split")
    link.add_argument("--documents", nargs="+", metavar="ID", help="only these documents")
    link.add_argument(
        "--documents-file",
        metavar="FILE",
        type=input_path("file"),
        help="only the documents listed, one id a line",
    )
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
