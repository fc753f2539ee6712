"""What a batch links with: a project's models in force, read-only, and the identity a manifest records.

The parent resolves everything once (`resolve`): which retriever, reranker and ranker are in force, the
KB fingerprint, the mention type for detection, and where the name index is. When the project's
index/ holds no index for this KB and retriever, the parent builds it once into the output folder's
`.index/` (never into the project), so N workers each *load* it instead of each encoding every name.
A worker gets a `BatchSpec` (plain strings and numbers: it crosses process and Ray boundaries as JSON)
and loads its own `Linker` from it.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from core.batch.kb_identity import kb_identity, same_base_kb
from core.errors import CuralinkError
from core.pipeline import DEFAULT_CANDIDATES
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

log = logging.getLogger(__name__)

INDEX_FOLDER = ".index"
IDENTITY_KEYS = ("kb_fingerprint", "retriever", "reranker", "ranker", "candidates", "mention_type")
"""What must agree between runs writing into one output folder (the project's place may differ; the KB
is compared without its curator synonyms: core.batch.kb_identity)."""


@dataclass(frozen=True)
class BatchSpec:
    """Everything a worker needs to load its linker; JSON-able."""

    project: str
    index_dir: str
    candidates: int = DEFAULT_CANDIDATES
    mention_type: str | None = None
    device: str = "auto"
    batch_documents: int = 32
    threads: int | None = None
    """CPU threads per worker (torch, FAISS, OpenMP); None leaves the defaults (one worker)."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BatchSpec:
        return cls(**data)


def open_read_only(path: str | Path):
    """The project without schema upgrades or housekeeping: a batch reads it and never writes it."""
    from core.store import Project

    return Project.open(path, upgrade=False)


def resolve(
    project_path: str | Path,
    out_dir: Path,
    *,
    candidates: int = DEFAULT_CANDIDATES,
    detect: bool = False,
    mention_type: str | None = None,
    device: str = "auto",
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> tuple[BatchSpec, dict[str, Any]]:
    """(spec for the workers, identity for the manifest); builds the name index once when missing."""
    from core.project_detector import dictionary_label
    from core.retrieve.index import NameIndex, index_stem
    from core.retrieve.rescnn_retriever import RescnnRetriever, saved_version

    project_path = Path(project_path).resolve()
    with open_read_only(project_path) as project:
        retriever = project.models.active_model("retriever")
        if retriever is None:
            raise CuralinkError(
                f"{project_path}: no trained retriever yet (run `curalink -p {project_path} train retriever`)"
            )
        kb = project.kb.knowledge_base()
        if len(kb) == 0:
            raise CuralinkError(
                f"{project_path}: the knowledge base is empty (run `curalink kb import` first)"
            )
        weights = saved_version(retriever.path)
        fingerprint = kb.fingerprint()
        # the types the project's dictionary tags ('|'-joined), or the one asked
        chosen = dictionary_label(project, kb, mention_type) if detect else None
        reranker = project.models.active_model("reranker")
        ranker = project.models.active_model("ranker")
        stem = index_stem(fingerprint, weights)
        index_dir = project.index_dir
        if not NameIndex.exists(index_dir, stem):
            index_dir = out_dir / INDEX_FOLDER
            if index_dir.is_symlink():
                raise CuralinkError(
                    f"{index_dir}: is a symbolic link; the name index is built inside the output folder, "
                    "never through a link (remove the link)"
                )
            if not NameIndex.exists(index_dir, stem):
                log.info("no saved name index for this KB and retriever: building it once into %s", index_dir)
                RescnnRetriever.load(retriever.path, index_dir=index_dir).index(
                    kb, progress=progress, cancel=cancel
                )
        identity = {
            "project": str(project_path),
            **kb_identity(project, kb),
            "kb_full_fingerprint": fingerprint,  # curator synonyms in: the name index's
            "retriever": {"version": retriever.version, "weights": weights},
            "reranker": {"version": reranker.version} if reranker is not None else None,
            "ranker": {"version": ranker.version} if ranker is not None else None,
            "candidates": candidates,
            "mention_type": chosen,
        }
    spec = BatchSpec(
        project=str(project_path),
        index_dir=str(index_dir.resolve()),
        candidates=candidates,
        mention_type=chosen,
        device=device,
    )
    return spec, identity


def identity_differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What differs between the identity a folder was made with and this run's, in words."""
    differences = []
    for key in IDENTITY_KEYS:
        if key == "kb_fingerprint" and same_base_kb(old, new, new.get("kb_full_fingerprint", "")):
            continue
        if old.get(key) != new.get(key):
            differences.append(f"{key}: {_shown(old.get(key))} there, {_shown(new.get(key))} now")
    return differences


def _shown(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items())
    return "none" if value is None else str(value)
