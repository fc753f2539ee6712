"""Fine-tune a saved ResCNN version on curator pairs, starting from its weights (not from scratch).

A retrain must start from the version in force so a few hundred decisions refine it instead of
replacing it. This is `core.retrieve.train.train_rescnn` with `init_from` and the retrain defaults:
a lower learning rate, and a sample of KB synonyms that grows with the pairs so the model does not
forget the dictionary.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from core.errors import InputError
from core.kb.knowledge_base import KnowledgeBase
from core.learn.training_data import resolvable
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from core.retrieve.rescnn import ResCNN
from core.retrieve.train import TrainOptions, TrainResult, train_rescnn

FINETUNE_LR = 5e-4
KB_NAMES_PER_PAIR = 3  # KB synonym strings mixed in per curator pair, against forgetting
MIN_KB_NAMES = 512


def finetune_rescnn(
    start_from: str | Path,
    kb: KnowledgeBase,
    pairs: Sequence[tuple[str, str]],
    out_dir: str | Path,
    *,
    epochs: int = 4,
    max_seconds: float | None = None,
    seed: int = 13,
    options: TrainOptions | None = None,
    lr: float = FINETUNE_LR,
    version: str = "",
    epoch_eval: Callable[[ResCNN], dict] | None = None,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> TrainResult:
    """Load `start_from`, train on `pairs` (+ sampled KB names), save to `out_dir`; `epoch_eval` per epoch."""
    if not resolvable(pairs, kb):
        raise InputError("training pairs", "no curator or gold pair links to a concept of the knowledge base")
    options = replace(
        options or TrainOptions(),
        lr=lr,
        kb_names_per_epoch=MIN_KB_NAMES,
        kb_names_per_pair=KB_NAMES_PER_PAIR,
    )
    return train_rescnn(
        kb,
        pairs,
        None,
        out_dir,
        epochs=epochs,
        seed=seed,
        options=options,
        progress=progress,
        cancel=cancel,
        max_seconds=max_seconds,
        init_from=start_from,
        epoch_eval=epoch_eval,
        version=version,
    )
