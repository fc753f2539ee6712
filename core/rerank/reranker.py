"""The packed cross-encoder behind the `Reranker` protocol: pack, batch by length, score, sort.

`reranker_score` is the final ranking score: the [MASK] probability, or with `fusion_weight` > 0 that
probability blended with the retriever score (core.rerank.fusion). The weight defaults to the one
saved with the model (chosen on dev at training time); 0 gives the pure reranker.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from core.documents import Candidate, Document
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from core.rerank.cross_encoder import CrossEncoder, batches_by_length
from core.rerank.device import (
    DeviceChoice,
    Engine,
    TorchEngine,
    choose_engine,
    select_device,
)
from core.rerank.fusion import fuse
from core.rerank.packing import PackedInput, Packer, scatter_scores

log = logging.getLogger(__name__)


class CrossEncoderReranker:
    """Reranks with as few forward passes as the packing level allows, batched across documents."""

    def __init__(
        self,
        encoder: CrossEncoder,
        packing: str | None = None,
        device: str = "auto",
        engine: Engine | None = None,
        max_batch_tokens: int | None = None,
        packer: Packer | None = None,
        fusion_weight: float | None = None,
    ):
        self.encoder = encoder
        self.packer = packer or encoder.packer(packing)
        self.choice: DeviceChoice = select_device(device)
        self.engine: Engine = engine or TorchEngine(encoder, self.choice)
        self.max_batch_tokens = max_batch_tokens or self.choice.batch_tokens
        self.last_stats: dict[str, float] = {}
        self.fusion_weight = encoder.config.fusion_weight if fusion_weight is None else fusion_weight
        if not 0.0 <= self.fusion_weight <= 1.0:
            raise ValueError(f"fusion weight {self.fusion_weight} is outside [0, 1]")

    @property
    def device_description(self) -> str:
        fused = f", fused with retriever (w={self.fusion_weight:g})" if self.fusion_weight else ""
        return f"{self.engine.description}, packing {self.packer.level}{fused}"

    def tune_engine(self, documents: Sequence[Document], candidates: Sequence[Sequence[Sequence[Candidate]]]):
        """Pick the fastest acceptable engine on a sample of these documents (CPU only)."""
        sample = self.pack(documents, candidates)[:64]
        self.engine, report = choose_engine(
            self.encoder, sample, self.choice, max_tokens=self.max_batch_tokens
        )
        return report

    def pack(
        self, documents: Sequence[Document], candidates: Sequence[Sequence[Sequence[Candidate]]]
    ) -> list[PackedInput]:
        names = [[[c.name for c in per_mention] for per_mention in per_doc] for per_doc in candidates]
        return self.packer.pack(documents, names)

    def score(
        self,
        inputs: Sequence[PackedInput],
        progress: ProgressFn = no_progress,
        cancel: CancelToken = NEVER_CANCELLED,
    ) -> list[list[float]]:
        """Scores per input, aligned with its pairs."""
        out: list[list[float]] = [[] for _ in inputs]
        done = 0
        for batch in batches_by_length(inputs, self.max_batch_tokens, self.choice.batch_rows):
            cancel.raise_if_cancelled()
            scores = self.engine.scores([inputs[i] for i in batch])
            cursor = 0
            for i in batch:
                n = len(inputs[i].pairs)
                out[i] = scores[cursor : cursor + n].tolist()
                cursor += n
            done += len(batch)
            progress(done, len(inputs), "reranking")
        return out

    def rerank(
        self,
        documents: Sequence[Document],
        candidates: Sequence[Sequence[Sequence[Candidate]]],
        progress: ProgressFn = no_progress,
        cancel: CancelToken = NEVER_CANCELLED,
    ) -> list[list[list[Candidate]]]:
        start = time.perf_counter()
        inputs = self.pack(documents, candidates)
        packed_at = time.perf_counter()
        scores = self.score(inputs, progress, cancel)
        shapes = [[len(per_mention) for per_mention in per_doc] for per_doc in candidates]
        table = scatter_scores(inputs, scores, shapes)
        result: list[list[list[Candidate]]] = []
        for per_doc, doc_scores in zip(candidates, table):
            ranked_doc = []
            for per_mention, values in zip(per_doc, doc_scores):
                # stable sort inside: ties keep the retriever order
                ranked_doc.append(fuse(per_mention, values, self.fusion_weight))
            result.append(ranked_doc)
        end = time.perf_counter()
        self.last_stats = {
            "inputs": float(len(inputs)),
            "tokens": float(sum(len(p) for p in inputs)),
            "pack_seconds": packed_at - start,
            "score_seconds": end - packed_at,
        }
        return result
