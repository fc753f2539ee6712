"""Span precision / recall / F1 for mention detection: strict (same offsets) and partial (overlap)."""

from __future__ import annotations

from collections.abc import Sequence

from core.documents import Span


def span_scores(gold: Sequence[Sequence[Span]], predicted: Sequence[Sequence[Span]]) -> dict[str, float]:
    """Micro-averaged over documents. Partial match: a span counts when it overlaps one on the other side."""
    strict_hits = gold_total = predicted_total = 0
    partial_predicted = partial_gold = 0
    for gold_spans, predicted_spans in zip(gold, predicted, strict=True):
        gold_set = {(s.start, s.end) for s in gold_spans}
        predicted_set = {(s.start, s.end) for s in predicted_spans}
        strict_hits += len(gold_set & predicted_set)
        gold_total += len(gold_set)
        predicted_total += len(predicted_set)
        partial_predicted += sum(1 for p in predicted_spans if any(p.overlaps(g) for g in gold_spans))
        partial_gold += sum(1 for g in gold_spans if any(g.overlaps(p) for p in predicted_spans))
    return {
        **_prf(strict_hits, strict_hits, predicted_total, gold_total, ""),
        **_prf(partial_predicted, partial_gold, predicted_total, gold_total, "partial_"),
        "gold": gold_total,
        "predicted": predicted_total,
    }


def _prf(correct_predicted: int, found_gold: int, predicted: int, gold: int, prefix: str) -> dict[str, float]:
    precision = correct_predicted / predicted if predicted else 0.0
    recall = found_gold / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {f"{prefix}precision": precision, f"{prefix}recall": recall, f"{prefix}f1": f1}
