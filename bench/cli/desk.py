"""`curalink bench desk`: the desk's speed on the real window (offscreen) and in the store alone (issue 12).

Projects: the bundled demo, NCBI-disease + MEDIC with a short-trained retriever's suggestions, and a
synthetic project of `--documents` abstracts (default 20,000) generated in the real formats. Each is
built once into `--work` and reused; every run measures a fresh copy (decisions are written into it).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from pathlib import Path

from rich.table import Table

from app.console import cancellable, print_json, progress_bar, stdout
from core.errors import CuralinkError

log = logging.getLogger(__name__)

PROJECTS = ("demo", "ncbi", "synthetic")
# The issue's figures before the current-state table (ms): queue() by decisions, one decision + refresh.
ISSUE_QUEUE_MS = {0: 15, 3_000: 79, 20_000: 345}
ISSUE_DECISION_REFRESH_MS = {20_000: 420}
STAGES = {"demo": (0,), "ncbi": (0, 3_000), "synthetic": (0, 3_000, 20_000, 50_000)}


def _prepare(name: str, args, work: Path, progress, cancel) -> tuple[Path | None, str]:
    """The cached project for `name` (built when missing) and what its suggestions come from; (None,
    reason) when it cannot be built here."""
    from bench.synthetic.desk_projects import build_ncbi_project, build_synthetic_desk_project, ncbi_missing

    if name == "demo":
        if args.demo:
            return Path(args.demo), f"the demo project at {args.demo} (its own retriever)"
        from app.demo import build_demo_project

        progress(0, None, "building the demo project (once)")
        build_demo_project(work / "demo", progress=progress, cancel=cancel).close()
        return work / "demo", "the demo's retriever (trained on the KB's synonyms)"
    if name == "ncbi":
        if args.ncbi_project:
            return Path(args.ncbi_project), f"the prepared project {args.ncbi_project}"
        data = (
            Path(args.data) if args.data else Path(__file__).resolve().parents[2].parent / "shared" / "data"
        )
        missing = ncbi_missing(data)
        if missing:
            return None, f"skipped: {missing}"
        path = build_ncbi_project(
            work / "ncbi", data, train_seconds=args.train_seconds, progress=progress, cancel=cancel
        )
        note = (work / "ncbi" / "project.done").read_text(encoding="utf-8").strip()
        return path, f"ResCNN on MEDIC + NCBI train, {note}"
    path = build_synthetic_desk_project(work, args.documents, progress=progress, cancel=cancel)
    return path, "synthetic ranked lists (16 per mention; gold first ~65 %)"


def _measure(name: str, source: Path, args, work: Path, progress, cancel) -> dict:
    from app.gui.launch import application
    from bench.desk_store import store_stages
    from bench.faults.workload import copy_project
    from bench.gui import desk as bench_desk
    from core.store import Project

    app = application()
    run = work / "runs" / name
    shutil.rmtree(run, ignore_errors=True)
    run.mkdir(parents=True)
    progress(0, None, f"{name}: copying the project for this run")
    copy = copy_project(source, run / "project")
    result: dict = {}
    with Project.open(copy) as project:
        stats = project.desk.stats()
        result["size"] = {k: stats[k] for k in ("documents", "mentions", "concepts", "names", "suggestions")}
        result["store"] = store_stages(
            project, STAGES[name], refresh_samples=args.refresh_samples, progress=progress, cancel=cancel
        )
        result["size"]["decisions"] = project.desk.stats()["decisions"]
        cancel.raise_if_cancelled()
        progress(0, None, f"{name}: key press, open and queue figures on the real window")
        result["window"] = bench_desk.measure_window(app, project, run, args.samples, args.queue_cycles)
        cancel.raise_if_cancelled()
    progress(0, None, f"{name}: cold start, {args.cold_runs} fresh processes")
    result["cold_start"] = bench_desk.cold_start(copy, run, args.cold_runs)
    cancel.raise_if_cancelled()
    with Project.open(copy) as project:
        progress(0, None, f"{name}: background linking of {args.link_documents} documents")
        result["stall"] = bench_desk.measure_stall(
            app, project, run, args.link_documents, args.learn_decisions
        )
        if args.retrain_seconds > 0:
            progress(0, None, f"{name}: background retraining, cancelled after {args.retrain_seconds:g} s")
            result["retrain_stall"] = bench_desk.measure_retrain_stall(
                app, project, run, args.retrain_seconds
            )
        if args.restart_withdrawals > 0:
            from bench.gui.restart import measure_restart

            progress(0, None, f"{name}: a session withdrawing curator synonyms, then a restart")
            result["restart"] = measure_restart(app, project, run, args.restart_withdrawals)
    return result


def _with_lines(bar, every_s: float = 5.0):
    """The progress bar, plus a log line per stage and every few seconds within one: the bar is drawn only
    on a terminal, and generating the synthetic project takes minutes."""
    last = {"stage": "", "at": 0.0}

    def progress(done: int, total: int | None, message: str = "") -> None:
        bar(done, total, message)
        stage = message.split("(")[0].strip()
        now = time.monotonic()
        if stage != last["stage"] or now - last["at"] >= every_s:
            last.update(stage=stage, at=now)
            log.info("%s%s", message, f" [{done:,}/{total:,}]" if total else "")

    return progress


def _load() -> list[float]:
    """The 1, 5 and 15 minute load averages (the machine is shared: figures depend on them)."""
    return [round(x, 2) for x in os.getloadavg()]


def _status(value, target) -> str:
    if value is None or target is None:
        return "-"
    return "met" if value <= target else "MISSED"


def _rows(name: str, result: dict) -> list[tuple]:
    from bench.gui import desk as b

    window, rows = result["window"], []
    key = window["key_accept"]
    rows.append(("key → stored → shown", key, "p95", b.KEY_TARGET_MS, f"{key['input']}; Enter accepts top"))
    rows.append(("open → suggestions shown", window["open_document"], "p95", b.OPEN_TARGET_MS, ""))
    for kind, figures in window["queue_change"].items():
        if kind not in ("all", "changes"):
            rows.append((f"queue {kind} → shown", figures, "p95", b.QUEUE_TARGET_MS, ""))
    stall = result["stall"]
    note = f"{stall['documents']} docs, {stall['mentions']} mentions, {stall['seconds']} s; p99 {stall['p99']} ms"
    rows.append(("stall while linking", {"n": stall["ticks"], "max": stall["max"]}, "max",
                 b.STALL_TARGET_MS, note))  # fmt: skip
    learning = stall.get("learning")
    if learning:
        note = (
            f"{learning['decisions']} accepts learnt live, {learning['identical_resuggested']} identical "
            f"mentions re-suggested; accept → learnt p95 {learning['seconds_to_learnt']['p95']} ms"
        )
        rows.append(("stall while learning", {"n": learning["ticks"], "max": learning["max"]}, "max",
                     b.STALL_TARGET_MS, note))  # fmt: skip
    if "retrain_stall" in result:
        stall = result["retrain_stall"]
        note = (
            f"retriever, cancelled after {stall['seconds']} s; p99 {stall['p99']} ms; in a {stall['linker']}"
        )
        rows.append(("stall while retraining", {"n": stall["ticks"], "max": stall["max"]}, "max",
                     b.STALL_TARGET_MS, note))  # fmt: skip
    if "restart" in result:
        from bench.gui.restart import START_TARGET_MS

        restart = result["restart"]
        note = (
            f"index {restart['index']}; {restart['withdrawn']} synonyms withdrawn in the session before; "
            f"window built {restart['window_built_ms']:.0f} ms"
        )
        rows.append(("restart → first suggestions shown", {"n": 1, "max": restart["start_to_suggestions_ms"]},
                     "max", START_TARGET_MS, note))  # fmt: skip
        note = (
            f"Ctrl+Z shown in {restart['undo_to_shown_ms']:.0f} ms, models "
            f"{'still loading' if restart['undo_while_models_loading'] else 'loaded'}; p99 {restart['p99']} ms"
        )
        rows.append(("stall at restart + first Ctrl+Z", {"n": restart["ticks"], "max": restart["max"]}, "max",
                     b.STALL_TARGET_MS, note))  # fmt: skip
    rows.append(("cold start → window", result["cold_start"], "p50", None, "median of fresh processes"))
    for stage in result["store"]:
        count = stage["decisions"]
        was = ISSUE_QUEUE_MS.get(count)
        rows.append((f"store queue() @ {count:,} dec.", stage["queue"], "p50", b.STORE_QUEUE_TARGET_MS,
                     f"issue: {was} ms" if was is not None else ""))  # fmt: skip
        was = ISSUE_DECISION_REFRESH_MS.get(count)
        rows.append((f"store decision+refresh @ {count:,}", stage["decision_refresh"], "p95", None,
                     f"issue: {was} ms (whole queue)" if was is not None else ""))  # fmt: skip
    return rows


def render(result: dict) -> None:
    for name, project in result["projects"].items():
        if "skipped" in project:
            stdout.print(f"{name}: {project['skipped']}")
            continue
        size = ", ".join(f"{v:,} {k}" for k, v in project["size"].items())
        table = Table("measure", "n", "p50 ms", "p95 ms", "max ms", "target", "result", "note",
                      title=f"{name}: {size}; suggestions from {project['suggestions_from']}")  # fmt: skip
        for label, figures, judged, target, note in _rows(name, project):
            cells = [figures.get(k) for k in ("p50", "p95", "max")]
            table.add_row(
                label,
                str(figures.get("n", "-")),
                *("-" if c is None else f"{c:.1f}" if isinstance(c, float) else str(c) for c in cells),
                f"{judged} ≤ {target:.0f} ms" if target else "-",
                _status(figures.get(judged), target),
                note,
            )
        stdout.print(table, width=max(stdout.width, 150))
    stdout.print(f"load average at start {result['load_start']}, at end {result['load_end']}")


def cmd_bench_desk(args) -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    names = [n.strip() for n in args.projects.split(",") if n.strip()]
    unknown = sorted(set(names) - set(PROJECTS))
    if unknown:
        raise CuralinkError(f"--projects: unknown {', '.join(unknown)} (choose from {', '.join(PROJECTS)})")
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    result: dict = {"load_start": _load(), "projects": {}}
    started = time.perf_counter()
    with cancellable() as cancel, progress_bar("desk benchmark", quiet=args.json) as shown:
        bar = _with_lines(shown)
        for name in names:
            source, origin = _prepare(name, args, work, bar, cancel)
            if source is None:
                result["projects"][name] = {"skipped": origin}
                continue
            result["projects"][name] = {
                "suggestions_from": origin,
                **_measure(name, source, args, work, bar, cancel),
            }
            if args.out:  # after each project: a later failure keeps what was measured
                _save(args.out, result)
    result["load_end"] = _load()
    result["seconds"] = round(time.perf_counter() - started, 1)
    if args.out:
        _save(args.out, result)
    if args.json:
        print_json(result)
    else:
        render(result)
    return 0


def _save(out: str, result: dict) -> None:
    """Write the raw results, creating the folder (a missing `bench-out/` lost a whole run's figures)."""
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(result, indent=2, default=str), encoding="utf-8")


