"""`curalink corpus ...` (import a corpus, fetch PubMed abstracts by PMID from NCBI efetch) and
`curalink export`: documents in and out of a project, through core.jobs.io as the desk does."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from app.cli.arguments import input_path, output_path, whole
from app.console import open_project, project_task, stdout
from core.errors import CuralinkError, InputError

CORPUS_FORMATS = ("pubtator", "bioc-xml", "bioc-json", "brat", "jsonl", "text", "pubmed-xml", "jats")
EXPORT_FORMATS = ("pubtator", "bioc-xml", "bioc-json", "brat", "jsonl", "text")  # the others are read-only
API_KEY_VARIABLE = "NCBI_API_KEY"


def cmd_corpus_import(args) -> int:
    from core.formats import get_format
    from core.jobs.io.corpus import import_corpus

    path = Path(args.file)
    get_format(args.format, path)
    if not path.exists():
        raise CuralinkError(f"{path}: no such file or folder")
    with project_task(args, f"importing {path.name}") as (project, bar, cancel):
        result = import_corpus(
            project,
            path,
            args.format,
            split=args.split or "",
            on_duplicate=args.on_duplicate,
            on_invalid=args.on_invalid,
            progress=bar,
            cancel=cancel,
        )
    for line in result.lines():
        stdout.print(line)
    return 0


def cmd_fetch_pubmed(args) -> int:
    from core.jobs.io.eutils import EutilsClient
    from core.jobs.io.fetch_pubmed import PmidList, fetch_pubmed, parse_pmids, read_pmid_file

    given, sources = PmidList(), []
    if args.pmids:
        given = parse_pmids("\n".join(args.pmids), "the command line")  # one argument a line
        given.problems = [
            InputError(p.source, p.problem, item=f"argument {p.line}, {p.item}") for p in given.problems
        ]
        sources.append("the command line")
    for name in args.file or []:
        listed = read_pmid_file(name)
        given.problems += listed.problems
        given.pmids = list(dict.fromkeys(given.pmids + listed.pmids))  # first mention kept, repeats dropped
        sources.append(name)
    if not sources:
        raise CuralinkError("give PMIDs (curalink -p DIR corpus fetch-pubmed 12345 67890) or --file FILE")
    pmids = given.require_valid(", ".join(sources))
    api_key = args.api_key or os.environ.get(API_KEY_VARIABLE, "") or _desk_api_key()
    client = EutilsClient(args.eutils_url, api_key=api_key, email=args.email or "")
    with project_task(args, f"fetching {len(pmids)} PMIDs") as (project, bar, cancel):
        summary = fetch_pubmed(
            project,
            pmids,
            client,
            batch_size=args.batch_size,
            split=args.split or "",
            on_duplicate=args.on_duplicate,
            progress=bar,
            cancel=cancel,
        )
    first, *rest = summary.lines()
    stdout.print(first)
    for line in rest:
        stdout.print(f"  {line}")
    return 0


def _desk_api_key() -> str:
    """The key saved in the desk's settings (File ▸ Add PubMed abstracts), so it is given once."""
    try:
        from app.gui.settings import AppSettings
    except ImportError:  # no Qt on this machine: no desk settings either
        return ""
    return AppSettings().ncbi_api_key


EXPORT_HELP = """Write the corpus with each mention's current link.

What each decision writes:
  untouched               the mention as imported, with its imported id
  accept / correct        the chosen concept id; several concepts are one link, written by the
                          format's convention (PubTator A|B, ...)
  not in KB (N)           the id -1
  reject (R), ambiguous (A)
                          the mention without an id (no link was confirmed); the imported id
                          survives as the imported_id infon where the format has infons
Decided mentions carry the decision, curator, time and model version as infons (BioC, JSONL).
Deleted mentions are never written."""


