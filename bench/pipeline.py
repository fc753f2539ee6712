"""The main job end to end on NCBI-disease: import MEDIC and the corpus, train a retriever, index, link
the test split through `Linker` (what the CLI and the desk run), and score the stored suggestions."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from core.memory import peak_rss_mb
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

SPLIT_FILES = {
    "train": "NCBItrainset_corpus.txt",
    "dev": "NCBIdevelopset_corpus.txt",
    "test": "NCBItestset_corpus.txt",
}


def bench_pipeline(
    data_dir: str | Path,
    *,
    train_seconds: float = 120.0,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    from core.evaluate.metrics import first_hit_rank, hit_rate
    from core.formats import read_corpus
    from core.jobs.linking.suggestions import ProjectLinker
    from core.jobs.models.kinds import train
    from core.kb import load_kb
    from core.kb.identifiers import split_ids
    from core.store import Project

    data = Path(data_dir)
    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="curalink-pipeline-") as scratch:
        started = time.perf_counter()
        project = Project.create(Path(scratch) / "project")
        medic = data / "vocab" / "medic_06Jul2012.txt"
        project.kb.import_concepts(load_kb(medic, "medic"), source=str(medic), fmt="medic", cancel=cancel)
        for split, name in SPLIT_FILES.items():
            path = data / "ncbi-disease" / name
            project.documents.import_documents(
                read_corpus(path, "pubtator"), source=str(path), split=split, cancel=cancel
            )
        timings["import_s"] = time.perf_counter() - started
        progress(1, 4, "imported")

        started = time.perf_counter()
        trained = train(project, "retriever", max_seconds=train_seconds, cancel=cancel)
        timings["train_s"] = time.perf_counter() - started
        progress(2, 4, "trained")

        started = time.perf_counter()
        kb = project.kb.knowledge_base()
        linker = ProjectLinker.for_project(project, kb=kb, cancel=cancel)
        timings["load_and_index_s"] = time.perf_counter() - started
        progress(3, 4, "indexed")

        summary = linker.link_project(project, split="test", cancel=cancel)
        ranks: list[int | None] = []
        for document, mention_ids in project.documents.documents_with_mention_ids("test"):
            suggestions = project.curation.suggestions_for(mention_ids)
            for mention, mention_id in zip(document.mentions, mention_ids, strict=True):
                gold = set(split_ids(mention.concept_id, "MEDIC"))
                ranked = [kb.ids_of(c.concept_id) for c in suggestions.get(mention_id, [])]
                ranks.append(first_hit_rank(ranked, gold))
        project.close()
        progress(4, 4, "linked")
    return {
        "retriever_version": trained.version,
        "train_seconds_budget": train_seconds,
        "mentions": summary.mentions,
        "link_s": round(summary.seconds, 2),
        "mentions_per_s": round(summary.mentions_per_s, 1),
        "acc@1": round(100 * hit_rate(ranks, 1), 2),
        "acc@5": round(100 * hit_rate(ranks, 5), 2),
        "recall@16": round(100 * hit_rate(ranks, 16), 2),
        **{k: round(v, 2) for k, v in timings.items()},
        "peak_rss_mb": peak_rss_mb(),
    }
