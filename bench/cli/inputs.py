"""`curalink bench bad-inputs` and `curalink bench fuzz`: the bad-input figures of issue 11; `curalink
bench pubmed`: the PubMed reader's speed and memory (issue 15)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from rich.table import Table

from app.console import print_json, progress_bar, stdout


def cmd_bench_bad_inputs(args) -> int:
    """Import every crafted bad file into a project; count the one-line errors and unchanged stores."""
    from bench.fuzz.bad_inputs import evaluate

    with (
        tempfile.TemporaryDirectory(prefix="curalink-bad-inputs-") as folder,
        progress_bar("crafted bad files", quiet=args.json) as bar,
    ):
        figures = evaluate(Path(folder), args.case or None, progress=bar)
    if args.json:
        print_json(figures)
        return 0
    table = Table("case", "format", "answer", "clear", "store", title="crafted bad files")
    for case in figures["cases"]:
        table.add_row(
            case["name"],
            case["fmt"],
            case["message"].replace(folder, "…")[:110] if case["message"] else case["outcome"],
            "yes" if case["clear"] and case["one_line"] else "NO",
            "unchanged" if case["store_unchanged"] else "CHANGED",
        )
    stdout.print(table)
    stdout.print(
        f"{figures['tried']} bad inputs tried: {figures['one_line_errors']} one-line errors naming the file "
        f"(and line or element), {figures['store_unchanged']} with the store unchanged, "
        f"{figures['imported']} imported, {figures['tracebacks']} tracebacks"
    )
    return 0 if figures["one_line_errors"] == figures["tried"] == figures["store_unchanged"] else 1


def cmd_bench_fuzz(args) -> int:
    """A bounded atheris run of the readers (bench.fuzz.readers)."""
    from bench.fuzz.readers import DEFAULT_FORMATS, fuzz_readers
    from bench.fuzz.targets import CORPUS_FORMATS, KB_FORMATS

    formats = (
        list(CORPUS_FORMATS + KB_FORMATS)
        if args.formats == ["all"]
        else args.formats or list(DEFAULT_FORMATS)
    )
    with progress_bar("fuzzing the readers", quiet=args.json) as bar:
        figures = fuzz_readers(formats, args.seconds, Path(args.artifacts), progress=bar)
    if args.json:
        print_json(figures)
    else:
        table = Table("format", "seconds", "executions", "coverage", "crashes", title="atheris (libFuzzer)")
        for run in figures["formats"]:
            table.add_row(
                run["fmt"],
                str(run["seconds"]),
                f"{run['executions']:,}",
                str(run["coverage"]),
                str(run["crashes"]),
            )
        stdout.print(table)
        for run in figures["formats"]:
            if run["crash_summary"]:
                stdout.print(run["crash_summary"], markup=False)
        stdout.print(f"{figures['executions']:,} executions, {figures['crashes']} crashes")
    if args.out:
        Path(args.out).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 1 if figures["crashes"] else 0


def cmd_bench_pubmed(args) -> int:
    """Read speed and memory of the PubMed citation reader on a generated gzipped shard."""
    from bench.pubmed import bench_pubmed

    with progress_bar("PubMed reader benchmark", quiet=args.json) as bar:
        result = bench_pubmed(megabytes=args.mb, shard=Path(args.shard) if args.shard else None, progress=bar)
    if args.json:
        print_json(result)
        return 0
    read, prescan = result["read"], result["prescan"]
    stdout.print(
        f"{result['shard']}: {result['uncompressed_mb']} MB of XML ({result['gzip_mb']} MB gzipped)\n"
        f"read {read['citations']:,} citations in {read['seconds']:.1f} s: {read['citations_per_second']:,} "
        f"citations/s, {read['uncompressed_mb_per_second']} MB/s; peak memory {read['peak_mb']} MB\n"
        f"resident memory every tenth of the citations (MB): {read['rss_samples_mb']}\n"
        f"of which the DeleteCitation pre-scan: {prescan['seconds']:.1f} s, peak {prescan['peak_mb']} MB",
        markup=False,
    )
    return 0


def register_bench(bench) -> None:
    """Add the commands under `curalink bench`."""
    bad = bench.add_parser("bad-inputs", help="crafted bad files: one-line errors, store unchanged")
    bad.add_argument("--case", action="append", help="run only this case (repeatable)")
    bad.add_argument("--json", action="store_true")
    bad.set_defaults(handler=cmd_bench_bad_inputs)
    fuzz = bench.add_parser("fuzz", help="a bounded atheris run of the readers (needs `pip install atheris`)")
    fuzz.add_argument("--seconds", type=int, default=60, help="total time, shared by the formats")
    fuzz.add_argument("--formats", nargs="+", help="formats, or 'all' (default: pubtator bioc-xml bioc-json)")
    fuzz.add_argument("--artifacts", default="fuzz-artifacts", help="folder for crashing inputs")
    fuzz.add_argument("--out", help="also write the figures to this JSON file")
    fuzz.add_argument("--json", action="store_true")
    fuzz.set_defaults(handler=cmd_bench_fuzz)
    pubmed = bench.add_parser("pubmed", help="PubMed citation XML read speed and memory on a generated shard")
    pubmed.add_argument(
        "--mb", type=float, default=1000.0, help="uncompressed size of the shard (default 1000)"
    )
    pubmed.add_argument("--shard", help="keep the shard here (read it again when it exists)")
    pubmed.add_argument("--json", action="store_true")
    pubmed.set_defaults(handler=cmd_bench_pubmed)
