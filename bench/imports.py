"""Import speed: real vocabularies and corpora, and a synthetic 1M-row MRCONSO, into a fresh project.

Each step runs in its own child process so its peak memory is its own, not the sum of
everything measured before it.
"""

from __future__ import annotations

import logging
import multiprocessing
import tempfile
import time
from pathlib import Path

from core.memory import peak_rss_mb
from core.progress import ProgressCallback, no_progress

log = logging.getLogger(__name__)


def _default_data_dir() -> Path:
    return Path(__file__).resolve().parents[2].parent / "shared" / "data"


def _run_step(kind: str, paths: list[str], fmt: str, project_dir: str, queue) -> None:
    from core.formats import read_corpus
    from core.kb import load_kb
    from core.store import Project

    project = Project.open(project_dir)
    started = time.perf_counter()
    count = 0
    for path in paths:
        if kind == "kb":
            summary = project.kb.import_concepts(load_kb(Path(path), fmt), source=path, fmt=fmt)
            count += summary.added
        else:
            summary = project.documents.import_documents(read_corpus(Path(path), fmt), source=path, fmt=fmt)
            count += summary.added
    if kind == "kb":
        project.kb.knowledge_base()
    seconds = time.perf_counter() - started
    project.close()
    peak_mb = peak_rss_mb()
    queue.put({"seconds": seconds, "count": count, "peak_mb": peak_mb})


def _measure(kind: str, paths: list[Path], fmt: str, project_dir: Path) -> dict:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(
        target=_run_step, args=(kind, [str(p) for p in paths], fmt, str(project_dir), queue)
    )
    process.start()
    process.join()
    if process.exitcode != 0 or queue.empty():
        return {"failed": f"the import process exited with code {process.exitcode} (see the log)"}
    return queue.get()


def bench_import(
    *, data_dir: Path | None = None, umls_rows: int = 1_000_000, progress: ProgressCallback = no_progress
) -> dict:
    """Seconds and peak memory of each import, with the issue's targets alongside."""
    from bench.synthetic.umls import write_synthetic_mrconso
    from core.store import Project

    data = data_dir or _default_data_dir()
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="curalink-bench-") as scratch:
        root = Path(scratch)
        steps = [
            ("CTD_diseases.tsv.gz (ctd)", "kb", [data / "vocab" / "CTD_diseases.tsv.gz"], "ctd", (10, None)),
            (
                "medic_06Jul2012.txt (medic)",
                "kb",
                [data / "vocab" / "medic_06Jul2012.txt"],
                "medic",
                (10, None),
            ),
            (
                "NCBI-disease train+dev+test (pubtator)",
                "corpus",
                [data / "ncbi-disease" / f"NCBI{s}set_corpus.txt" for s in ("train", "develop", "test")],
                "pubtator",
                (5, None),
            ),
        ]
        mrconso = root / "umls" / "MRCONSO.RRF"
        mrconso.parent.mkdir()
        started = time.perf_counter()
        write_synthetic_mrconso(mrconso, rows=umls_rows)
        log.info("wrote %d synthetic MRCONSO rows in %.1f s", umls_rows, time.perf_counter() - started)
        steps.append(
            (
                f"synthetic MRCONSO.RRF, {umls_rows:,} rows (umls-rrf)",
                "kb",
                [mrconso],
                "umls-rrf",
                (60, 1024),
            )
        )
        for index, (label, kind, paths, fmt, (max_seconds, max_mb)) in enumerate(steps):
            row = {
                "what": label,
                "target": _target_text(max_seconds, max_mb),
                "seconds": None,
                "peak_mb": None,
            }
            missing = [p for p in paths if not p.exists()]
            if missing:
                row.update(status="skipped", reason=f"input not found: {missing[0]}")
            else:
                project_dir = root / f"project-{index}"
                Project.create(project_dir).close()
                result = _measure(kind, paths, fmt, project_dir)
                if "failed" in result:
                    row.update(status="failed", reason=result["failed"])
                else:
                    row.update(result)
                    met = result["seconds"] <= max_seconds and (max_mb is None or result["peak_mb"] <= max_mb)
                    row["status"] = "met" if met else "missed"
            rows.append(row)
            progress(index + 1, len(steps), label)
    return {"rows": rows}


def _target_text(max_seconds: float, max_mb: float | None) -> str:
    return f"<= {max_seconds:g} s" + (f", <= {max_mb / 1024:g} GB" if max_mb else "")