def register_bench(bench) -> None:
    desk = bench.add_parser(
        "desk", help="desk speed on the real window: demo, NCBI-disease, synthetic 20,000"
    )
    desk.add_argument("--projects", default=",".join(PROJECTS), help="comma-separated: demo,ncbi,synthetic")
    desk.add_argument("--documents", type=int, default=20_000, help="abstracts in the synthetic project")
    desk.add_argument(
        "--work", default="bench-out/desk", help="where the built projects are kept between runs"
    )
    desk.add_argument("--data", help="shared data folder (default ../shared/data)")
    desk.add_argument("--demo", help="an already built demo project (copied, never changed)")
    desk.add_argument("--ncbi-project", help="a prepared NCBI-disease project with suggestions (copied)")
    desk.add_argument("--train-seconds", type=float, default=60.0, help="NCBI retriever training budget")
    desk.add_argument("--samples", type=int, default=60, help="key presses and abstracts opened")
    desk.add_argument("--queue-cycles", type=int, default=5, help="rounds of every sort and filter")
    desk.add_argument("--refresh-samples", type=int, default=20, help="store decisions timed per stage")
    desk.add_argument("--link-documents", type=int, default=300, help="abstracts linked for the stall")
    desk.add_argument(
        "--learn-decisions",
        type=int,
        default=20,
        help="accepts learnt live by the loaded linker (after the linking stall); 0 skips it",
    )
    desk.add_argument(
        "--retrain-seconds",
        type=float,
        default=60.0,
        help="a background retrain runs this long (then cancelled) for the retraining stall; 0 skips it",
    )
    desk.add_argument(
        "--restart-withdrawals",
        type=int,
        default=3,
        help="curator synonyms learnt and withdrawn in a session before the restart figures; 0 skips them",
    )
    desk.add_argument("--cold-runs", type=int, default=3)
    desk.add_argument("--out", help="also write the raw results to this JSON file")
    desk.add_argument("--json", action="store_true")
    desk.set_defaults(handler=cmd_bench_desk)
