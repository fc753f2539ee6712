"""Training ResCNN with the SapBERT multi-similarity recipe (methods.md A.3, A.4).

A batch is B training strings, each joined by one random other name of its gold concept, all
labelled by concept; the MS miner + loss run over every pair, so other concepts in the batch are the
negatives. Optional hard negatives (the reference's COMETA branch): every `hard_negative_every`
epochs the model's own top-k for the training strings is recorded and up to `max_hard_negatives`
wrong concepts per string join its batch, each as one random name under its own label.
Training strings come from (a) KB synonyms, each name a "mention" of its concept, and (b) annotated
(mention text, concept id) pairs. The same loop warm-starts from a saved version (`init_from`), so a
retrain on a few hundred curator decisions refines the version in force instead of replacing it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from core.atomic_files import write_text_atomic
from core.errors import InputError
from core.kb.knowledge_base import KnowledgeBase
from core.locations import relative_path
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from core.retrieve.encoder import RescnnEncoder, pad, tokenize
from core.retrieve.rescnn import ResCNN, RescnnConfig, build_model, load_model, load_tokenizer, save_model
from core.text.normalize import normalize_name

log = logging.getLogger(__name__)


@dataclass
class TrainOptions:
    batch_size: int = 256
    lr: float = 1e-3
    grad_clip: float = 1.0
    ms_alpha: float = 2.0
    ms_beta: float = 50.0
    ms_base: float = 0.5
    miner_epsilon: float = 0.2
    use_kb_names: bool = True
    kb_names_per_epoch: int | None = None  # sample this many KB synonym strings per epoch (None: all)
    kb_names_per_pair: int = 0  # ...or at least this many per annotated pair, against forgetting the KB
    pair_repeats: int = 1  # annotated pairs are seen this many times per epoch
    hard_negative_every: int = 0  # epochs between hard-negative refreshes; 0 = off
    max_hard_negatives: int = 10
    hard_negative_top_k: int = 20
    threads: int = 2
    device: str = "auto"  # "auto": CUDA when torch sees a GPU, else the CPU; "cpu" or "cuda" to force


@dataclass
class TrainResult:
    folder: Path
    steps: int
    epochs: float
    seconds: float
    final_loss: float
    stopped_early: bool
    metrics: dict = field(default_factory=dict)
    strings: int = 0  # training strings seen (anchors; each comes with one positive)
    history: list[dict] = field(default_factory=list)  # `epoch_eval` results, epoch 0 first
    stopped_by: str = "epochs"  # "epochs", "patience" (no dev gain) or "max_seconds"
    best_epoch: float | None = None  # the epoch whose weights were saved, when dev chose them


def fingerprint_pairs(pairs: Sequence[tuple[str, str]]) -> str:
    digest = hashlib.sha256()
    for text, concept_id in sorted(pairs):
        digest.update(f"{text}\x00{concept_id}\x01".encode())
    return digest.hexdigest()[:16]


def _resolve_pairs(kb: KnowledgeBase, pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Deduplicated (text, primary id) pairs; composites and ids unknown to the KB are dropped."""
    kept: dict[tuple[str, str], None] = {}
    dropped = 0
    for number, (text, concept_id) in enumerate(pairs, start=1):
        if not isinstance(text, str) or not isinstance(concept_id, str):
            raise InputError(
                "training pairs", "expected (mention text, concept id) strings", item=f"pair {number}"
            )
        resolved = kb.resolve(concept_id) if "|" not in concept_id and "+" not in concept_id else None
        if resolved is None or not text.strip():
            dropped += 1
            continue
        kept.setdefault((text, resolved), None)
    if dropped:
        log.info("dropped %d training pairs (composite, empty or id not in the KB)", dropped)
    return list(kept)


class _Batcher:
    """Builds labelled string batches: anchors, one random synonym each, optional hard negatives."""

    def __init__(self, kb: KnowledgeBase, rng: random.Random):
        self.rng = rng
        self.names: dict[str, list[str]] = {}
        for entry in kb.names:
            self.names.setdefault(entry.concept_id, []).append(entry.name)
        self.hard: dict[str, list[str]] = {}

    def positive(self, text: str, concept_id: str) -> str:
        names = self.names[concept_id]
        if len(names) > 1:
            key = normalize_name(text)
            others = [n for n in names if normalize_name(n) != key]
            if others:
                return self.rng.choice(others)
        return self.rng.choice(names)

    def batch(self, anchors: Sequence[tuple[str, str]], max_hard: int) -> tuple[list[str], list[int]]:
        labels: dict[str, int] = {}
        texts: list[str] = []
        ids: list[int] = []

        def add(text: str, concept_id: str) -> None:
            texts.append(text)
            ids.append(labels.setdefault(concept_id, len(labels)))

        for text, concept_id in anchors:
            add(text, concept_id)
            add(self.positive(text, concept_id), concept_id)
        if max_hard:
            for text, concept_id in anchors:
                for wrong in self.hard.get(f"{text}\x00{concept_id}", [])[:max_hard]:
                    if wrong in self.names:
                        add(self.rng.choice(self.names[wrong]), wrong)
        return texts, ids


