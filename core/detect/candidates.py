"""Concept-name vectors for collective linking: every KB name encoded once by the candidate encoder.

The candidate encoder is the frozen base model (core.detect.span_model explains why): a name's vector is
its mean-pooled, L2-normalised final states, as the bi-encoder baseline computes them
(core.retrieve.biencoder, reused). A concept scores the best of its names' dot products with a span
vector; all spans of a chunk are scored against all names in one matrix product.

The vectors are cached in the project's index folder, one file per KB fingerprint and candidate
encoder (its content hash), so a detector version, a retrain or a benchmark reuses them, and a KB
change or another base model gets its own.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import torch
from safetensors.numpy import load_file, save_file

from core.atomic_files import atomic_path
from core.errors import CuralinkError, ModelError
from core.kb.knowledge_base import KnowledgeBase
from core.locations import content_hash
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from core.safe_models import safetensors_header

log = logging.getLogger(__name__)


class ConceptVectors:
    """Name vectors [names, H], the concept of each name, and concept-level scoring."""

    def __init__(self, kb: KnowledgeBase, vectors: np.ndarray):
        if len(kb.names) == 0:
            raise CuralinkError("the knowledge base has no names: there is nothing to link to")
        if vectors.shape[0] != len(kb.names):
            raise ModelError(f"{vectors.shape[0]} name vectors for {len(kb.names)} names")
        self.kb = kb
        self.concept_ids: list[str] = list(dict.fromkeys(entry.concept_id for entry in kb.names))
        position = {concept_id: i for i, concept_id in enumerate(self.concept_ids)}
        self.name_concept = torch.tensor([position[e.concept_id] for e in kb.names], dtype=torch.long)
        self.vectors = torch.from_numpy(np.ascontiguousarray(vectors, dtype=np.float32))
        self.index_of = position

    def __len__(self) -> int:
        return len(self.concept_ids)

    def scores(self, spans: torch.Tensor) -> torch.Tensor:
        """[N, concepts]: each concept's best name score for each span vector [N, H]."""
        by_name = spans @ self.vectors.to(spans.device, spans.dtype).T
        index = self.name_concept.to(spans.device).unsqueeze(0).expand_as(by_name)
        out = torch.full(
            (spans.shape[0], len(self.concept_ids)), -1e30, device=spans.device, dtype=spans.dtype
        )
        return out.scatter_reduce(1, index, by_name, reduce="amax", include_self=True)

    def best_names(self, spans: torch.Tensor, concepts: torch.Tensor) -> torch.Tensor:
        """[N, K] score of concept `concepts[n, k]`'s best name for span n (differentiable in `spans`)."""
        return torch.gather(self.scores(spans), 1, concepts)


def encode_names(
    kb: KnowledgeBase,
    base_model: str | Path,
    *,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> np.ndarray:
    """Vectors of every KB name with the frozen base model (the bi-encoder baseline's encoding)."""
    from core.retrieve.biencoder import BiEncoderRetriever

    encoder = BiEncoderRetriever(base_model, threads=torch.get_num_threads())
    return encoder.encode([entry.name for entry in kb.names], progress=progress, cancel=cancel)


def concept_vectors(
    kb: KnowledgeBase,
    base_model: str | Path,
    *,
    cache_dir: str | Path | None = None,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> ConceptVectors:
    """The KB's name vectors, read from `cache_dir` when this KB and encoder were encoded before."""
    if len(kb.names) == 0:
        raise CuralinkError("the knowledge base has no names: there is nothing to link to")
    path = None
    if cache_dir is not None:
        path = Path(cache_dir) / f"{kb.fingerprint()}-detector-{content_hash(base_model)}.safetensors"
        if path.is_file():
            try:
                safetensors_header(path)
                vectors = load_file(str(path))["vectors"]
                if vectors.shape[0] == len(kb.names):
                    log.info("concept vectors read from %s", path)
                    return ConceptVectors(kb, vectors)
            except (ModelError, KeyError, OSError) as exc:
                log.warning("%s: unusable cached concept vectors (%s); encoding again", path, exc)
    log.info("encoding %d KB names for collective linking", len(kb.names))
    vectors = encode_names(kb, base_model, progress=progress, cancel=cancel)
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_path(path) as temporary:
                save_file({"vectors": vectors}, str(temporary))
        except (OSError, CuralinkError) as exc:  # a read-only project still links, it just encodes again
            log.warning("concept vectors not cached (%s)", exc)
    return ConceptVectors(kb, vectors)
