"""The packed cross-encoder: a token-classification head read at each [MASK] (methods.md B.5).

score = softmax(logits at [MASK])[1]. Any BERT-family folder works (MiniLM by default, BiomedBERT by
option); a version is saved as `models/reranker/<version>/` with the HF `config.json`,
`model.safetensors`, the tokenizer files and `reranker.json` (packing level and lengths).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch

from core.atomic_files import write_text_atomic, written_into
from core.errors import ModelError
from core.locations import base_model_reference, content_hash, restated_reference
from core.rerank.packing import PACKING_LEVELS, PackedInput, Packer, SentenceSplitter, special_ids
from core.retrieve.rescnn import default_base_model  # one packaged folder for both stages
from core.safe_models import (
    load_bert_tokenizer,
    load_token_classifier,
    read_json_file,
    token_classifier_class,
)

log = logging.getLogger(__name__)

RERANKER_FILE = "reranker.json"


@dataclass
class RerankerConfig:
    """What, besides the weights, a saved reranker needs to pack inputs as it was trained."""

    packing: str = "document"
    max_length: int = 512
    max_mention_tokens: int = 32
    max_candidate_tokens: int = 32
    base_model: str = ""  # a reference (core.locations): provenance only, the folder holds every weight
    base_model_hash: str = ""
    fusion_weight: float = 0.0  # blend with the retriever score (core.rerank.fusion); 0 = pure
    metrics: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.packing not in PACKING_LEVELS:
            raise ModelError(
                f"unknown packing level {self.packing!r}; expected one of {', '.join(PACKING_LEVELS)}"
            )


def batches_by_length(
    inputs: Sequence[PackedInput], max_tokens: int, max_batch: int = 64
) -> Iterator[list[int]]:
    """Indices of inputs grouped by similar length so padding stays small (batch = rows x longest)."""
    order = sorted(range(len(inputs)), key=lambda i: len(inputs[i]))
    batch: list[int] = []
    longest = 0
    for i in order:
        size = len(inputs[i])
        if batch and (max(longest, size) * (len(batch) + 1) > max_tokens or len(batch) >= max_batch):
            yield batch
            batch, longest = [], 0
        batch.append(i)
        longest = max(longest, size)
    if batch:
        yield batch


def collate(inputs: Sequence[PackedInput], pad_id: int, multiple: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Right-padded ids and attention mask (int64) for one batch, width rounded up to `multiple`.

    On a GPU every new (rows, width) shape costs kernel selection on first use, so widths are rounded
    to a few shapes there; on the CPU padding is pure cost and `multiple` stays 1.
    """
    width = max(len(p) for p in inputs)
    width = -(-width // multiple) * multiple
    ids = np.full((len(inputs), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(inputs), width), dtype=np.int64)
    for row, packed in enumerate(inputs):
        ids[row, : len(packed)] = packed.input_ids
        mask[row, : len(packed)] = 1
    return ids, mask


def mask_index(inputs: Sequence[PackedInput]) -> tuple[np.ndarray, np.ndarray]:
    """(row, position) of every [MASK] of a batch, in pair order."""
    rows = np.fromiter((r for r, p in enumerate(inputs) for _ in p.mask_positions), dtype=np.int64)
    cols = np.fromiter((c for p in inputs for c in p.mask_positions), dtype=np.int64)
    return rows, cols


class CrossEncoder:
    """Model + tokenizer + packing configuration, loaded once and passed around."""

    def __init__(
        self, model: torch.nn.Module, tokenizer, config: RerankerConfig, base_folder: Path | None = None
    ):
        special_ids(tokenizer)  # raises ModelError without [MASK]
        self.model = model
        self.tokenizer = tokenizer
        self.config = config
        self.base_folder = base_folder  # set when built from a base folder; saved as a reference
        window = getattr(model.config, "max_position_embeddings", config.max_length)
        if config.max_length > window:
            log.warning(
                "max_length %d exceeds the model window %d; using %d", config.max_length, window, window
            )
            config.max_length = window

    @classmethod
    def from_base(
        cls,
        base_model: str | Path | None = None,
        packing: str = "document",
        max_length: int = 512,
        seed: int = 42,
    ) -> CrossEncoder:
        """A fresh reranker: the base encoder (BERT, safetensors) with a new 2-label token head."""
        path = str(Path(base_model or default_base_model()).absolute())
        tokenizer = load_bert_tokenizer(path)
        torch.manual_seed(seed)
        model = load_token_classifier(path, num_labels=2)
        config = RerankerConfig(
            packing=packing, max_length=max_length, base_model=path, base_model_hash=content_hash(path)
        )
        return cls(model, tokenizer, config, base_folder=Path(path))

    @classmethod
    def load(cls, folder: str | Path) -> CrossEncoder:
        folder = Path(folder)
        config_path = folder / RERANKER_FILE
        if not config_path.is_file():
            raise ModelError(f"{folder} is not a saved reranker: {RERANKER_FILE} is missing")
        data = read_json_file(config_path, "reranker configuration")
        try:
            config = RerankerConfig(**data) if isinstance(data, dict) else None
        except TypeError as exc:
            raise ModelError(f"{config_path}: unreadable reranker configuration: {exc}") from exc
        if config is None:
            raise ModelError(f"{config_path}: unreadable reranker configuration (not a JSON object)")
        tokenizer = load_bert_tokenizer(folder)
        model = load_token_classifier(folder)
        if model.config.num_labels != 2:
            raise ModelError(f"{folder / 'config.json'}: {model.config.num_labels} labels; a reranker has 2")
        return cls(model, tokenizer, config)

    def save(self, folder: str | Path, metrics: dict[str, float] | None = None) -> Path:
        """Safetensors + JSON only (house rule: never pickles), each file put in place by a rename."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        if metrics:
            self.config.metrics = dict(metrics)
        self.config.base_model = (
            base_model_reference(self.base_folder, folder)
            if self.base_folder is not None
            else restated_reference(self.config.base_model)
        )
        with written_into(folder) as scratch:
            self.model.save_pretrained(str(scratch), safe_serialization=True)
            self.tokenizer.save_pretrained(str(scratch))
        write_text_atomic(folder / RERANKER_FILE, json.dumps(asdict(self.config), indent=2))
        return folder

    def packer(self, level: str | None = None, sentence_splitter: SentenceSplitter | None = None) -> Packer:
        return Packer(
            self.tokenizer,
            level or self.config.packing,
            max_length=self.config.max_length,
            max_mention_tokens=self.config.max_mention_tokens,
            max_candidate_tokens=self.config.max_candidate_tokens,
            sentence_splitter=sentence_splitter,
        )

    @property
    def pad_id(self) -> int:
        pad = self.tokenizer.pad_token_id
        return int(pad) if pad is not None else 0

    def mask_logits(self, batch: Sequence[PackedInput], device: torch.device | str = "cpu") -> torch.Tensor:
        """Logits [n_masks, 2] of one batch, in pair order (used by training and torch inference)."""
        ids, attention = collate(batch, self.pad_id)
        rows, cols = mask_index(batch)
        out = self.model(
            input_ids=torch.from_numpy(ids).to(device), attention_mask=torch.from_numpy(attention).to(device)
        )
        return out.logits[torch.from_numpy(rows).to(device), torch.from_numpy(cols).to(device)]


def preload_architecture(folder: str | Path) -> type | None:
    """Import the model code a saved reranker or base folder needs, without loading any weights or code
    of the folder's own (the class is Curalink's choice: BertForTokenClassification).

    Importing transformers' modeling module for an architecture took 1.9 s here (BERT), in chunks that
    hold the GIL for up to ~200 ms; loading the weights afterwards took 124 ms and never blocked another
    thread for more than 9 ms. A GUI calls this before its event loop is busy, so the background load
    that follows does not freeze it. Returns the token-classification class; a folder Curalink does not
    load (another architecture, custom code) raises a ModelError naming the file.
    """
    return token_classifier_class(folder)
