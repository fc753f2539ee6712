"""The bundled demo: build a project from resources/demo, train a retriever from the KB's synonyms in
seconds (no gold mentions, so the demo shows honest zero-shot linking), link every mention, print it."""

from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path

import platformdirs
from rich.console import Console
from rich.table import Table
from rich.text import Text

from app.console import cancellable, progress_bar
from app.resources import demo_dir
from core.store import Project

log = logging.getLogger(__name__)

DEMO_TRAINING_SECONDS = 60.0
DEMO_EPOCHS = 40


def default_demo_path() -> Path:
    return Path(platformdirs.user_data_dir("curalink")) / "demo-project"


def build_demo_project(
    path: Path,
    *,
    fresh: bool = False,
    train_seconds: float = DEMO_TRAINING_SECONDS,
    progress=None,
    cancel=None,
) -> Project:
    """Create (or reopen) the demo project with its KB, abstracts, a trained retriever and suggestions."""
    from core.jobs.linking.suggestions import ProjectLinker
    from core.jobs.models.kinds import train
    from core.progress import NEVER_CANCELLED, no_progress

    progress = progress or no_progress
    cancel = cancel or NEVER_CANCELLED
    if fresh and path.exists():
        shutil.rmtree(path)
    if (path / "curalink.db").exists():
        project = Project.open(path)
        if project.models.active_model("retriever") is not None:
            return project
    else:
        project = Project.create(path)
    source = demo_dir()
    if not project.documents.document_ids():
        progress(0, None, "importing the demo knowledge base and abstracts")
        import_demo_sources(project, source)
    progress(0, None, f"training the retriever on the KB's synonyms (up to {train_seconds:.0f} s)")
    train(
        project,
        "retriever",
        epochs=DEMO_EPOCHS,
        max_seconds=train_seconds,
        include_gold=False,
        progress=progress,
        cancel=cancel,
    )
    progress(0, None, "linking the demo abstracts")
    ProjectLinker.for_project(project, cancel=cancel).link_project(project, progress=progress, cancel=cancel)
    return project


def import_demo_sources(project: Project, source: Path) -> None:
    """The demo's KB (through core.jobs.io.kb_import, as `curalink kb import` and the desk import one) and
    its abstracts."""
    from core.formats import read_corpus
    from core.jobs.io.kb_import import import_kb

    import_kb(project, source / "kb.tsv", "tsv")
    project.documents.import_documents(
        read_corpus(source / "abstracts.pubtator", "pubtator"),
        source=str(source / "abstracts.pubtator"),
        fmt="pubtator",
    )


def run_demo(
    out: Path | None, *, fresh: bool, console: Console, train_seconds: float = DEMO_TRAINING_SECONDS
) -> int:
    from core.kb.identifiers import split_ids

    path = out or default_demo_path()
    started = time.perf_counter()
    with cancellable() as cancel, progress_bar("building the demo project") as bar:
        project = build_demo_project(
            path, fresh=fresh, train_seconds=train_seconds, progress=bar, cancel=cancel
        )
    with project:
        correct = total = 0
        for document, mention_ids in project.documents.documents_with_mention_ids():
            table = Table(title=f"{document.doc_id}: {document.title}", title_justify="left")
            for column in ("mention", "gold", "top candidates (retriever score)"):
                table.add_column(column)
            for mention, mention_id in zip(document.mentions, mention_ids, strict=True):
                suggestions = project.curation.suggestions(mention_id)[:3]
                gold = set(split_ids(mention.concept_id))
                hit = bool(suggestions) and suggestions[0].concept_id in gold
                correct += hit
                total += 1
                shown = Text("; ").join(
                    Text(
                        f"{c.concept_id} {c.name} ({c.retriever_score:.2f})",
                        style="green" if c.concept_id in gold else "",
                    )
                    for c in suggestions
                )
                table.add_row(mention.text, mention.concept_id, shown)
            console.print(table)
        stats = project.desk.stats()
    console.print(
        f"demo project: {path}\n{stats['documents']} documents, {stats['mentions']} mentions, "
        f"{stats['concepts']} concepts ({stats['names']} names), retriever {stats['retriever_version']}\n"
        f"top-1 suggestion correct for {correct}/{total} mentions ({correct / max(total, 1):.0%}), "
        f"zero-shot: trained on KB synonyms only; {time.perf_counter() - started:.1f} s in all"
    )
    return 0
