"""`curalink bench spelling`: acc@1 on NCBI-disease test with queries as written and in MEDIC's spelling."""

from __future__ import annotations

from rich.table import Table

from app.console import print_json, shared_data, stdout


def cmd_bench_spelling(args) -> int:
    from bench.spelling import bench_spelling

    result = bench_spelling(shared_data(args))
    if args.json:
        print_json(result)
        return 0
    stdout.print(
        f"{result['corpus']} against {result['kb']}, {result['retriever']}: {result['mentions']:,} mentions; "
        f"acc@1 {result['as_written']['acc@1']} % as written, {result['respelled']['acc@1']} % respelled"
    )
    stdout.print(
        f"{result['changed_mentions']} queries respelled: {result['changed_right_before']} right first before, "
        f"{result['changed_right_after']} after; KB spelling counted in {result['spelling_build_ms']} ms"
    )
    table = Table("query", "respelled", "gold", "top before", "top after", title="respelled queries")
    for row in result["examples"]:
        table.add_row(row["query"], row["respelled"], row["gold"], row["top_before"], row["top_after"])
    stdout.print(table)
    return 0


def register_bench(bench) -> None:
    """`curalink bench spelling`."""
    parser = bench.add_parser(
        "spelling",
        help="what writing queries in the KB's spelling changes (NCBI-disease test, MEDIC, TF-IDF)",
    )
    parser.add_argument("--data", help="shared data folder (default ../shared/data)")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(handler=cmd_bench_spelling)