def _mine_hard_negatives(
    model: ResCNN, tokenizer, kb: KnowledgeBase, anchors: Sequence[tuple[str, str]], top_k: int, threads: int
) -> dict[str, list[str]]:
    """Each training string's top-k wrong concepts under the current model.

    Exact search as one matrix product per chunk of anchors: no index to build for a few thousand
    queries, and no faiss needed where training runs (a GPU box may lack it).
    """
    model.eval()
    encoder = RescnnEncoder(model, tokenizer, backend="torch", threads=threads)
    rows = list(kb.names)
    names = torch.from_numpy(encoder.encode([r.name for r in rows]))
    queries = torch.from_numpy(encoder.encode([a[0] for a in anchors]))
    fetch = min(top_k * 4, len(rows))
    hits = torch.cat(
        [
            torch.topk(queries[i : i + 1024] @ names.T, fetch, dim=1).indices
            for i in range(0, len(queries), 1024)
        ]
    ).numpy()
    hard: dict[str, list[str]] = {}
    for (text, concept_id), row_ids in zip(anchors, hits):
        wrong: list[str] = []
        for row in row_ids.tolist():
            if row < 0:
                continue
            other = rows[row].concept_id
            if other != concept_id and other not in wrong:
                wrong.append(other)
            if len(wrong) == top_k:
                break
        hard[f"{text}\x00{concept_id}"] = wrong
    model.train()
    return hard


def _training_device(requested: str) -> torch.device:
    """The device for the training steps; encoding for mining and evaluation stays on the CPU."""
    if requested not in ("auto", "cpu", "cuda"):
        raise ValueError(f"unknown device {requested!r}; expected auto, cpu or cuda")
    if requested == "cuda" and not torch.cuda.is_available():
        raise ValueError("device 'cuda' was asked for but torch sees no GPU")
    if requested != "cpu" and torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("cpu")


def _kb_sample_size(options: TrainOptions, available: int, annotated: int) -> int:
    """KB synonym strings per epoch: all, or a sample that grows with the annotated pairs."""
    wanted = available if options.kb_names_per_epoch is None else options.kb_names_per_epoch
    return min(available, max(wanted, options.kb_names_per_pair * annotated))


