"""Where and how the cross-encoder runs: CUDA with bf16/fp16 autocast, else the fastest CPU engine.

On the CPU four engines are tried on a small sample of real packed inputs: torch fp32, torch with
dynamic int8 Linear layers (`torch.ao.quantization.quantize_dynamic`), ONNX Runtime fp32 and ONNX
Runtime dynamic int8. The fastest one whose top-1 choices agree with fp32 torch on the sample (and
whose largest score change stays under a bound) is kept; the measurement is logged and exposed as
`Engine.description` / `selection_report`.
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import torch

from core.rerank.cross_encoder import CrossEncoder, batches_by_length, collate, mask_index
from core.rerank.packing import PackedInput

log = logging.getLogger(__name__)

CPU_ENGINES: tuple[str, ...] = ("torch", "torch-int8", "onnx", "onnx-int8")

GPU_WIDTH_MULTIPLE = 32
"""Scoring batches per device. A GPU wants few, large batches: 64 rows leave an H100 waiting on kernel
launches. On 2 CPU cores bigger batches only add padding: one 8,192-token batch pads a whole abstract's
inputs to the longest, and reached 67-83 % of the token bounds where 2,048 reached 86-107 %
(`curalink bench reranker`, README)."""
BATCH_TOKENS = {"cpu": 2048, "cuda": 65536}
BATCH_ROWS = {"cpu": 64, "cuda": 1024}


@dataclass(frozen=True)
class DeviceChoice:
    """The torch device and the autocast dtype (None = full precision)."""

    device: str
    amp_dtype: torch.dtype | None = None

    @property
    def batch_tokens(self) -> int:
        return BATCH_TOKENS[self.device]

    @property
    def batch_rows(self) -> int:
        return BATCH_ROWS[self.device]

    @property
    def width_multiple(self) -> int:
        return GPU_WIDTH_MULTIPLE if self.device == "cuda" else 1

    @property
    def description(self) -> str:
        if self.device == "cuda":
            name = torch.cuda.get_device_name(0)
            return f"cuda ({name}, {str(self.amp_dtype).replace('torch.', '')} autocast)"
        return f"cpu ({torch.get_num_threads()} threads)"


def select_device(prefer: str = "auto") -> DeviceChoice:
    """CUDA when torch sees a GPU (bf16 if supported, else fp16 autocast); otherwise the CPU."""
    if prefer not in ("auto", "cpu", "cuda"):
        raise ValueError(f"unknown device {prefer!r}; expected auto, cpu or cuda")
    if prefer != "cpu" and torch.cuda.is_available():
        dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        choice = DeviceChoice("cuda", dtype)
    else:
        if prefer == "cuda":
            log.warning("CUDA requested but torch sees no GPU; falling back to the CPU")
        choice = DeviceChoice("cpu", None)
    log.info("reranker device: %s", choice.description)
    return choice


class Engine(Protocol):
    name: str

    @property
    def description(self) -> str: ...

    def scores(self, batch: Sequence[PackedInput]) -> np.ndarray:
        """p([MASK] = match) for every [MASK] of the batch, in pair order."""
        ...


class TorchEngine:
    """Plain torch inference (CUDA autocast, CPU fp32 or a dynamically quantised copy)."""

    def __init__(self, encoder: CrossEncoder, choice: DeviceChoice, quantized: bool = False):
        self.encoder = encoder
        self.choice = choice
        self.name = "torch-int8" if quantized else "torch"
        model = encoder.model.eval()
        if quantized:
            model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
        self.model = model.to(choice.device)

    @property
    def description(self) -> str:
        return f"{self.choice.description}, {self.name}"

    def scores(self, batch: Sequence[PackedInput]) -> np.ndarray:
        device = self.choice.device
        ids, attention = collate(batch, self.encoder.pad_id, self.choice.width_multiple)
        rows, cols = mask_index(batch)
        with torch.inference_mode():
            if self.choice.amp_dtype is not None:
                with torch.autocast(device_type=device, dtype=self.choice.amp_dtype):
                    logits = self._logits(ids, attention, device)
            else:
                logits = self._logits(ids, attention, device)
            picked = logits[torch.from_numpy(rows).to(device), torch.from_numpy(cols).to(device)].float()
            return torch.softmax(picked, dim=-1)[:, 1].cpu().numpy()

    def _logits(self, ids: np.ndarray, attention: np.ndarray, device: str) -> torch.Tensor:
        out = self.model(
            input_ids=torch.from_numpy(ids).to(device), attention_mask=torch.from_numpy(attention).to(device)
        )
        return out.logits


class _LogitsOnly(torch.nn.Module):
    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=input_ids, attention_mask=attention_mask).logits


class OnnxEngine:
    """ONNX Runtime on the CPU, fp32 or with dynamically quantised int8 weights."""

    def __init__(self, encoder: CrossEncoder, quantized: bool = False, folder: str | Path | None = None):
        import onnxruntime as ort

        self.encoder = encoder
        self.name = "onnx-int8" if quantized else "onnx"
        self._tmp = None
        if folder is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="curalink-rerank-onnx-")
            folder = self._tmp.name
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        path = export_onnx(encoder, folder / "reranker.onnx")
        if quantized:
            from onnxruntime.quantization import QuantType, quantize_dynamic

            quantized_path = folder / "reranker.int8.onnx"
            quantize_dynamic(str(path), str(quantized_path), weight_type=QuantType.QInt8)
            path = quantized_path
        options = ort.SessionOptions()
        options.intra_op_num_threads = torch.get_num_threads()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    @property
    def description(self) -> str:
        return f"cpu ({torch.get_num_threads()} threads), {self.name} (onnxruntime)"

    def scores(self, batch: Sequence[PackedInput]) -> np.ndarray:
        ids, attention = collate(batch, self.encoder.pad_id)
        rows, cols = mask_index(batch)
        logits = self.session.run(["logits"], {"input_ids": ids, "attention_mask": attention})[0]
        picked = logits[rows, cols].astype(np.float64)
        picked -= picked.max(axis=1, keepdims=True)
        exp = np.exp(picked)
        return (exp[:, 1] / exp.sum(axis=1)).astype(np.float32)


def export_onnx(encoder: CrossEncoder, path: str | Path) -> Path:
    """Export with dynamic batch and length axes (the TorchScript exporter: seconds, no extra deps)."""
    path = Path(path)
    model = encoder.model.eval()
    wrapper = _LogitsOnly(model).eval()
    ids = torch.full((2, 16), encoder.pad_id, dtype=torch.long)
    attention = torch.ones_like(ids)
    axes = {0: "batch", 1: "length"}
    torch.onnx.export(
        wrapper,
        (ids, attention),
        str(path),
        input_names=["input_ids", "attention_mask"],
        output_names=["logits"],
        dynamic_axes={"input_ids": axes, "attention_mask": axes, "logits": axes},
        opset_version=17,
        dynamo=False,
    )
    model.eval()  # the exporter restores the wrapper's mode, which must stay eval
    return path


def build_engine(encoder: CrossEncoder, name: str, choice: DeviceChoice | None = None) -> Engine:
    choice = choice or select_device()
    if name == "torch":
        return TorchEngine(encoder, choice)
    if choice.device != "cpu":
        raise ValueError(f"engine {name!r} runs on the CPU only")
    if name == "torch-int8":
        return TorchEngine(encoder, choice, quantized=True)
    if name in ("onnx", "onnx-int8"):
        return OnnxEngine(encoder, quantized=name == "onnx-int8")
    raise ValueError(f"unknown engine {name!r}; expected one of {', '.join(CPU_ENGINES)}")


def _scores_all(engine: Engine, sample: Sequence[PackedInput], max_tokens: int) -> tuple[np.ndarray, float]:
    parts: list[np.ndarray] = []
    start = time.perf_counter()
    for batch in batches_by_length(sample, max_tokens):
        parts.append(engine.scores([sample[i] for i in batch]))
    elapsed = time.perf_counter() - start
    order = [i for batch in batches_by_length(sample, max_tokens) for i in batch]
    flat = np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
    out = np.zeros_like(flat)
    cursor = 0
    offsets = np.cumsum([0] + [len(p.pairs) for p in sample])
    for i in order:
        n = len(sample[i].pairs)
        out[offsets[i] : offsets[i] + n] = flat[cursor : cursor + n]
        cursor += n
    return out, elapsed


def choose_engine(
    encoder: CrossEncoder,
    sample: Sequence[PackedInput],
    choice: DeviceChoice | None = None,
    engines: Sequence[str] = CPU_ENGINES,
    max_score_change: float = 0.05,
    max_tokens: int = 8192,
) -> tuple[Engine, list[dict[str, float | str | bool]]]:
    """The fastest engine whose rankings match fp32 torch on `sample`; CUDA always uses torch.

    Agreement is measured per input: the [MASK] with the highest score must be the same one
    (a stand-in for top-1 of each mention that needs no pair bookkeeping), and no score may move
    by more than `max_score_change`.
    """
    choice = choice or select_device()
    reference = TorchEngine(encoder, choice)
    if choice.device != "cpu" or not sample:
        return reference, [{"engine": "torch", "seconds": 0.0, "accepted": True}]
    _scores_all(reference, sample[:2], max_tokens)  # warm-up
    ref_scores, ref_time = _scores_all(reference, sample, max_tokens)
    offsets = np.cumsum([0] + [len(p.pairs) for p in sample])
    ref_top = [int(np.argmax(ref_scores[offsets[i] : offsets[i + 1]])) for i in range(len(sample))]
    report: list[dict[str, float | str | bool]] = [
        {
            "engine": "torch",
            "seconds": ref_time,
            "max_score_change": 0.0,
            "top1_agreement": 1.0,
            "accepted": True,
        }
    ]
    best: Engine = reference
    best_time = ref_time
    for name in engines:
        if name == "torch":
            continue
        try:
            engine = build_engine(encoder, name, choice)
        except Exception as exc:  # an engine that cannot be built is skipped, not fatal
            log.warning("engine %s unavailable: %s", name, exc)
            report.append({"engine": name, "accepted": False, "error": str(exc)})
            continue
        _scores_all(engine, sample[:2], max_tokens)
        scores, elapsed = _scores_all(engine, sample, max_tokens)
        top = [int(np.argmax(scores[offsets[i] : offsets[i + 1]])) for i in range(len(sample))]
        agreement = float(np.mean([a == b for a, b in zip(top, ref_top)]))
        change = float(np.max(np.abs(scores - ref_scores))) if len(scores) else 0.0
        accepted = agreement >= 0.99 and change <= max_score_change
        report.append(
            {
                "engine": name,
                "seconds": elapsed,
                "max_score_change": change,
                "top1_agreement": agreement,
                "accepted": accepted,
            }
        )
        if accepted and elapsed < best_time:
            best, best_time = engine, elapsed
    log.info("reranker engine: %s (%s)", best.description, report)
    return best, report
