"""The collective dual encoder with end-to-end span detection (Bhowmik, Stratos & de Melo 2021).

One BERT-family document encoder reads a chunk once; on its final states sit
- the span head of eq. 4 (`Linear(H, 3)`, core.detect.span_scores): a probability for every span of up
  to L word pieces;
- a type head (`Linear(H, types)`) on the mean-pooled span vector: the mention type the training corpus
  uses (SpecificDisease, Chemical, ...), so a detected mention reaches the right vocabulary;
- the linking projection: the mean-pooled span vector (paper §3.4) times a learned H x H matrix
  (identity at the start) is dotted with every concept-name vector (core.detect.candidates), so every
  span of the chunk is linked over the whole KB in one matrix product (collective linking).

Deviation, on purpose: the candidate encoder is the base model frozen (mean-pooled, L2-normalised name
vectors, as sentence-transformers trained MiniLM), not a second fine-tuned copy. Its vectors are then
computed once per KB and cached instead of re-encoding the KB after every epoch, which is what makes
CPU training fit in an hour; the learned projection on the mention side gives the dot product the
freedom a trained candidate encoder would (u^T (W v) = (W^T u)^T v).

Saved as `models/detector/<version>/`: the encoder as HF `config.json` + `model.safetensors`, the
heads in `heads.safetensors`, the tokenizer files and `detector.json` (types, lengths, threshold, base
model reference, the KB fingerprint it was trained with).
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from core.atomic_files import write_text_atomic
from core.detect.span_scores import MAX_SPAN_PIECES, span_logits, span_mask, span_means
from core.errors import ModelError
from core.safe_models import load_bert_encoder, load_bert_tokenizer, read_json_file, safetensors_header

log = logging.getLogger(__name__)

DETECTOR_FILE = "detector.json"
HEADS_FILE = "heads.safetensors"


@dataclass
class DetectorConfig:
    """Everything besides the weights that reading text with a saved detector needs."""

    types: list[str] = field(default_factory=list)
    max_span: int = MAX_SPAN_PIECES
    window: int = 256  # word pieces per chunk, [CLS] and [SEP] included
    threshold: float = 0.5  # span probability a detected mention needs
    base_model: str = ""  # a reference to the base folder (the frozen candidate encoder)
    base_model_hash: str = ""
    kb_fingerprint: str = ""  # the KB the model was trained with (concept vectors are re-encoded for another)
    metrics: dict[str, float] = field(default_factory=dict)


class SpanLinker(torch.nn.Module):
    """Encoder + span head + type head + linking projection (see the module docstring)."""

    def __init__(self, encoder: torch.nn.Module, types: int, max_span: int = MAX_SPAN_PIECES):
        super().__init__()
        hidden = encoder.config.hidden_size
        self.encoder = encoder
        self.span_head = torch.nn.Linear(hidden, 3)
        self.type_head = torch.nn.Linear(hidden, max(1, types))
        self.link = torch.nn.Linear(hidden, hidden, bias=False)
        with torch.no_grad():
            self.link.weight.copy_(torch.eye(hidden))
        self.max_span = max_span

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(final states [B, T, H], span scores [B, T, L]) of a batch of chunks."""
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        return hidden, span_logits(self.span_head(hidden), self.max_span)

    def mask(self, text_pieces: torch.Tensor, word_starts: torch.Tensor) -> torch.Tensor:
        return span_mask(text_pieces, word_starts, self.max_span)

    def span_vectors(
        self, hidden: torch.Tensor, rows: torch.Tensor, starts: torch.Tensor, ends: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(linking vectors [N, H], type logits [N, types]) of spans given by chunk row and pieces."""
        pooled = span_means(hidden, starts, ends, rows)
        return self.link(pooled), self.type_head(pooled)


def save_detector(model: SpanLinker, tokenizer, config: DetectorConfig, folder: Path) -> None:
    """Encoder (HF folder), heads and configuration into `folder` (safetensors + JSON only)."""
    import json

    folder.mkdir(parents=True, exist_ok=True)
    model.encoder.save_pretrained(str(folder), safe_serialization=True)
    tokenizer.save_pretrained(str(folder))
    heads = {
        name: tensor.detach().cpu().contiguous()
        for name, tensor in model.state_dict().items()
        if not name.startswith("encoder.")
    }
    save_file(heads, str(folder / HEADS_FILE))
    write_text_atomic(folder / DETECTOR_FILE, json.dumps(asdict(config), indent=2))


def load_detector(folder: str | Path) -> tuple[SpanLinker, object, DetectorConfig]:
    """(model in eval mode, tokenizer, configuration) of a saved detector; a ModelError names what is wrong."""
    folder = Path(folder)
    path = folder / DETECTOR_FILE
    if not path.is_file():
        raise ModelError(f"{folder} is not a saved detector: {DETECTOR_FILE} is missing")
    data = read_json_file(path, "detector configuration")
    try:
        config = DetectorConfig(**data) if isinstance(data, dict) else None
    except TypeError as exc:
        raise ModelError(f"{path}: unreadable detector configuration: {exc}") from exc
    if config is None or not config.types:
        raise ModelError(f"{path}: unreadable detector configuration (no mention types)")
    tokenizer = load_bert_tokenizer(folder)
    encoder = load_bert_encoder(folder)
    model = SpanLinker(encoder, len(config.types), config.max_span)
    heads_path = folder / HEADS_FILE
    if not heads_path.is_file():
        raise ModelError(f"{folder}: no {HEADS_FILE}")
    safetensors_header(heads_path)  # refuses a pickle or a truncated file before loading
    heads = load_file(str(heads_path))
    expected = {k: v.shape for k, v in model.state_dict().items() if not k.startswith("encoder.")}
    found = {k: v.shape for k, v in heads.items()}
    if expected != found:
        raise ModelError(f"{heads_path}: heads {found} do not match the configuration ({expected})")
    model.load_state_dict(heads, strict=False)
    return model.eval(), tokenizer, config


def new_detector(base_model: str | Path, types: list[str], seed: int = 13) -> tuple[SpanLinker, object]:
    """A fresh model on a base BERT folder (checked: safetensors, BERT-family, no custom code)."""
    tokenizer = load_bert_tokenizer(base_model)
    torch.manual_seed(seed)
    encoder = load_bert_encoder(base_model)
    return SpanLinker(encoder, len(types)), tokenizer
