"""`curalink bench batch`: link-batch throughput on NCBI-disease replicated to N abstracts in shards of
the real formats, with `local` 1 process, `local --workers 2` and `ray` with 2 CPU actors, in one run.

The project: the one given (`--project`), else one built in the work folder once and reused: MEDIC
and NCBI-disease train imported and a ResCNN trained for `train_seconds` (a small, briefly trained
retriever: throughput, not accuracy, is measured), its name index built once into the project. No reranker or
ranker is in force, so the figures are those of the CPU stages (detect is not asked: the shards carry
NCBI's mentions). Every run writes a fresh output folder; the three must write the same bytes.
"""

from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path
from typing import Any

from bench.synthetic.shards import ROTATION, write_shards
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

log = logging.getLogger(__name__)

NCBI_FILES = ("NCBItrainset_corpus.txt", "NCBIdevelopset_corpus.txt", "NCBItestset_corpus.txt")
RUNS = (("local", 1), ("local", 2), ("ray", 2))


def bench_batch(
    data_dir: Path,
    work: Path,
    *,
    documents: int = 20_000,
    shard_documents: int = 500,
    project: Path | None = None,
    train_seconds: float = 60.0,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict[str, Any]:
    from core.batch import run_batch
    from core.batch.manifest import Manifest
    from core.formats import read_corpus

    work.mkdir(parents=True, exist_ok=True)
    project, how = (
        (project, "given") if project is not None else _bench_project(data_dir, work, train_seconds, cancel)
    )
    shards = work / f"shards-{documents}-{shard_documents}"
    if not (shards / "complete").is_file():
        shutil.rmtree(shards, ignore_errors=True)
        originals = [
            d for name in NCBI_FILES for d in read_corpus(data_dir / "ncbi-disease" / name, "pubtator")
        ]
        write_shards(originals, shards, total=documents, per_shard=shard_documents, gzip_every=4)
        (shards / "complete").write_text("")
    inputs = sorted(p for p in shards.iterdir() if p.name.startswith("shard"))
    result: dict[str, Any] = {
        "documents": documents,
        "shards": len(inputs),
        "shard_formats": sorted({*ROTATION}),
        "project": str(project),
        "retriever": how,
        "runs": [],
    }
    hashes = []
    for number, (engine, workers) in enumerate(RUNS):
        cancel.raise_if_cancelled()
        out = work / f"out-{engine}-{workers}"
        shutil.rmtree(out, ignore_errors=True)
        started = time.perf_counter()
        summary = run_batch(inputs, out, project, engine=engine, workers=workers, cancel=cancel)
        row = {
            "engine": f"{engine} {workers} {'actors' if engine == 'ray' else 'process(es)'}",
            **summary.figures,
        }
        row["total_s"] = round(time.perf_counter() - started, 2)
        result["runs"].append(row)
        hashes.append({n: e["output_sha256"] for n, e in Manifest.load(out).done().items()})
        progress(number + 1, len(RUNS), row["engine"])
    result["mentions"] = result["runs"][0]["mentions"]
    result["identical_outputs"] = all(h == hashes[0] for h in hashes)
    local2, ray2 = result["runs"][1].get("abstracts_per_s"), result["runs"][2].get("abstracts_per_s")
    if local2 and ray2:
        result["ray_vs_local2_steady"] = round(ray2 / local2, 3)
    result["note"] = (
        "steady state: from the moment the last worker had loaded its models and name index to the last "
        "shard's end; start-up = that loading, per worker. Measured on a shared 2-core machine with other "
        "jobs running: compare the rows of one run, not across runs."
    )
    return result


def _bench_project(data_dir: Path, work: Path, train_seconds: float, cancel: CancelToken) -> tuple[Path, str]:
    """MEDIC and a briefly trained ResCNN, built once in the work folder; the name index saved into it."""
    from core.formats import read_corpus
    from core.jobs.linking.suggestions import ProjectLinker
    from core.jobs.models.kinds import train
    from core.kb import load_kb
    from core.store import Project

    path = work / "project"
    ready = path / "bench-ready"
    if not ready.is_file():
        shutil.rmtree(path, ignore_errors=True)
        with Project.create(path) as project:
            medic = data_dir / "vocab" / "medic_06Jul2012.txt"
            project.kb.import_concepts(load_kb(medic, "medic"), source=str(medic), fmt="medic", cancel=cancel)
            train = data_dir / "ncbi-disease" / NCBI_FILES[0]  # training pairs for the retriever
            project.documents.import_documents(read_corpus(train, "pubtator"), source=str(train), split="train")
            trained = train(project, "retriever", max_seconds=train_seconds, cancel=cancel)
            ProjectLinker.for_project(project, cancel=cancel)  # encodes MEDIC's names once, into index/
        ready.write_text(
            f"ResCNN {trained.version} trained {train_seconds:.0f} s on NCBI-disease train and MEDIC synonyms\n"
        )
    return path, ready.read_text().strip()
