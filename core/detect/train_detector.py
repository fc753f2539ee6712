"""Training the span model: span BCE + type CE + linking CE, AdamW with a linear schedule (§C.4-C.5, C.8).

Per batch of segments, one forward pass gives
- the span loss: BCE over every candidate span of the batch (gold spans 1, all others 0);
- the type loss: cross-entropy of the type head on the gold spans;
- the linking loss: cross-entropy over gold + 10 random concepts (drawn anew each time) + up to 10 hard
  negatives, on gold spans (§C.5: NED uses gold spans in training).

Hard negatives (§C.4): the linking scores of each gold span against all concepts are computed in the
same forward pass anyway; the concepts the model ranks above the gold within its top 10 join that
mention's pool, which persists across epochs; each later visit samples up to 10 from it. So the pool
is re-mined every epoch from the model's own top-k over all concepts, without the extra pass over the
training set the reference code spends (the first epoch therefore trains with random negatives only).

Early stopping: after every epoch the dev documents are read as raw text; the watched score is the
mean of strict span F1 and end-to-end strict F1 (span + concept); the best epoch's weights are kept.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

from core.detect.candidates import ConceptVectors
from core.detect.segments import Segment
from core.detect.span_detector import collate
from core.detect.span_model import SpanLinker
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress

log = logging.getLogger(__name__)

RANDOM_NEGATIVES = 10
HARD_NEGATIVES = 10
MINING_TOP_K = 10


@dataclass
class DetectorTrainingOptions:
    """The CPU recipe (measured on NCBI-disease + MEDIC, see the README); every field is an option."""

    max_epochs: int = 4
    patience: int = 2
    batch_segments: int = 8
    learning_rate: float = 1e-4  # the encoder
    head_learning_rate: float = 1e-3  # the span, type and linking heads
    warmup_fraction: float = 0.05
    weight_decay: float = 0.0
    trainable_layers: int | None = None  # None: every encoder layer; k: only the top k
    freeze_embeddings: bool = True  # the word-piece table is half of MiniLM's weights and barely moves
    seed: int = 13


@dataclass
class DetectorTrainingResult:
    steps: int = 0
    epochs: int = 0
    best_epoch: int = 0
    best_dev: dict = field(default_factory=dict)
    history: list[dict] = field(default_factory=list)
    seconds: float = 0.0
    stopped_by: str = "max_epochs"
    segments_per_s: float = 0.0


def train_span_model(
    model: SpanLinker,
    segments: Sequence[Segment],
    vectors: ConceptVectors,
    *,
    pad_id: int,
    evaluate_dev: Callable[[], dict] | None = None,
    options: DetectorTrainingOptions | None = None,
    device: str = "cpu",
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> DetectorTrainingResult:
    """Fine-tune `model` in place; `evaluate_dev()` returns {"score", ...} after each epoch (None: no
    early stopping, the last epoch is kept)."""
    options = options or DetectorTrainingOptions()
    rng = random.Random(options.seed)
    torch.manual_seed(options.seed)
    model.to(device).train()
    _freeze(model, options)
    encoder_params = [p for n, p in model.named_parameters() if p.requires_grad and n.startswith("encoder.")]
    head_params = [p for n, p in model.named_parameters() if p.requires_grad and not n.startswith("encoder.")]
    optimizer = torch.optim.AdamW(
        [
            {"params": encoder_params, "lr": options.learning_rate},
            {"params": head_params, "lr": options.head_learning_rate},
        ],
        eps=1e-8,
        weight_decay=options.weight_decay,
    )
    steps_per_epoch = -(-len(segments) // options.batch_segments)
    total_steps = max(1, steps_per_epoch * options.max_epochs)
    warmup = int(options.warmup_fraction * total_steps)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda step: (
            (step + 1) / max(1, warmup)
            if step < warmup
            else max(0.0, (total_steps - step) / max(1, total_steps - warmup))
        ),
    )
    pools: dict[tuple[int, int], set[int]] = {}  # (segment, gold) -> concepts once ranked above the gold
    result = DetectorTrainingResult()
    best_state: dict[str, torch.Tensor] | None = None
    best_score = -1.0
    bad_epochs = 0
    started = time.perf_counter()
    for epoch in range(1, options.max_epochs + 1):
        batches = _length_batches(segments, options.batch_segments, rng)
        losses = {"span": 0.0, "type": 0.0, "link": 0.0}
        for number, batch in enumerate(batches):
            cancel.raise_if_cancelled()
            parts = _step_losses(
                model, [segments[i] for i in batch], batch, vectors, pools, rng, pad_id, device
            )
            loss = parts["span"] + parts["type"] + parts["link"]
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            result.steps += 1
            for key in losses:
                losses[key] += float(parts[key].detach())
            done = (epoch - 1) * steps_per_epoch + number + 1
            progress(done, total_steps, f"epoch {epoch}: loss {float(loss.detach()):.3f}")
        result.epochs = epoch
        entry = {"epoch": epoch, **{f"{k}_loss": round(v / steps_per_epoch, 4) for k, v in losses.items()}}
        entry["hard_negative_pool"] = sum(len(p) for p in pools.values())
        entry["seconds"] = round(time.perf_counter() - started, 1)
        if evaluate_dev is not None:
            model.eval()
            dev = evaluate_dev()
            model.train()
            entry.update(dev)
            if dev["score"] > best_score:
                best_score, bad_epochs, result.best_epoch, result.best_dev = dev["score"], 0, epoch, dev
                best_state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
            else:
                bad_epochs += 1
        result.history.append(entry)
        log.info("detector epoch %d: %s", epoch, entry)
        if evaluate_dev is not None and bad_epochs >= options.patience:
            result.stopped_by = "patience"
            break
    if best_state is not None:
        model.load_state_dict(best_state)
    else:
        result.best_epoch = result.epochs
    result.seconds = time.perf_counter() - started
    result.segments_per_s = round(result.steps * options.batch_segments / max(result.seconds, 1e-9), 2)
    model.eval()
    return result


def _length_batches(segments: Sequence[Segment], size: int, rng: random.Random) -> list[list[int]]:
    """Batches of segments of similar length (padding is pure cost on a CPU: random batches of NCBI
    segments padded ~40 % of their pieces), in a new random order each epoch; the jitter makes the
    batches themselves differ between epochs too."""
    order = sorted(range(len(segments)), key=lambda i: len(segments[i].chunk) + rng.random() * 16)
    batches = [order[i : i + size] for i in range(0, len(order), size)]
    rng.shuffle(batches)
    return batches


def _freeze(model: SpanLinker, options: DetectorTrainingOptions) -> None:
    encoder = model.encoder
    if options.freeze_embeddings:
        for parameter in encoder.embeddings.parameters():
            parameter.requires_grad = False
    layers = encoder.encoder.layer
    if options.trainable_layers is not None:
        for layer in layers[: max(0, len(layers) - options.trainable_layers)]:
            for parameter in layer.parameters():
                parameter.requires_grad = False
    if getattr(encoder, "pooler", None) is not None:  # unused: last_hidden_state only
        for parameter in encoder.pooler.parameters():
            parameter.requires_grad = False


def _step_losses(
    model: SpanLinker,
    batch: Sequence[Segment],
    indices: Sequence[int],
    vectors: ConceptVectors,
    pools: dict[tuple[int, int], set[int]],
    rng: random.Random,
    pad_id: int,
    device: str,
) -> dict[str, torch.Tensor]:
    inputs = collate([s.chunk for s in batch], pad_id, device)
    hidden, logits = model(inputs["input_ids"], inputs["attention_mask"])
    mask = model.mask(inputs["text"], inputs["word_starts"])
    target = torch.zeros_like(logits)
    rows, starts, ends, types, concepts, keys = [], [], [], [], [], []
    for row, (segment, index) in enumerate(zip(batch, indices, strict=True)):
        for g, gold in enumerate(segment.gold):
            length = gold.last - gold.first
            if length < model.max_span:
                target[row, gold.first, length] = 1.0
            rows.append(row)
            starts.append(gold.first)
            ends.append(gold.last)
            types.append(gold.type_index)
            concepts.append(gold.concept_index)
            keys.append((index, g))
    # Summed over the batch's candidate spans and divided by its gold spans (the reference code takes
    # the mean over candidate spans: ~5,000 per batch here, so the span term sent about 1 % of the
    # encoder's gradient next to the linking and type terms, and on NCBI-disease dev strict span F1
    # was 39 after two CPU epochs with it; per gold span, the three terms weigh alike).
    span_loss = torch.nn.functional.binary_cross_entropy_with_logits(
        logits[mask], target[mask], reduction="sum"
    ) / max(1.0, float(target[mask].sum()))
    zero = hidden.sum() * 0.0
    if not rows:
        return {"span": span_loss, "type": zero, "link": zero}
    span_vectors, type_logits = model.span_vectors(
        hidden,
        torch.tensor(rows, device=device),
        torch.tensor(starts, device=device),
        torch.tensor(ends, device=device),
    )
    type_loss = torch.nn.functional.cross_entropy(type_logits, torch.tensor(types, device=device))
    linked = [i for i, c in enumerate(concepts) if c >= 0]
    if not linked:
        return {"span": span_loss, "type": type_loss, "link": zero}
    scores = vectors.scores(span_vectors[linked])  # [M, concepts]
    _mine(scores.detach(), [concepts[i] for i in linked], [keys[i] for i in linked], pools)
    slots, slot_mask = _candidate_slots(
        [concepts[i] for i in linked], [keys[i] for i in linked], pools, len(vectors), rng
    )
    picked = torch.gather(scores, 1, slots.to(device)).masked_fill(~slot_mask.to(device), -1e4)
    gold = torch.zeros(len(linked), dtype=torch.long, device=device)  # the gold sits in slot 0
    return {"span": span_loss, "type": type_loss, "link": torch.nn.functional.cross_entropy(picked, gold)}


def _mine(scores: torch.Tensor, golds: list[int], keys: list, pools: dict) -> None:
    """Concepts ranked above the gold within the top MINING_TOP_K join the mention's pool (§C.4 step 3)."""
    top = scores.topk(min(MINING_TOP_K, scores.shape[1]), dim=1).indices.tolist()
    for ranked, gold, key in zip(top, golds, keys, strict=True):
        for concept in ranked:
            if concept == gold:
                break
            pools.setdefault(key, set()).add(concept)


def _candidate_slots(
    golds: list[int], keys: list, pools: dict, concepts: int, rng: random.Random
) -> tuple[torch.Tensor, torch.Tensor]:
    """[M, 1 + R + H] concept rows (gold first) and which slots are real (empty hard slots masked)."""
    width = 1 + RANDOM_NEGATIVES + HARD_NEGATIVES
    slots = torch.zeros((len(golds), width), dtype=torch.long)
    real = torch.zeros((len(golds), width), dtype=torch.bool)
    for row, (gold, key) in enumerate(zip(golds, keys, strict=True)):
        randoms = []
        while len(randoms) < min(RANDOM_NEGATIVES, concepts - 1):
            concept = rng.randrange(concepts)
            if concept != gold and concept not in randoms:
                randoms.append(concept)
        pool = sorted(pools.get(key, set()) - {gold})
        hard = rng.sample(pool, min(HARD_NEGATIVES, len(pool)))
        chosen = [gold, *randoms, *hard]
        slots[row, : len(chosen)] = torch.tensor(chosen)
        real[row, : len(chosen)] = True
    return slots, real