def cmd_export(args) -> int:
    from core.formats import get_format
    from core.jobs.io.corpus import export_corpus

    get_format(args.format, args.out, writing=True)
    with open_project(args) as project:
        result = export_corpus(
            project,
            Path(args.out),
            args.format,
            accepted_only=args.accepted_only,
            curated_only=args.curated_only,
            split=args.split,
        )
    for line in result.lines():
        stdout.print(line)
    return 0


def register(commands) -> None:
    """Add `corpus` (import, fetch-pubmed) and `export` to the `curalink` parser."""
    corpus = commands.add_parser("corpus", help="annotated corpora").add_subparsers(
        dest="corpus_command", required=True
    )
    corpus_import = corpus.add_parser("import", help="import documents")
    corpus_import.add_argument("file", type=input_path())
    corpus_import.add_argument("--format", required=True, metavar="{" + ",".join(CORPUS_FORMATS) + "}")
    corpus_import.add_argument("--split", choices=["train", "dev", "test"])
    corpus_import.add_argument(
        "--on-duplicate",
        default="skip",
        choices=["skip", "update", "error"],
        help="a document already in the project (imported before): skip it (default), replace it, or stop",
    )
    corpus_import.add_argument(
        "--on-invalid",
        default="error",
        choices=["error", "skip"],
        help="items of the file that cannot be read (an annotation not at its offsets, a malformed line): "
        "list them all and import nothing (error, default), or import the rest and write a report of "
        "each skipped item next to the project's logs (skip)",
    )
    corpus_import.set_defaults(handler=cmd_corpus_import)
    _register_fetch(corpus)

    export = commands.add_parser(
        "export",
        help="export the annotated corpus",
        description=EXPORT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    export.add_argument("--format", required=True, metavar="{" + ",".join(EXPORT_FORMATS) + "}")
    export.add_argument("--out", required=True, type=output_path())
    export.add_argument(
        "--accepted-only",
        action="store_true",
        help="only mentions a curator accepted or corrected, in only the documents that have one",
    )
    export.add_argument(
        "--curated-only",
        action="store_true",
        help="only documents with at least one decided mention (each with all its mentions)",
    )
    export.add_argument("--split", choices=["train", "dev", "test"], help="only documents of this split")
    export.set_defaults(handler=cmd_export)


def _register_fetch(corpus) -> None:
    """Add `fetch-pubmed` beside `corpus import`."""
    from core.jobs.io.eutils import DEFAULT_BASE_URL
    from core.jobs.io.fetch_pubmed import BATCH_SIZE

    fetch = corpus.add_parser(
        "fetch-pubmed",
        help="add PubMed abstracts by PMID, fetched from NCBI E-utilities (needs the network)",
        description="Fetch PubMed citations by PMID with NCBI efetch (3 requests a second, 10 with an "
        f"API key: --api-key, ${API_KEY_VARIABLE} or the desk's setting) and store them like `corpus import --format "
        "pubmed-xml`. PMIDs the project already has are not fetched again.",
    )
    fetch.add_argument("pmids", nargs="*", metavar="PMID")
    fetch.add_argument(
        "--file", action="append", type=input_path("file"), help="a text file of PMIDs (spaces, commas or lines; # comments)"
    )
    fetch.add_argument("--split", choices=["train", "dev", "test"])
    fetch.add_argument(
        "--on-duplicate",
        default="skip",
        choices=["skip", "update"],
        help="a PMID the project already has: do not fetch it (default), or fetch and replace it "
        "while no curator has touched it",
    )
    fetch.add_argument(
        "--api-key", help=f"NCBI API key (default: ${API_KEY_VARIABLE}, else the one saved in the desk)"
    )
    fetch.add_argument("--email", help="your e-mail, sent with each request as NCBI asks")
    fetch.add_argument("--batch-size", type=whole(1, 10_000), default=BATCH_SIZE, help="PMIDs per request")
    fetch.add_argument("--eutils-url", default=DEFAULT_BASE_URL, help="E-utilities base URL (a mirror)")
    fetch.set_defaults(handler=cmd_fetch_pubmed)
