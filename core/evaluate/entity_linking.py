"""End-to-end entity-linking metrics with neleval's definitions (the protocol of methods.md §C.10).

The `neleval` package (3.1.1) installs from PyPI but does not import on Python 3.11
(`from collections import Sequence`), so its two measures are reproduced here from its documented
definitions (doc/approximate.rst, `Measure` in neleval/annotation.py):

- `strong_all_match` (sets, micro): a system annotation is right when gold has one with the same
  document, offsets and KB id; duplicates count once. Without KB ids: `strong_mention_match`.
- `overlap-maxmax::span+kbid` (micro): annotations pair up when they share document and KB id and
  their spans overlap. Each system annotation scores the fraction of its characters covered by its
  best-overlapping gold one (precision = mean over system annotations); each gold annotation the
  fraction of its characters covered by its best-overlapping system one (recall = mean over gold).
  Without KB ids: `overlap-maxmax::span`.

Offsets here are end-exclusive (Curalink's), neleval's are inclusive; the character counts agree.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Annotation:
    doc_id: str
    start: int
    end: int  # exclusive
    kb_id: str | None = None


def prf(correct_predicted: float, predicted: int, correct_gold: float, gold: int) -> dict[str, float]:
    precision = correct_predicted / predicted if predicted else 0.0
    recall = correct_gold / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def _key(annotation: Annotation, with_kb_id: bool) -> tuple:
    base = (annotation.doc_id, annotation.start, annotation.end)
    return (*base, annotation.kb_id) if with_kb_id else base


def strong_match(
    gold: Iterable[Annotation], predicted: Iterable[Annotation], *, with_kb_id: bool = True
) -> dict[str, float]:
    """neleval `strong_all_match` (with KB ids) or `strong_mention_match` (spans only)."""
    gold_keys = {_key(a, with_kb_id) for a in gold}
    predicted_keys = {_key(a, with_kb_id) for a in predicted}
    hits = len(gold_keys & predicted_keys)
    return {
        **prf(hits, len(predicted_keys), hits, len(gold_keys)),
        "gold": len(gold_keys),
        "predicted": len(predicted_keys),
    }


def overlap_maxmax(
    gold: Iterable[Annotation], predicted: Iterable[Annotation], *, with_kb_id: bool = True
) -> dict[str, float]:
    """neleval `overlap-maxmax::span+kbid` (with KB ids) or `overlap-maxmax::span`."""
    gold = list(gold)
    predicted = list(predicted)
    groups: dict[tuple, list[Annotation]] = defaultdict(list)
    for annotation in gold:
        groups[(annotation.doc_id, annotation.kb_id if with_kb_id else None)].append(annotation)
    best_gold: dict[int, int] = {}  # gold index -> most characters covered by one system annotation
    index_of = {id(a): i for i, a in enumerate(gold)}
    covered_predicted = 0.0
    for annotation in predicted:
        candidates = groups.get((annotation.doc_id, annotation.kb_id if with_kb_id else None), [])
        most = 0
        for other in candidates:
            shared = min(annotation.end, other.end) - max(annotation.start, other.start)
            if shared > 0:
                most = max(most, shared)
                i = index_of[id(other)]
                best_gold[i] = max(best_gold.get(i, 0), shared)
        if most > 0:
            covered_predicted += most / (annotation.end - annotation.start)
    covered_gold = sum(
        shared / (gold[i].end - gold[i].start) for i, shared in best_gold.items() if shared > 0
    )
    return {
        **prf(covered_predicted, len(predicted), covered_gold, len(gold)),
        "gold": len(gold),
        "predicted": len(predicted),
    }


def linking_report(gold: list[Annotation], predicted: list[Annotation]) -> dict[str, dict[str, float]]:
    """The four blocks `evaluate detect` reports: spans strict / partial, span + concept strict / partial."""
    return {
        "strict": strong_match(gold, predicted, with_kb_id=False),
        "partial": overlap_maxmax(gold, predicted, with_kb_id=False),
        "end_to_end_strict": strong_match(gold, predicted),
        "end_to_end_partial": overlap_maxmax(gold, predicted),
    }
