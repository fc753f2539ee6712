"""CPU inference for ResCNN: tokenise once, batch by length, run PyTorch or ONNX Runtime.

Sorting strings by word-piece count before batching keeps padding (wasted convolution work) near
zero; with masked pooling the vectors do not depend on the batch, so the order is restored exactly.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from core.atomic_files import FileWriteError, atomic_path
from core.errors import ModelError
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from core.retrieve.rescnn import ResCNN, load_model, load_tokenizer
from core.text.normalize import normalize_name

log = logging.getLogger(__name__)

ONNX_FILE = "model.onnx"
DEFAULT_BACKEND = "torch"
"""PyTorch eager was as fast as or faster than ONNX Runtime (ORT_ENABLE_ALL, and its int8 dynamic
quantisation) for this model on the 2-core CPU when the two were interleaved on MEDIC names. The ONNX
export stays available (`backend="onnx"`, parity-tested to 1e-4)."""
DEFAULT_THREADS = 2


def tokenize(tokenizer, texts: Sequence[str], max_length: int) -> list[list[int]]:
    """Word-piece ids without [CLS]/[SEP]; an empty string becomes one [UNK] so it still has a vector."""
    if not texts:
        return []
    encoded = tokenizer(list(texts), add_special_tokens=False, truncation=True, max_length=max_length)[
        "input_ids"
    ]
    unk = tokenizer.unk_token_id if tokenizer.unk_token_id is not None else 0
    return [ids if ids else [unk] for ids in encoded]


def length_batches(lengths: Sequence[int], batch_size: int) -> list[np.ndarray]:
    """Index batches of similar length, shortest first."""
    order = np.argsort(np.asarray(lengths), kind="stable")
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def pad(batch: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    width = max(len(ids) for ids in batch)
    input_ids = np.zeros((len(batch), width), dtype=np.int64)
    mask = np.zeros((len(batch), width), dtype=np.int64)
    for row, ids in enumerate(batch):
        input_ids[row, : len(ids)] = ids
        mask[row, : len(ids)] = 1
    return input_ids, mask


def export_onnx(model: ResCNN, path: str | Path) -> Path:
    """Export with dynamic batch and length axes (TorchScript exporter: no dynamo graph breaks)."""
    path = Path(path)
    model.eval()
    ids = torch.ones((2, 5), dtype=torch.long)
    mask = torch.ones((2, 5), dtype=torch.long)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(
            model,
            (ids, mask),
            str(path),
            input_names=["input_ids", "attention_mask"],
            output_names=["embedding"],
            dynamic_axes={
                "input_ids": {0: "batch", 1: "length"},
                "attention_mask": {0: "batch", 1: "length"},
                "embedding": {0: "batch"},
            },
            opset_version=17,
            dynamo=False,
        )
    return path


class RescnnEncoder:
    """Strings -> L2-normalised float32 vectors, with the PyTorch or ONNX Runtime backend."""

    def __init__(
        self,
        model: ResCNN,
        tokenizer,
        *,
        backend: str = DEFAULT_BACKEND,
        threads: int = DEFAULT_THREADS,
        onnx_path: str | Path | None = None,
        batch_size: int = 512,
    ):
        if backend not in ("onnx", "torch"):
            raise ModelError(f"unknown inference backend {backend!r} (onnx or torch)")
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.backend = backend
        self.threads = threads
        self.batch_size = batch_size
        self.dim = model.config.hidden
        self._session = None
        if backend == "onnx":
            self._session = self._open_onnx(onnx_path)

    @classmethod
    def load(cls, folder: str | Path, **options) -> RescnnEncoder:
        model = load_model(folder)
        tokenizer = load_tokenizer(model.config.base_model)
        onnx_path = Path(folder) / ONNX_FILE
        return cls(model, tokenizer, onnx_path=onnx_path, **options)

    def _open_onnx(self, onnx_path: str | Path | None):
        import tempfile

        import onnxruntime as ort

        if onnx_path is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="rescnn-onnx-")
            onnx_path = Path(self._tmp.name) / ONNX_FILE
        onnx_path = Path(onnx_path)
        if not onnx_path.is_file():
            try:
                with atomic_path(onnx_path) as temporary:  # a killed export leaves no half file
                    export_onnx(self.model, temporary)
            except (OSError, FileWriteError):  # read-only model folder: keep the export in a temp dir
                self._tmp = tempfile.TemporaryDirectory(prefix="rescnn-onnx-")
                onnx_path = export_onnx(self.model, Path(self._tmp.name) / ONNX_FILE)
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        try:
            return ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types
            raise ModelError(f"{onnx_path}: cannot open the ONNX export ({exc})") from exc

    def encode(
        self,
        texts: Sequence[str],
        *,
        progress: ProgressFn = no_progress,
        cancel: CancelToken = NEVER_CANCELLED,
    ) -> np.ndarray:
        if self.model.config.normalize_text:
            texts = [normalize_name(t) for t in texts]
        token_ids = tokenize(self.tokenizer, texts, self.model.config.max_length)
        out = np.zeros((len(token_ids), self.dim), dtype=np.float32)
        if not token_ids:
            return out
        done = 0
        previous_threads = torch.get_num_threads()
        if self.backend == "torch":
            torch.set_num_threads(self.threads)
        try:
            for batch in length_batches([len(t) for t in token_ids], self.batch_size):
                cancel.raise_if_cancelled()
                input_ids, mask = pad([token_ids[i] for i in batch])
                out[batch] = self._run(input_ids, mask)
                done += len(batch)
                progress(done, len(token_ids), "encoding")
        finally:
            if self.backend == "torch":
                torch.set_num_threads(previous_threads)
        return out

    def _run(self, input_ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if self._session is not None:
            return self._session.run(None, {"input_ids": input_ids, "attention_mask": mask})[0]
        with torch.inference_mode():
            return self.model(torch.from_numpy(input_ids), torch.from_numpy(mask)).numpy()
