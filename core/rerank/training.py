"""Train the packed cross-encoder: cross-entropy at each [MASK] over retriever candidates (methods.md B.7).

One loop for every packing level. Deviations from the paper, on purpose:
- the gold concept is always present in training (inserted with its preferred name when the
  retriever missed it), so every mention teaches something;
- candidate order is shuffled per example, so the model cannot learn "first is right";
- early stopping watches dev acc@1 (what we report), not the macro-F1 of the [MASK] labels, and can
  evaluate within an epoch (`eval_every_seconds`) because CPU budgets are shorter than an epoch;
  the best weights are restored at the end.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from core.documents import Candidate, Document, Mention
from core.kb.identifiers import split_ids
from core.kb.knowledge_base import KnowledgeBase
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from core.rerank.cross_encoder import CrossEncoder, batches_by_length
from core.rerank.device import DeviceChoice, TorchEngine, select_device
from core.rerank.packing import Packer
from core.rerank.reranker import CrossEncoderReranker

log = logging.getLogger(__name__)


# MiniLM on NCBI, 150 s on 2 busy cores, compact C=8: 3e-4 with 1,024-token batches and the listwise
# loss reached 23 % dev acc@1 (mask loss: 10 %, chance 12.5 %); 1e-4 x 4,096 tokens made ~6 steps in 40 s
DEFAULT_LEARNING_RATE = 3e-4
CPU_TRAIN_BATCH_TOKENS = 1024
GPU_TRAIN_BATCH_TOKENS = 16384  # the H100 runs of the README: ~500-860 training mentions/s packed


@dataclass
class TrainingConfig:
    learning_rate: float = DEFAULT_LEARNING_RATE
    max_epochs: int = 16
    patience: int = 3
    max_seconds: float | None = None
    eval_every_seconds: float | None = None
    batch_tokens: int | None = None  # None: 1,024 on a CPU (more updates in a budget), 16,384 on a GPU
    docs_per_chunk: int = 16
    seed: int = 42
    # "mask": cross-entropy at each [MASK] (the paper); "listwise": plus a softmax over each
    # mention's candidates in the batch (score = logit1 - logit0), which ranks after far fewer steps
    # when one candidate in C is positive (measured on NCBI, see the README note)
    loss: str = "listwise"


@dataclass
class TrainingResult:
    epochs: float
    steps: int
    train_mentions: int  # mention-equivalents trained on (pairs / candidates per mention)
    train_seconds: float
    examples_per_s: float
    best_dev_acc: float
    stopped_by: str
    history: list[dict[str, float]] = field(default_factory=list)


def gold_ids(mention: Mention, kb: KnowledgeBase | None = None) -> set[str]:
    """Every id that counts as right for a mention: each part of a composite, resolved through the KB."""
    ids: set[str] = set()
    for part in split_ids(mention.concept_id):
        ids.add(part)
        if kb is not None:
            resolved = kb.resolve(part)
            if resolved:
                ids.add(resolved)
    return ids


def is_correct(mention: Mention, concept_id: str, kb: KnowledgeBase | None = None) -> bool:
    gold = gold_ids(mention, kb)
    if concept_id in gold:
        return True
    resolved = kb.resolve(concept_id) if kb is not None else None
    return resolved is not None and resolved in gold


def rerank_accuracy(
    reranker: CrossEncoderReranker,
    documents: Sequence[Document],
    candidates: Sequence[Sequence[Sequence[Candidate]]],
    kb: KnowledgeBase | None = None,
    cancel: CancelToken = NEVER_CANCELLED,
) -> float:
    """acc@1 over every linked mention; a mention without candidates counts as wrong (methods.md B.9)."""
    return ranked_accuracy(documents, reranker.rerank(documents, candidates, cancel=cancel), kb)


def ranked_accuracy(
    documents: Sequence[Document],
    ranked: Sequence[Sequence[Sequence[Candidate]]],
    kb: KnowledgeBase | None = None,
) -> float:
    """acc@1 of already ordered candidates (the first one counts)."""
    total = correct = 0
    for document, per_doc in zip(documents, ranked):
        for mention, cands in zip(document.mentions, per_doc):
            if not gold_ids(mention):
                continue
            total += 1
            correct += bool(cands) and is_correct(mention, cands[0].concept_id, kb)
    return correct / total if total else 0.0


def labelled_examples(
    documents: Sequence[Document],
    candidates: Sequence[Sequence[Sequence[Candidate]]],
    kb: KnowledgeBase,
) -> list[list[list[tuple[str, int]]]]:
    """(candidate name, label) per document and mention, gold inserted when the retriever missed it.

    Unlinked mentions and golds the KB does not know get an empty list (nothing to learn from).
    """
    out: list[list[list[tuple[str, int]]]] = []
    for document, per_doc in zip(documents, candidates):
        rows: list[list[tuple[str, int]]] = []
        for mention, cands in zip(document.mentions, per_doc):
            gold = gold_ids(mention, kb)
            if not gold:
                rows.append([])
                continue
            row = [(c.name, int(is_correct(mention, c.concept_id, kb))) for c in cands]
            if not any(label for _, label in row):
                concept = next((kb.get(g) for g in sorted(gold) if kb.get(g) is not None), None)
                if concept is None:
                    rows.append([])
                    continue
                if len(row) >= max(1, len(cands)) and row:
                    row[-1] = (concept.preferred_name, 1)  # keep C candidates: the gold takes the last slot
                else:
                    row.append((concept.preferred_name, 1))
            rows.append(row)
        out.append(rows)
    return out


def listwise_loss(logits: torch.Tensor, target: torch.Tensor, batch: Sequence) -> torch.Tensor:
    """Mean over mentions of -log softmax(gold) across that mention's candidates in this batch.

    Mentions whose gold is not in the batch (a pair-level mention split across batches) add nothing.
    """
    keys = [(p.document, m) for p in batch for m, _ in p.pairs]
    groups: dict[tuple[int, int], list[int]] = {}
    for index, key in enumerate(keys):
        groups.setdefault(key, []).append(index)
    score = logits[:, 1] - logits[:, 0]
    terms = []
    for members in groups.values():
        if len(members) < 2:
            continue
        index = torch.tensor(members, device=logits.device)
        gold = target[index]
        if int(gold.sum()) != 1:
            continue
        terms.append(torch.logsumexp(score[index], 0) - score[index][gold.argmax()])
    return torch.stack(terms).mean() if terms else score.sum() * 0.0


def train(
    encoder: CrossEncoder,
    train_documents: Sequence[Document],
    train_candidates: Sequence[Sequence[Sequence[Candidate]]],
    dev_documents: Sequence[Document],
    dev_candidates: Sequence[Sequence[Sequence[Candidate]]],
    kb: KnowledgeBase,
    config: TrainingConfig | None = None,
    device: str = "auto",
    packer: Packer | None = None,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> TrainingResult:
    """Fine-tune `encoder` in place with its packing level; returns speed and dev history."""
    config = config or TrainingConfig()
    if config.loss not in ("mask", "listwise"):
        raise ValueError(f"unknown loss {config.loss!r}; expected mask or listwise")
    rng = random.Random(config.seed)
    torch.manual_seed(config.seed)
    choice: DeviceChoice = select_device(device)
    packer = packer or encoder.packer()
    model = encoder.model.to(choice.device)
    batch_tokens = config.batch_tokens or (
        GPU_TRAIN_BATCH_TOKENS if choice.device == "cuda" else CPU_TRAIN_BATCH_TOKENS
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=config.learning_rate)
    scaler = torch.amp.GradScaler("cuda") if choice.amp_dtype == torch.float16 else None
    loss_fn = torch.nn.CrossEntropyLoss()
    examples = labelled_examples(train_documents, train_candidates, kb)
    dev_reranker = CrossEncoderReranker(
        encoder, packer=packer, engine=TorchEngine(encoder, choice), fusion_weight=0.0
    )
    dev_reranker.choice = choice

    start = time.perf_counter()
    train_seconds = 0.0
    last_eval = start
    steps = 0
    mentions_seen = 0.0  # in whole mentions: pairs trained on / pairs per mention (budgets end mid-chunk)
    best_acc = -1.0
    best_state: dict[str, torch.Tensor] | None = None
    bad_evals = 0
    history: list[dict[str, float]] = []
    stopped_by = "max_epochs"
    total_mentions = sum(1 for doc in examples for row in doc if row)
    pairs_per_mention = sum(len(row) for doc in examples for row in doc) / max(1, total_mentions)

    steps_at_eval = 0

    def evaluate(epoch_progress: float) -> bool:
        """Dev acc@1; True when patience ran out."""
        nonlocal best_acc, best_state, bad_evals, last_eval, steps_at_eval
        steps_at_eval = steps
        model.eval()
        acc = (
            rerank_accuracy(dev_reranker, dev_documents, dev_candidates, kb, cancel) if dev_documents else 0.0
        )
        model.train()
        history.append({"epoch": epoch_progress, "dev_acc@1": acc, "seconds": time.perf_counter() - start})
        log.info(
            "reranker epoch %.2f: dev acc@1 %.2f (best %.2f)",
            epoch_progress,
            100 * acc,
            100 * max(best_acc, acc),
        )
        last_eval = time.perf_counter()
        if acc > best_acc:
            best_acc, bad_evals = acc, 0
            best_state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
            return False
        bad_evals += 1
        return bad_evals >= config.patience

    def out_of_time() -> bool:
        return config.max_seconds is not None and time.perf_counter() - start >= config.max_seconds

    model.train()
    epoch = 0
    done = False
    order = list(range(len(train_documents)))
    while epoch < config.max_epochs and not done:
        rng.shuffle(order)
        seen_this_epoch = 0
        for chunk_start in range(0, len(order), config.docs_per_chunk):
            chunk = order[chunk_start : chunk_start + config.docs_per_chunk]
            docs = [train_documents[i] for i in chunk]
            names: list[list[list[str]]] = []
            labels: list[list[list[int]]] = []
            for i in chunk:
                doc_names, doc_labels = [], []
                for row in examples[i]:
                    shuffled = row[:]
                    rng.shuffle(shuffled)
                    doc_names.append([n for n, _ in shuffled])
                    doc_labels.append([y for _, y in shuffled])
                names.append(doc_names)
                labels.append(doc_labels)
            inputs = packer.pack(docs, names)
            batches = list(batches_by_length(inputs, batch_tokens))
            rng.shuffle(batches)
            for batch_ids in batches:
                cancel.raise_if_cancelled()
                if out_of_time():  # checked per step: one chunk of pair inputs can take minutes
                    break
                batch = [inputs[i] for i in batch_ids]
                target = torch.tensor(
                    [labels[p.document][m][c] for p in batch for m, c in p.pairs], device=choice.device
                )
                step_start = time.perf_counter()
                optimizer.zero_grad(set_to_none=True)
                if choice.amp_dtype is not None:
                    with torch.autocast(device_type=choice.device, dtype=choice.amp_dtype):
                        logits = encoder.mask_logits(batch, choice.device).float()
                else:
                    logits = encoder.mask_logits(batch, choice.device)
                loss = loss_fn(logits, target)
                if config.loss == "listwise":
                    loss = loss + listwise_loss(logits, target, batch)
                if scaler is not None:
                    scaler.scale(loss).backward()
                    scaler.step(optimizer)
                    scaler.update()
                else:
                    loss.backward()
                    optimizer.step()
                train_seconds += time.perf_counter() - step_start
                steps += 1
                step_mentions = sum(len(p.pairs) for p in batch) / pairs_per_mention
                mentions_seen += step_mentions
                seen_this_epoch += step_mentions
            progress(int(mentions_seen), total_mentions * config.max_epochs, f"training epoch {epoch + 1}")
            fraction = epoch + seen_this_epoch / max(1, total_mentions)
            if out_of_time():
                stopped_by = "max_seconds"
                done = True
                break
            if config.eval_every_seconds and time.perf_counter() - last_eval >= config.eval_every_seconds:
                if evaluate(fraction):
                    stopped_by, done = "patience", True
                    break
        epoch += 1
        if not done and not config.eval_every_seconds and evaluate(float(epoch)):
            stopped_by, done = "patience", True
    if steps > steps_at_eval and dev_documents:
        evaluate(mentions_seen / max(1, total_mentions))
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    epochs = mentions_seen / max(1, total_mentions)
    result = TrainingResult(
        epochs=epochs,
        steps=steps,
        train_mentions=round(mentions_seen),
        train_seconds=train_seconds,
        examples_per_s=mentions_seen / train_seconds if train_seconds else 0.0,
        best_dev_acc=max(best_acc, 0.0),
        stopped_by=stopped_by,
        history=history,
    )
    log.info(  # one sentence, not the result's dictionary (its history is in metrics.json)
        "reranker training done: %d steps, %.2f epochs, stopped by %s; best dev acc@1 %.2f; %.1f s",
        result.steps,
        result.epochs,
        result.stopped_by,
        100 * result.best_dev_acc,
        result.train_seconds,
    )
    return result
