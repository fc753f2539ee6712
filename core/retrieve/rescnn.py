"""The ResCNN mention/name encoder (Lai et al. 2021, methods.md A.2).

Frozen BERT-family word-piece embeddings feed a 1.7M-parameter residual CNN; only the CNN is
trained and saved. The embedding table is reloaded from the base model, recorded as a reference
(core.locations: the packaged MiniLM by name, a local folder by path) with the hash of its config and
vocabulary and of its embedding tensors, so a checkpoint is never silently paired with another
vocabulary or other embeddings.

Deliberate deviations from the reference code (methods.md A.11.2): padding is masked before max or
mean pooling, and padded positions are re-zeroed after the projection and after every block (the
reference lets conv/FFN biases leak into them, where the width-3/5 convs of real tokens read them).
So a string's vector does not depend on the other strings in its batch, and a KB index built once
stays valid.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import torch
from torch import nn

from core.atomic_files import atomic_path, write_text_atomic
from core.errors import ModelError
from core.locations import (
    base_model_reference,
    content_hash,
    packaged_model_folder,
    resolve_base_model,
)
from core.retrieve.wordpiece import load_wordpiece_tokenizer
from core.safe_models import (
    check_bert_config,
    check_model_files,
    read_json_file,
    safetensors_header,
    weight_files,
)

log = logging.getLogger(__name__)

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
_EMBEDDING_KEYS = (
    "word_embeddings.weight",
    "position_embeddings.weight",
    "token_type_embeddings.weight",
    "LayerNorm.weight",
    "LayerNorm.bias",
)
_LIMITS = {"hidden": 4096, "filters": 4096, "depth": 64, "max_length": 512, "embedding_dim": 4096}
"""Far above any trained model; a crafted config.json beyond them is refused before anything is built."""


def default_base_model() -> str:
    """The packaged MiniLM folder, wherever it is installed now: no download at run time."""
    return str(packaged_model_folder())


@dataclass
class RescnnConfig:
    base_model: str = ""  # in memory the folder; in config.json a reference (core.locations)
    base_model_hash: str = ""  # config + vocabulary
    base_model_weights_hash: str = ""  # the embedding tensors the frozen table is copied from
    embedding_dim: int = 384
    hidden: int = 256
    filters: int = 100
    kernel_sizes: tuple[int, ...] = (1, 3, 5)
    depth: int = 4
    ffn_dropout: float = 0.2
    embedding_dropout: float = 0.1
    pooling: str = "max"  # "max" | "mean" | "attention"
    max_length: int = 25
    freeze_embeddings: bool = True
    normalize_text: bool = True  # core.text.normalize.normalize_name on names and mentions alike
    layer_norm_eps: float = 1e-12

    def to_json(self) -> dict:
        data = asdict(self)
        data["kernel_sizes"] = list(self.kernel_sizes)
        return data

    @classmethod
    def from_json(cls, data: dict, source: str = "config") -> RescnnConfig:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known - {"kind", "version"}
        if unknown:
            raise ModelError(f"{source}: unknown ResCNN config keys {sorted(unknown)}")
        values = {k: v for k, v in data.items() if k in known}
        if "kernel_sizes" in values:
            values["kernel_sizes"] = tuple(values["kernel_sizes"])
        try:
            config = cls(**values)
        except TypeError as exc:
            raise ModelError(f"{source}: not a ResCNN config ({exc})") from exc
        if config.pooling not in ("max", "mean", "attention"):
            raise ModelError(f"{source}: pooling must be max, mean or attention, not {config.pooling!r}")
        for key, limit in _LIMITS.items():
            value = getattr(config, key)
            if not isinstance(value, int) or isinstance(value, bool) or not 0 < value <= limit:
                raise ModelError(f"{source}: {key} must be a whole number from 1 to {limit}, not {value!r}")
        sizes = config.kernel_sizes
        if not 0 < len(sizes) <= 8 or not all(isinstance(k, int) and 0 < k <= 31 for k in sizes):
            raise ModelError(f"{source}: kernel_sizes must be 1 to 8 whole numbers up to 31, not {sizes!r}")
        return config


def base_model_hash(folder: str | Path) -> str:
    """Hash of the base folder's config and vocabulary: the parts the frozen embedding depends on."""
    return content_hash(folder)


def embedding_hash(tensors: dict[str, torch.Tensor]) -> str:
    """Hash of the embedding tensors as loaded (a reinstalled base model with other weights differs)."""
    digest = hashlib.sha256()
    for short in _EMBEDDING_KEYS:
        digest.update(short.encode())
        digest.update(tensors[short].detach().to(torch.float32).contiguous().numpy())
    return digest.hexdigest()[:16]


def check_base_folder(folder: str | Path) -> dict:
    """A BERT folder (no custom code) with a tokenizer, or a clear ModelError; returns its HF config.

    ResCNN needs BertEmbeddings (word + absolute position + token type + LayerNorm)."""
    folder = Path(folder)
    hf_config = check_bert_config(folder)
    if not ((folder / "vocab.txt").is_file() or (folder / "tokenizer.json").is_file()):
        raise ModelError(f"{folder}: no tokenizer (vocab.txt or tokenizer.json)")
    return hf_config


