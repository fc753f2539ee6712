"""Packed cross-encoder reranking: packing levels, the model, device choice, training."""

from core.rerank.base import Reranker
from core.rerank.cross_encoder import CrossEncoder, RerankerConfig, default_base_model
from core.rerank.device import DeviceChoice, choose_engine, select_device
from core.rerank.fusion import choose_weight, fuse
from core.rerank.packing import PACKING_LEVELS, PackedInput, Packer, scatter_scores
from core.rerank.reranker import CrossEncoderReranker
from core.rerank.training import TrainingConfig, TrainingResult, rerank_accuracy, train

__all__ = [
    "PACKING_LEVELS",
    "CrossEncoder",
    "CrossEncoderReranker",
    "DeviceChoice",
    "PackedInput",
    "Packer",
    "Reranker",
    "RerankerConfig",
    "TrainingConfig",
    "TrainingResult",
    "choose_engine",
    "choose_weight",
    "default_base_model",
    "fuse",
    "rerank_accuracy",
    "scatter_scores",
    "select_device",
    "train",
]
