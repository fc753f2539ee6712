"""What a retrain will do on this machine, decided before it starts: which models are worth training
here, and the phases its one progress bar runs through.

The cross-encoder reranker is a BERT-sized model: on a GPU a few minutes of fine-tuning cover several
epochs, on a CPU the same budget covers a small fraction of one epoch (issue 12 reports 0.06 of an
epoch in 240 s), which cannot improve it. So it is proposed only where a GPU is
there; the curator may still tick it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.model_kinds import KINDS

if TYPE_CHECKING:
    from core.store.project import Project

log = logging.getLogger(__name__)

PREPARE_SHARE = 0.05
"""Share of one model's training budget that preparing takes (pruning and indexing curator synonyms,
building the training set); each kind's own phases and shares are in the registry (core.model_kinds)."""
NOMINAL_TRAINING_SECONDS = 240.0
"""A training phase's expected length when no time limit is set: the phases' shares of the one progress
bar, never a limit (training is bounded by epochs)."""


@dataclass(frozen=True)
class RerankerAdvice:
    """Whether to train the reranker by default here, and the sentence that says why."""

    worthwhile: bool
    reason: str


def reranker_advice(device: str = "auto") -> RerankerAdvice:
    """Train the reranker by default only when it would run on a GPU."""
    import torch

    if device != "cpu" and torch.cuda.is_available():
        name = torch.cuda.get_device_name(0)
        return RerankerAdvice(True, f"the reranker trains on the GPU ({name})")
    why = "no GPU is available" if device != "cpu" else "the device setting is CPU"
    return RerankerAdvice(
        False,
        f"reranker off by default: {why}, and on a CPU one epoch of the cross-encoder takes about an hour "
        "per 5,000 training mentions",
    )


@dataclass(frozen=True)
class RetrainChoice:
    """What a retrain trains: `kinds` (ticked), `offered` (the kinds a front end lets the curator tick),
    and `note`, the reason a kind was left out (shown by both front ends), else ""."""

    kinds: tuple[str, ...]
    offered: tuple[str, ...]
    advice: RerankerAdvice
    note: str = ""


def retrain_choice(project: Project, device: str = "auto", asked: Sequence[str] | None = None) -> RetrainChoice:
    """The one retrain policy of the CLI and the desk: the kinds asked for, as asked; otherwise every
    registered kind offered here (core.model_kinds: the linking kinds and the tagger always, the span
    model when one is in force), so the spans a curator added, moved or deleted teach detection at the
    next click (issue 32); the promotion rule decides per type whether the tagger goes in force. A kind
    that wants a GPU (the reranker) is left out where none makes training it worthwhile."""
    offered = tuple(
        name
        for name, kind in KINDS.items()
        if kind.offered == "always" or project.models.active_model(name) is not None
    )
    advice = reranker_advice(device)
    if asked:
        return RetrainChoice(tuple(asked), offered, advice)
    if advice.worthwhile:
        return RetrainChoice(offered, offered, advice)
    kept = tuple(k for k in offered if not KINDS[k].wants_gpu)
    return RetrainChoice(kept, offered, advice, advice.reason)


def retrain_phases(kinds: Sequence[str], max_seconds: float | None) -> list[tuple[str, float]]:
    """(phase, expected seconds) in the order `retrain` runs them, for `core.progress.PhasedProgress`:
    preparing, then each kind's phases as the registry declares them."""
    budget = max(1.0, float(max_seconds)) if max_seconds else NOMINAL_TRAINING_SECONDS
    phases = [("preparing", PREPARE_SHARE * budget)]
    for name, kind in KINDS.items():
        if name in kinds:
            phases += [(phase, share * budget) for phase, (_, share) in zip(kind.phase_names(), kind.phases, strict=True)]
    return phases