def load_tokenizer(folder: str | Path):
    """The folder's WordPiece tokenizer (local files only, BERT's whatever the folder says), built with the
    `tokenizers` library so the linking process never imports transformers for it (issue 23)."""
    check_base_folder(folder)
    return load_wordpiece_tokenizer(folder)


def _load_embedding_tensors(folder: Path) -> dict[str, torch.Tensor]:
    """Only the five embedding tensors, straight from the safetensors file(s), without building the BERT."""
    from safetensors import safe_open

    tensors: dict[str, torch.Tensor] = {}
    for st_file in weight_files(folder):  # a pickled checkpoint is refused there, never unpickled
        try:
            with safe_open(str(st_file), framework="pt") as handle:
                for key in handle.keys():  # noqa: SIM118 - safe_open is not a Mapping
                    for short in _EMBEDDING_KEYS:
                        if key.endswith("embeddings." + short) and "encoder" not in key:
                            tensors[short] = handle.get_tensor(key)
        except Exception as exc:  # safetensors raises its own error type for a damaged file
            raise ModelError(f"{st_file}: cannot read the weights ({exc})") from exc
    missing = [k for k in _EMBEDDING_KEYS if k not in tensors]
    if missing:
        raise ModelError(f"{folder}: weights lack the BERT embedding tensors {missing}")
    return tensors


class BertStyleEmbeddings(nn.Module):
    """BertEmbeddings (word + absolute position + token type 0 + LayerNorm + dropout), export-friendly."""

    def __init__(self, vocab_size: int, dim: int, positions: int, types: int, eps: float, dropout: float):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, dim)
        self.position_embeddings = nn.Embedding(positions, dim)
        self.token_type_embeddings = nn.Embedding(types, dim)
        self.LayerNorm = nn.LayerNorm(dim, eps=eps)
        self.dropout = nn.Dropout(dropout)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        length = input_ids.shape[1]
        positions = torch.arange(length, device=input_ids.device).unsqueeze(0)
        hidden = self.word_embeddings(input_ids) + self.position_embeddings(positions)
        hidden = hidden + self.token_type_embeddings.weight[0]
        return self.dropout(self.LayerNorm(hidden))


