"""A saved span model, loaded for a KB now (core.project_detector.load_span_detector loads the project's
version in force with it: the desk, `link --detect`, evaluation and retraining all load it this way).

A detector trained with another KB (fingerprint differs) still reads text the same way; its concept
vectors are simply encoded for the project's KB now (the candidate encoder is the frozen base model),
and the log says so.
"""

from __future__ import annotations

import logging

from core.detect.candidates import concept_vectors
from core.detect.span_detector import SpanDetector
from core.detect.span_model import load_detector
from core.errors import CuralinkError
from core.locations import resolve_base_model

log = logging.getLogger(__name__)

KIND = "detector"


def detector_device(device: str) -> str:
    import torch

    if device not in ("auto", "cpu", "cuda"):
        raise CuralinkError(f"unknown device {device!r}; expected auto, cpu or cuda")
    if device != "cpu" and torch.cuda.is_available():
        return "cuda"
    if device == "cuda":
        log.warning("CUDA requested but torch sees no GPU; training on the CPU")
    return "cpu"


def load_span_model(
    folder, version: str, kb, *, index_dir=None, device: str = "auto", threshold: float | None = None
) -> SpanDetector:
    """A saved span model (`folder`, named `version`) with concept vectors for `kb` (cached in
    `index_dir`); core.project_detector.load_span_detector finds the project's version in force."""
    model, tokenizer, config = load_detector(folder)
    base = resolve_base_model(config.base_model, config.base_model_hash, folder, f"detector {version}")
    if config.kb_fingerprint and config.kb_fingerprint != kb.fingerprint():
        log.info(
            "detector %s was trained with knowledge base %s; concept vectors are encoded for this one (%s)",
            version,
            config.kb_fingerprint,
            kb.fingerprint(),
        )
    vectors = concept_vectors(kb, base, cache_dir=index_dir)
    return SpanDetector(
        model,
        tokenizer,
        config,
        vectors,
        threshold=threshold,
        device=detector_device(device),
        version=version,
    )
