"""Fine-tune a saved ResCNN version on curator pairs, starting from its weights (not from scratch).

`core.retrieve.train.train_rescnn` always builds a fresh model; a retrain must start from the version
in force so a few hundred decisions refine it instead of replacing it. This loop uses the same
multi-similarity recipe (pytorch-metric-learning's MS miner and loss, the same `TrainOptions`), and
mixes a sample of KB synonyms into every epoch so the model does not forget the dictionary.
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch

from core.errors import InputError
from core.kb.knowledge_base import KnowledgeBase
from core.learn.training_data import fingerprint
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from core.retrieve.encoder import pad, tokenize
from core.retrieve.rescnn import ResCNN, load_model, load_tokenizer, save_model
from core.retrieve.train import TrainOptions
from core.text.normalize import normalize_name

log = logging.getLogger(__name__)

FINETUNE_LR = 5e-4
KB_NAMES_PER_PAIR = 3  # KB synonym strings mixed in per curator pair, against forgetting
MIN_KB_NAMES = 512


@dataclass
class FinetuneResult:
    steps: int
    epochs: float
    seconds: float
    final_loss: float
    stopped_early: bool
    strings: int = 0  # training strings seen (anchors; each comes with one positive)
    history: list[dict] = field(default_factory=list)


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
) -> FinetuneResult:
    """Load `start_from`, train on `pairs` (+ sampled KB names), save to `out_dir`; `epoch_eval` per epoch."""
    from pytorch_metric_learning import losses, miners

    options = options or TrainOptions()
    rng = random.Random(seed)
    torch.manual_seed(seed)
    names: dict[str, list[str]] = {}
    for entry in kb.names:
        names.setdefault(entry.concept_id, []).append(entry.name)
    anchors = [(t, c) for t, c in pairs if c in names and t.strip()]
    if not anchors:
        raise InputError("training pairs", "no curator or gold pair links to a concept of the knowledge base")
    kb_strings = [(e.name, e.concept_id) for e in kb.names]
    kb_sample = min(len(kb_strings), max(MIN_KB_NAMES, KB_NAMES_PER_PAIR * len(anchors)))

    model = load_model(start_from)
    tokenizer = load_tokenizer(model.config.base_model)
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=lr)
    per_epoch = len(anchors) * options.pair_repeats + kb_sample
    steps_per_epoch = math.ceil(per_epoch / options.batch_size)
    total_steps = steps_per_epoch * epochs
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: max(0.0, 1.0 - s / total_steps))
    loss_fn = losses.MultiSimilarityLoss(alpha=options.ms_alpha, beta=options.ms_beta, base=options.ms_base)
    miner = miners.MultiSimilarityMiner(epsilon=options.miner_epsilon)

    def positive(text: str, concept_id: str) -> str:
        key = normalize_name(text)
        others = [n for n in names[concept_id] if normalize_name(n) != key]
        return rng.choice(others or names[concept_id])

    history: list[dict] = []
    if epoch_eval is not None:
        model.eval()
        history.append({"epoch": 0.0, **epoch_eval(model)})
        model.train()
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(options.threads)
    started = time.monotonic()  # the budget bounds training, not loading or the epoch-0 evaluation
    step, seen, loss_value, stopped_early = 0, 0, float("nan"), False
    try:
        for epoch in range(epochs):
            strings = list(anchors) * options.pair_repeats + rng.sample(kb_strings, kb_sample)
            rng.shuffle(strings)
            for first in range(0, len(strings), options.batch_size):
                cancel.raise_if_cancelled()
                if max_seconds is not None and time.monotonic() - started > max_seconds:
                    stopped_early = True
                    break
                labels: dict[str, int] = {}
                texts: list[str] = []
                ids: list[int] = []
                for text, concept_id in strings[first : first + options.batch_size]:
                    for value in (text, positive(text, concept_id)):
                        texts.append(normalize_name(value) if model.config.normalize_text else value)
                        ids.append(labels.setdefault(concept_id, len(labels)))
                input_ids, mask = pad(tokenize(tokenizer, texts, model.config.max_length))
                vectors = model(torch.from_numpy(input_ids), torch.from_numpy(mask))
                target = torch.tensor(ids)
                loss = loss_fn(vectors, target, miner(vectors, target))
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, options.grad_clip)
                optimizer.step()
                scheduler.step()
                step += 1
                seen += len(ids) // 2
                loss_value = float(loss.detach())
                progress(step, total_steps, f"retriever epoch {epoch + 1}/{epochs} loss {loss_value:.4f}")
            if epoch_eval is not None and (step % steps_per_epoch == 0 or stopped_early):
                model.eval()
                history.append({"epoch": round(step / steps_per_epoch, 3), **epoch_eval(model)})
                model.train()
            if stopped_early:
                log.info(
                    "retriever fine-tuning stopped by its %.0f s budget after %d steps", max_seconds, step
                )
                break
    finally:
        torch.set_num_threads(previous_threads)
    model.eval()
    seconds = time.monotonic() - started
    save_model(
        model,
        out_dir,
        extra={
            "version": version or Path(out_dir).name,
            "warm_start": str(start_from),
            "kb_fingerprint": kb.fingerprint(),
            "training_data_fingerprint": fingerprint(anchors),
        },
    )
    return FinetuneResult(
        step, round(step / steps_per_epoch, 3), seconds, loss_value, stopped_early, seen, history
    )