def train_rescnn(
    kb: KnowledgeBase,
    pairs: Sequence[tuple[str, str]],
    config: RescnnConfig | None,
    out_dir: str | Path,
    *,
    epochs: int = 10,
    seed: int = 13,
    options: TrainOptions | None = None,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
    max_seconds: float | None = None,
    dev: Callable[[ResCNN], dict] | None = None,
    init_from: str | Path | None = None,
    epoch_eval: Callable[[ResCNN], dict] | None = None,
    version: str = "",
    patience: int | None = None,
    criterion: Sequence[str] = ("acc@1",),
) -> TrainResult:
    """Train and save one model version into `out_dir` (the version folder, e.g. models/retriever/v3).

    A fresh model from `config`, or (`config=None`) the weights of the saved version `init_from`.
    Stops cleanly at `max_seconds` of training, setup not counted (the learning rate still decays over
    the planned steps, so an early stop is a truncated schedule). `dev(model) -> metrics` is called once
    at the end; `epoch_eval(model) -> metrics` before training and after every epoch, into `history`.
    With `epoch_eval` and `patience`, training also stops once `patience` epochs in a row did not raise
    its `criterion` above the best so far, and the best epoch's weights are the ones saved, the latest of
    equals (early stopping on dev: the run is bounded by epochs and the data, not by the machine's load).
    `criterion` names `epoch_eval`'s keys, compared in order (a later key breaks a tie of the earlier).
    """
    from pytorch_metric_learning import losses, miners

    if (config is None) == (init_from is None):
        raise ValueError("train_rescnn needs exactly one of `config` (fresh model) and `init_from`")
    options = options or TrainOptions()
    if len(kb) == 0:
        raise InputError("knowledge base", "cannot train a retriever on an empty knowledge base")
    rng = random.Random(seed)
    torch.manual_seed(seed)
    np.random.seed(seed)

    annotated = _resolve_pairs(kb, pairs)
    kb_strings = [(e.name, e.concept_id) for e in kb.names] if options.use_kb_names else []
    batcher = _Batcher(kb, rng)
    model = build_model(config) if config is not None else load_model(init_from)
    tokenizer = load_tokenizer(model.config.base_model)
    model.train()

    kb_sample = _kb_sample_size(options, len(kb_strings), len(annotated))
    per_epoch = len(annotated) * options.pair_repeats + kb_sample
    if per_epoch == 0:
        raise InputError("training pairs", "no usable training strings (no pairs resolve to KB concepts)")
    steps_per_epoch = math.ceil(per_epoch / options.batch_size)
    total_steps = steps_per_epoch * epochs
    progress(0, total_steps, "preparing")  # the bar has its total from here on
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=options.lr)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: max(0.0, 1.0 - step / total_steps))
    loss_fn = losses.MultiSimilarityLoss(alpha=options.ms_alpha, beta=options.ms_beta, base=options.ms_base)
    miner = miners.MultiSimilarityMiner(epsilon=options.miner_epsilon)
    max_len = model.config.max_length
    normalize = model.config.normalize_text

    history: list[dict] = []

    device = _training_device(options.device)
    log.info("training the retriever on %s", device)

    def on_cpu(action: Callable[[], object]) -> object:
        """Evaluation and mining encode through the CPU encoder: lend it the model, then take it back."""
        model.to("cpu").eval()
        try:
            return action()
        finally:
            model.to(device).train()

    best: dict = {"score": None, "epoch": None, "state": None, "bad": 0}
    shown: dict = {"score": None, "epoch": None}  # the best dev figure so far, for the log line

    epoch_loss = {"sum": 0.0, "steps": 0}  # the mean training loss of the epoch just run

    def evaluate_epoch(at: float) -> bool:
        """Record the dev metrics and the epoch's mean loss; True when patience ran out. Without an
        evaluator (a large KB) the loss alone is recorded, so every epoch still has a point to plot."""
        loss = {"loss": round(epoch_loss["sum"] / epoch_loss["steps"], 4)} if epoch_loss["steps"] else {}
        epoch_loss.update(sum=0.0, steps=0)
        if epoch_eval is None:
            if loss:
                history.append({"epoch": at, **loss})
            return False
        history.append({"epoch": at, **on_cpu(lambda: epoch_eval(model)), **loss})
        if any(history[-1].get(key) is None for key in criterion):
            return False
        score = tuple(history[-1][key] for key in criterion)
        if shown["score"] is None or score >= shown["score"]:  # a tie names the later epoch, as is kept
            shown.update(score=score, epoch=at)
        log.info("%s", describe_epoch(history[-1], shown["score"][0], shown["epoch"], criterion[0]))
        if not patience:
            return False
        improved = best["score"] is None or score > best["score"]
        if improved or score == best["score"]:  # a tie keeps the later, longer-trained weights
            state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
            best.update(score=score, epoch=at, state=state)
        best["bad"] = 0 if improved else best["bad"] + 1  # only a gain resets the patience
        return best["bad"] >= patience

    if epoch_eval is not None:  # a minute on NCBI-disease: the bar says what it waits for, not "0/?"
        progress(0, total_steps, "dev check before training")
    evaluate_epoch(0.0)
    model.to(device)
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(options.threads)
    started = time.monotonic()  # the budget bounds training, not loading or the epoch-0 evaluation
    step, seen, loss_value, stopped_early, stopped_by = 0, 0, float("nan"), False, "epochs"
    try:
        for epoch in range(epochs):
            if options.hard_negative_every and epoch % options.hard_negative_every == 0:
                progress(step, total_steps, f"epoch {epoch + 1}/{epochs}, mining hard negatives")
                batcher.hard = on_cpu(
                    lambda: _mine_hard_negatives(
                        model, tokenizer, kb, annotated, options.hard_negative_top_k, options.threads
                    )
                )
            epoch_strings = list(annotated) * options.pair_repeats
            if kb_sample < len(kb_strings):
                epoch_strings += rng.sample(kb_strings, kb_sample)
            else:
                epoch_strings += kb_strings
            rng.shuffle(epoch_strings)
            for start in range(0, len(epoch_strings), options.batch_size):
                cancel.raise_if_cancelled()
                if max_seconds is not None and time.monotonic() - started > max_seconds:
                    stopped_early, stopped_by = True, "max_seconds"
                    break
                anchors = epoch_strings[start : start + options.batch_size]
                max_hard = options.max_hard_negatives if options.hard_negative_every else 0
                texts, labels = batcher.batch(anchors, max_hard)
                if normalize:
                    texts = [normalize_name(t) for t in texts]
                input_ids, mask = pad(tokenize(tokenizer, texts, max_len))
                vectors = model(torch.from_numpy(input_ids).to(device), torch.from_numpy(mask).to(device))
                label_tensor = torch.tensor(labels, device=device)
                loss = loss_fn(vectors, label_tensor, miner(vectors, label_tensor))
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, options.grad_clip)
                optimizer.step()
                scheduler.step()
                step += 1
                seen += len(anchors)
                loss_value = float(loss.detach())
                epoch_loss["sum"] += loss_value
                epoch_loss["steps"] += 1
                progress(step, total_steps, f"epoch {epoch + 1}/{epochs}, loss {loss_value:.3f}")
            at = round(step / steps_per_epoch, 3)  # what the epoch's log line names (a time cap: a fraction)
            if epoch_eval is not None:
                progress(step, total_steps, f"dev check after epoch {at:g}/{epochs}")
            if evaluate_epoch(at) and not stopped_early:
                stopped_early, stopped_by = True, "patience"
                log.info("no dev gain in %d epochs: stopped after %d steps", patience, step)
                break
            if stopped_early:
                log.info("time budget of %.0f s reached after %d steps", max_seconds, step)
                break
    finally:
        torch.set_num_threads(previous_threads)
        model.to("cpu")
    if best["state"] is not None and history and history[-1]["epoch"] != best["epoch"]:
        model.load_state_dict(best["state"])  # the best dev epoch, not the last one
    model.eval()
    seconds = time.monotonic() - started
    metrics: dict = {
        "steps": step,
        "planned_steps": total_steps,
        "epochs": round(step / steps_per_epoch, 3),
        "seconds": round(seconds, 1),
        "final_loss": loss_value,
        "stopped_early": stopped_early,
        "stopped_by": stopped_by,
        **(
            {"patience": patience, "stopping_criterion": list(criterion), "best_epoch": best["epoch"]}
            if best["epoch"] is not None
            else {}
        ),
        "training_strings_per_epoch": per_epoch,
        "annotated_pairs": len(annotated),
        "seed": seed,
        "device": str(device),
        "options": options.__dict__,
    }
    if history:
        metrics["history"] = history
    if dev is not None:
        metrics["dev"] = dev(model)
    out_dir = Path(out_dir)
    provenance = {
        "version": version or out_dir.name,
        **({"warm_start": relative_path(init_from, out_dir)} if init_from is not None else {}),
        "kb_fingerprint": kb.fingerprint(),
        "training_data_fingerprint": fingerprint_pairs(annotated),
    }
    save_model(model, out_dir, extra=provenance)
    write_text_atomic(out_dir / "metrics.json", json.dumps({**metrics, **provenance}, indent=2, default=str))
    return TrainResult(
        out_dir,
        step,
        metrics["epochs"],
        seconds,
        loss_value,
        stopped_early,
        metrics,
        seen,
        history,
        stopped_by,
        best["epoch"],
    )


def describe_epoch(point: dict, best: float | None, best_epoch: float | None, key: str = "acc@1") -> str:
    """One line for an epoch's dev check: "retriever epoch 2: dev recall@20 95.81 (best 95.81 at epoch 2),
    acc@1 87.31, acc@5 93.02, loss 0.4213" (the figures `history` keeps, read as a sentence, not a
    dictionary); `key` is the figure early stopping watches, named first with its best so far."""
    epoch = point.get("epoch", 0.0)
    when = "before training" if epoch == 0 else f"epoch {epoch:g}"
    parts = [f"retriever {when}: dev {key} {point[key]:.2f}"]
    if best is not None and best_epoch is not None and epoch:
        parts[0] += f" (best {best:.2f} at epoch {best_epoch:g})"
    for other in ("acc@1", "acc@5", "recall@20"):
        if other != key and other in point:
            parts.append(f"{other} {point[other]:.2f}")
    if "loss" in point:
        parts.append(f"loss {point['loss']:.4f}")
    return ", ".join(parts)
