"""What the fault trials work on: a demo-size project with both models in force and curator decisions,
and long synthetic import files made from the bundled demo (so the harness needs no downloaded data).

The base project is built once per run (about a minute): the demo's KB and abstracts plus a synthetic
corpus of unlinked abstracts (linking has real work to do), a retriever trained for a few seconds,
curator decisions on the demo abstracts, a reranker retrained from them, and suggestions. Each trial
works on a copy.
"""

from __future__ import annotations

import random
import shutil
from dataclasses import dataclass
from pathlib import Path

from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

DEMO_PMID_BASE = 90000000
CORPUS_PMID_BASE = 93000000
EXTRA_PMID_BASE = 95000000
CURATOR = "fault-baseline"


@dataclass
class Workload:
    """The base project and the files the operations import."""

    base: Path
    demo: Path  # the plain demo project (a retriever trained on its KB, no reranker, no decisions)
    corpus: Path  # PubTator, `corpus_documents` abstracts not in the base project
    corpus_documents: int
    long_corpus: Path  # for the contention trial: an import that holds the lock for many seconds
    long_corpus_documents: int
    kb: Path  # TSV, `kb_concepts` concepts not in the base project
    kb_concepts: int


def demo_resources() -> Path:
    from app.resources import demo_dir

    return demo_dir()


def _demo_blocks(source: Path) -> list[list[str]]:
    blocks, block = [], []
    for line in source.read_text(encoding="utf-8").splitlines():
        if line.strip():
            block.append(line)
        elif block:
            blocks.append(block)
            block = []
    if block:
        blocks.append(block)
    return blocks


def write_corpus(path: Path, documents: int, first_pmid: int) -> Path:
    """A PubTator file of `documents` abstracts: the demo's, renumbered (same text, same gold)."""
    blocks = _demo_blocks(demo_resources() / "abstracts.pubtator")
    with path.open("w", encoding="utf-8") as out:
        for n in range(documents):
            block = blocks[n % len(blocks)]
            old = block[0].split("|", 1)[0]
            new = str(first_pmid + n)
            for line in block:
                out.write(new + line[len(old) :] + "\n")
            out.write("\n")
    return path


def write_kb(path: Path, concepts: int, seed: int = 0) -> Path:
    """A TSV KB of `concepts` new concepts named after the demo's (`id<TAB>name<TAB>syn|syn`)."""
    rows = [
        line.split("\t")
        for line in (demo_resources() / "kb.tsv").read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        for n in range(concepts):
            concept_id, name, *synonyms = rows[n % len(rows)]
            tag = f"variant {n}"
            names = [f"{s} {tag}" for s in (synonyms[0].split("|") if synonyms and synonyms[0] else [])]
            rng.shuffle(names)
            out.write(f"X{n:07d}\t{name} {tag}\t{'|'.join(names)}\n")
    return path


def build_workload(
    folder: Path,
    *,
    train_seconds: float = 2.0,
    corpus_documents: int = 1500,
    long_corpus_documents: int = 20000,
    kb_concepts: int = 20000,
    linked_extra: int = 12,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> Workload:
    """Build the base project and the import files under `folder` (reused when already built)."""
    from app.demo import build_demo_project
    from core.formats import read_corpus
    from core.jobs.linking.suggestions import ProjectLinker
    from core.jobs.models.retrain import retrain
    from core.store import Project

    folder.mkdir(parents=True, exist_ok=True)
    base = folder / "base"
    demo = folder / "demo"
    workload = Workload(
        base,
        demo,
        write_corpus(folder / "corpus.pubtator", corpus_documents, CORPUS_PMID_BASE),
        corpus_documents,
        write_corpus(folder / "long-corpus.pubtator", long_corpus_documents, CORPUS_PMID_BASE),
        long_corpus_documents,
        write_kb(folder / "kb.tsv", kb_concepts),
        kb_concepts,
    )
    if all((p / "curalink.db").is_file() for p in (base, demo)) and (folder / "base.done").is_file():
        return workload
    shutil.rmtree(base, ignore_errors=True)
    shutil.rmtree(demo, ignore_errors=True)
    progress(0, None, "base project: the demo, a retriever trained for a few seconds")
    build_demo_project(demo, train_seconds=train_seconds, cancel=cancel).close()
    project = Project.open(copy_project(demo, base))
    try:
        extra = write_corpus(folder / "extra.pubtator", linked_extra, EXTRA_PMID_BASE)
        project.documents.import_documents(read_corpus(extra, "pubtator"), source=str(extra), fmt="pubtator")
        progress(0, None, "base project: curator decisions, a reranker retrained from them")
        record_baseline_decisions(project)
        retrain(project, max_seconds=train_seconds, promote="always", device="cpu", cancel=cancel)
        ProjectLinker.for_project(project, device="cpu", cancel=cancel).link_project(project, cancel=cancel)
    finally:
        project.close()
    (folder / "base.done").write_text("ok\n", encoding="utf-8")
    return workload


def record_baseline_decisions(project) -> int:
    """Accept the gold concept of most demo mentions (what a curator would), reject a few."""
    documents = list(project.documents.documents_with_mention_ids())
    made = 0
    for document, mention_ids in documents:
        if not DEMO_PMID_BASE <= int(document.doc_id) < CORPUS_PMID_BASE:
            continue
        for index, (mention, mention_id) in enumerate(zip(document.mentions, mention_ids, strict=True)):
            gold = mention.concept_id.split("|")[0].split("+")[0]
            if index % 7 == 3 or not gold:
                project.curation.record_decision(mention_id, "reject", curator=CURATOR)
            else:
                project.curation.record_decision(mention_id, "correct", concept_id=gold, curator=CURATOR)
            made += 1
    return made


def copy_project(base: Path, to: Path) -> Path:
    """A trial's own copy (without a WAL left open by the builder)."""
    shutil.copytree(base, to, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
    return to