class CnnBlock(nn.Module):
    """Three parallel length-preserving convs + ReLU, concat, FFN, residual; no norm (as in the code)."""

    def __init__(self, hidden: int, filters: int, kernel_sizes: tuple[int, ...], dropout: float):
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv1d(hidden, filters, k, padding=k // 2) for k in kernel_sizes)
        width = filters * len(kernel_sizes)
        middle = (width + hidden) // 2
        self.ffn = nn.Sequential(
            nn.Linear(width, middle), nn.ReLU(), nn.Dropout(dropout), nn.Linear(middle, hidden)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (batch, hidden, time)
        features = torch.cat([torch.relu(conv(x)) for conv in self.convs], dim=1)
        return x + self.ffn(features.transpose(1, 2)).transpose(1, 2)


class AttentionPooling(nn.Module):
    """Masked softmax over a small FFN score per position (Zhu et al. 2018)."""

    def __init__(self, hidden: int, dropout: float):
        super().__init__()
        self.score = nn.Sequential(
            nn.Linear(hidden, hidden // 2), nn.ReLU(), nn.Dropout(dropout), nn.Linear(hidden // 2, 1)
        )

    def forward(self, h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:  # h: (batch, time, hidden)
        scores = self.score(h).squeeze(-1).masked_fill(mask == 0, -1e4)
        weights = torch.softmax(scores, dim=1)
        return torch.einsum("bt,bth->bh", weights, h)


class ResCNN(nn.Module):
    def __init__(self, config: RescnnConfig, vocab_size: int, positions: int = 512, types: int = 2):
        super().__init__()
        self.config = config
        self.embeddings = BertStyleEmbeddings(
            vocab_size,
            config.embedding_dim,
            positions,
            types,
            config.layer_norm_eps,
            config.embedding_dropout,
        )
        self.project = nn.Conv1d(config.embedding_dim, config.hidden, 1)
        self.blocks = nn.ModuleList(
            CnnBlock(config.hidden, config.filters, config.kernel_sizes, config.ffn_dropout)
            for _ in range(config.depth)
        )
        self.attention = (
            AttentionPooling(config.hidden, config.ffn_dropout) if config.pooling == "attention" else None
        )
        if config.freeze_embeddings:
            self.embeddings.requires_grad_(False)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        mask = attention_mask.to(torch.float32)
        x = self.embeddings(input_ids) * mask.unsqueeze(-1)
        time_mask = mask.unsqueeze(1)
        x = self.project(x.transpose(1, 2)) * time_mask
        for block in self.blocks:
            x = block(x) * time_mask
        h = x.transpose(1, 2)  # (batch, time, hidden)
        if self.attention is not None:
            pooled = self.attention(h, mask)
        elif self.config.pooling == "mean":
            pooled = (h * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True).clamp(min=1.0)
        else:
            pooled = h.masked_fill(mask.unsqueeze(-1) == 0, -1e4).max(dim=1).values
        return nn.functional.normalize(pooled, dim=-1)

    def trainable_state(self) -> dict[str, torch.Tensor]:
        """What a checkpoint holds: everything but a frozen embedding table."""
        frozen = self.config.freeze_embeddings
        return {
            k: v.detach().contiguous()
            for k, v in self.state_dict().items()
            if not (frozen and k.startswith("embeddings."))
        }

    def trainable_parameter_count(self) -> int:
        return sum(p.numel() for p in self.parameters() if p.requires_grad)


def build_model(config: RescnnConfig) -> ResCNN:
    """A fresh model whose embedding table comes from `config.base_model` (filled in if empty)."""
    if not config.base_model:
        config.base_model = default_base_model()
    folder = Path(config.base_model).absolute()
    config.base_model = str(folder)
    hf_config = check_base_folder(folder)
    config.base_model_hash = base_model_hash(folder)
    tensors = _load_embedding_tensors(folder)
    config.base_model_weights_hash = embedding_hash(tensors)
    vocab_size, dim = tensors["word_embeddings.weight"].shape
    config.embedding_dim = int(dim)
    config.layer_norm_eps = float(hf_config.get("layer_norm_eps", config.layer_norm_eps))
    model = ResCNN(
        config,
        int(vocab_size),
        int(tensors["position_embeddings.weight"].shape[0]),
        int(tensors["token_type_embeddings.weight"].shape[0]),
    )
    with torch.no_grad():
        for short, value in tensors.items():
            model.embeddings.get_parameter(short).copy_(value.to(torch.float32))
    return model


def save_model(model: ResCNN, folder: str | Path, extra: dict | None = None) -> None:
    """config.json + model.safetensors (trainable params only), each written by temp-and-rename."""
    from safetensors.torch import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    data = {"kind": "rescnn", **model.config.to_json(), **(extra or {})}
    data["base_model"] = base_model_reference(model.config.base_model, folder)
    with atomic_path(folder / WEIGHTS_FILE) as temporary:
        save_file(model.trainable_state(), str(temporary))
    write_text_atomic(folder / CONFIG_FILE, json.dumps(data, indent=2))


def load_model(folder: str | Path, base_model: str | Path | None = None) -> ResCNN:
    """Rebuild from the recorded base model (or the folder `base_model`) and load the trained weights."""
    from safetensors.torch import load_file

    folder = Path(folder)
    check_model_files(folder)
    config_path = folder / CONFIG_FILE
    weights_path = folder / WEIGHTS_FILE
    if not config_path.is_file() or not weights_path.is_file():
        raise ModelError(f"{folder}: not a ResCNN model folder (needs {CONFIG_FILE} and {WEIGHTS_FILE})")
    data = read_json_file(config_path, "ResCNN configuration")
    if not isinstance(data, dict):
        raise ModelError(f"{config_path}: not a ResCNN configuration (a JSON object is expected)")
    safetensors_header(weights_path)  # a pickle or a truncated file: refused before anything is built
    if data.get("kind", "rescnn") != "rescnn":
        raise ModelError(f"{config_path}: kind {data.get('kind')!r} is not a ResCNN retriever")
    known = {f.name for f in fields(RescnnConfig)}
    config = RescnnConfig.from_json({k: v for k, v in data.items() if k in known}, str(config_path))
    recorded_hash, recorded_weights = config.base_model_hash, config.base_model_weights_hash
    reference = str(Path(base_model).absolute()) if base_model is not None else config.base_model
    config.base_model = str(resolve_base_model(reference, recorded_hash, folder, str(config_path)))
    model = build_model(config)
    if recorded_weights and model.config.base_model_weights_hash != recorded_weights:
        raise ModelError(
            f"{config_path}: the embeddings of base model {reference!r} ({config.base_model}) hash to "
            f"{model.config.base_model_weights_hash}, but the checkpoint was trained on {recorded_weights}; "
            "install the release it was trained with, or retrain this model"
        )
    try:
        state = load_file(str(weights_path))
    except Exception as exc:  # safetensors raises its own error type for a damaged file
        raise ModelError(f"{weights_path}: cannot read the weights ({exc})") from exc
    expected = model.trainable_state()
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(model.state_dict()))
    wrong = sorted(k for k in state if k in expected and state[k].shape != expected[k].shape)
    if missing or unexpected or wrong:
        raise ModelError(
            f"{weights_path}: does not match {CONFIG_FILE} "
            f"(missing {missing[:3]}, unexpected {unexpected[:3]}, wrong shape {wrong[:3]})"
        )
    model.load_state_dict(state, strict=False)
    model.eval()
    return model
