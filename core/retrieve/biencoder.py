"""Baseline: a mean-pooled BERT bi-encoder (default the packaged MiniLM), L2 vectors in FAISS."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from core.documents import Candidate
from core.errors import ModelError
from core.kb.knowledge_base import KnowledgeBase
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from core.retrieve.base import search_concepts
from core.retrieve.encoder import length_batches
from core.retrieve.index import NameIndex
from core.retrieve.rescnn import check_base_folder, default_base_model
from core.safe_models import load_bert_encoder, load_bert_tokenizer


class BiEncoderRetriever:
    name = "biencoder"

    def __init__(
        self,
        model_dir: str | Path | None = None,
        *,
        max_length: int = 32,
        batch_size: int = 128,
        threads: int = 2,
        index_kind: str | None = None,
    ):
        folder = Path(model_dir or default_base_model())
        check_base_folder(folder)
        self.tokenizer = load_bert_tokenizer(folder)  # classes chosen here, never by the folder
        self.model = load_bert_encoder(folder).eval()
        self.max_length = max_length
        self.batch_size = batch_size
        self.threads = threads
        self.index_kind = index_kind
        self.kb: KnowledgeBase | None = None
        self.name_index: NameIndex | None = None

    def encode(
        self,
        texts: Sequence[str],
        *,
        progress: ProgressFn = no_progress,
        cancel: CancelToken = NEVER_CANCELLED,
    ) -> np.ndarray:
        dim = self.model.config.hidden_size
        out = np.zeros((len(texts), dim), dtype=np.float32)
        if not texts:
            return out
        lengths = [len(t) for t in texts]  # characters approximate word pieces well enough to batch
        previous = torch.get_num_threads()
        torch.set_num_threads(self.threads)
        try:
            done = 0
            for batch in length_batches(lengths, self.batch_size):
                cancel.raise_if_cancelled()
                encoded = self.tokenizer(
                    [texts[i] or " " for i in batch],
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                )
                with torch.inference_mode():
                    hidden = self.model(**encoded).last_hidden_state
                mask = encoded["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
                out[batch] = torch.nn.functional.normalize(pooled, dim=-1).numpy()
                done += len(batch)
                progress(done, len(texts), "encoding")
        finally:
            torch.set_num_threads(previous)
        return out

    def index(
        self, kb: KnowledgeBase, *, progress: ProgressFn = no_progress, cancel: CancelToken = NEVER_CANCELLED
    ) -> None:
        self.kb = kb
        rows = list(kb.names)
        vectors = self.encode([r.name for r in rows], progress=progress, cancel=cancel)
        self.name_index = NameIndex.build(vectors, rows, kind=self.index_kind)

    def retrieve(self, mentions: Sequence[str], k: int = 64) -> list[list[Candidate]]:
        if self.kb is None or self.name_index is None:
            raise ModelError("retrieve before index(kb)")
        if not mentions:
            return []
        vectors = self.encode(mentions)
        index = self.name_index
        return search_concepts(self.kb, index.rows, index.search, vectors, k, index.codes)
