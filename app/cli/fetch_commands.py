"""`curalink corpus fetch-pubmed`: PubMed abstracts by PMID, from NCBI efetch (core.jobs.io.fetch_pubmed)."""

from __future__ import annotations

import os

from app.cli.arguments import input_path, whole
from app.console import cancellable, open_project, progress_bar, stdout
from core.errors import CuralinkError, InputError

API_KEY_VARIABLE = "NCBI_API_KEY"


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
    with (
        open_project(args) as project,
        cancellable() as cancel,
        progress_bar(f"fetching {len(pmids)} PMIDs") as bar,
    ):
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


def register_fetch(corpus) -> None:
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
