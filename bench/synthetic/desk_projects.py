"""The projects `curalink bench desk` measures the desk on, built once into a work folder and reused.

NCBI-disease: the train, dev and test PubTator files with MEDIC as the KB, a ResCNN retriever trained
for a short budget on MEDIC's synonyms and the train gold (`train_seconds`), every mention linked by it
(stored suggestions, as `curalink link` stores them). Synthetic: bench.synthetic.project, plus a
retriever trained for a few seconds on its vocabulary so the desk's background linking has a real model.
Each is marked finished by a file written last; a build that was cancelled or failed starts again.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from bench.synthetic.project import SyntheticSizes, build_synthetic_project
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

NCBI_FILES = {
    "train": "NCBItrainset_corpus.txt",
    "dev": "NCBIdevelopset_corpus.txt",
    "test": "NCBItestset_corpus.txt",
}
MEDIC = Path("vocab") / "medic_06Jul2012.txt"


def ncbi_missing(data: Path) -> str | None:
    """Why the NCBI project cannot be built from `data`, or None."""
    needed = [data / "ncbi-disease" / name for name in NCBI_FILES.values()] + [data / MEDIC]
    absent = [str(path) for path in needed if not path.is_file()]
    return f"not found: {', '.join(absent)}" if absent else None


def _train(project, train_seconds: float, include_gold: bool, progress, cancel) -> None:
    from core.jobs.models.kinds import train

    progress(0, None, f"training a retriever ({train_seconds:.0f} s budget)")
    train(
        project,
        "retriever",
        max_seconds=train_seconds,
        include_gold=include_gold,
        progress=progress,
        cancel=cancel,
    )


def build_ncbi_project(
    folder: Path,
    data: Path,
    *,
    train_seconds: float = 60.0,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> Path:
    """NCBI-disease (792 abstracts) + MEDIC with stored suggestions; returns the project folder."""
    from core.formats import read_corpus
    from core.jobs.linking.suggestions import ProjectLinker
    from core.kb import load_kb
    from core.store import Project

    root, marker = folder / "project", folder / "project.done"
    if marker.is_file() and (root / "curalink.db").is_file():
        return root
    shutil.rmtree(root, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    with Project.create(root) as project:
        progress(0, None, "importing MEDIC")
        project.kb.import_concepts(load_kb(data / MEDIC, "medic"), source=str(data / MEDIC), fmt="medic")
        for split, name in NCBI_FILES.items():
            path = data / "ncbi-disease" / name
            progress(0, None, f"importing NCBI-disease {split}")
            project.documents.import_documents(
                read_corpus(path, "pubtator"), source=str(path), fmt="pubtator", split=split, cancel=cancel
            )
        _train(project, train_seconds, True, progress, cancel)
        progress(0, None, "linking every mention with it")
        ProjectLinker.for_project(project, device="cpu", cancel=cancel).link_project(
            project, progress=progress, cancel=cancel
        )
    marker.write_text(f"retriever trained with a {train_seconds:.0f} s budget\n", encoding="utf-8")
    return root


def build_synthetic_desk_project(
    folder: Path,
    documents: int,
    *,
    train_seconds: float = 10.0,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> Path:
    """The synthetic project of `documents` abstracts with a retriever for background linking."""
    from core.store import Project

    folder = folder / f"synthetic-{documents}"
    root = build_synthetic_project(
        folder, SyntheticSizes(documents=documents), progress=progress, cancel=cancel
    )
    marker = folder / "retriever.done"
    if not marker.is_file():
        with Project.open(root) as project:
            _train(project, train_seconds, False, progress, cancel)
        marker.write_text(f"retriever trained with a {train_seconds:.0f} s budget\n", encoding="utf-8")
    return root
