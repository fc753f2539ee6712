"""Inter-annotator agreement between two curators of one project, per document and overall.

- Concept agreement: Cohen's kappa (scikit-learn's `cohen_kappa_score`) on the label each curator gave
  a mention both of them decided: the chosen concept for accept/correct, "-1" for not-in-KB, and
  "(reject)" / "(ambiguous)" for the other verdicts.
- Span agreement: exact-span F1 between the two curators' mention sets: the imported mentions, minus
  those the curator deleted, plus those the curator added (their own add/delete decisions, so one
  curator's edits never count for the other).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.store.curation import EDIT_ACTIONS, LINKING_ACTIONS, NOT_IN_KB

if TYPE_CHECKING:
    from core.store.project import Project


@dataclass(frozen=True)
class Disagreement:
    """A mention both curators decided differently: what the adjudication view lists."""

    document_id: str
    mention_id: int
    text: str
    start: int
    end: int
    label_a: str
    label_b: str


@dataclass
class Agreement:
    curator_a: str
    curator_b: str
    kappa: float | None = None
    mentions_compared: int = 0
    mentions_agreed: int = 0
    span_precision: float = 0.0
    span_recall: float = 0.0
    span_f1: float = 0.0
    per_document: dict[str, dict] = field(default_factory=dict)
    disagreements: list[Disagreement] = field(default_factory=list)


def cohen_kappa(labels_a: list[str], labels_b: list[str]) -> float | None:
    """Cohen's kappa of two label sequences; None when undefined (nothing compared).

    When both curators used one and the same label throughout, chance agreement is 1 and the
    textbook formula is 0/0; we report 1.0 there (they agree perfectly), as several tools do.
    """
    from sklearn.metrics import cohen_kappa_score

    if len(labels_a) != len(labels_b):
        raise ValueError("the two curators' label lists differ in length")
    if not labels_a:
        return None
    if len(set(labels_a) | set(labels_b)) == 1:
        return 1.0
    return float(cohen_kappa_score(labels_a, labels_b))


def span_scores(reference: set, other: set) -> tuple[float, float, float]:
    """Precision, recall, F1 of `other` against `reference` (both empty: perfect agreement)."""
    if not reference and not other:
        return 1.0, 1.0, 1.0
    hits = len(reference & other)
    precision = hits / len(other) if other else 0.0
    recall = hits / len(reference) if reference else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def label_of(decision) -> str:
    """A decision as a label to compare; a link to several concepts compares as a set (any order)."""
    if decision.action in LINKING_ACTIONS:
        return "|".join(sorted(decision.concept_id.split("|")))
    if decision.action == "nil":
        return NOT_IN_KB
    return f"({decision.action})"


def agreement(project: Project, curator_a: str, curator_b: str) -> Agreement:
    """Kappa on concepts and span F1 on mentions, over documents both curators worked on."""
    from core.store.curation import replay

    rows_a, rows_b = project.curation.decision_history(curator_a), project.curation.decision_history(curator_b)
    state_a, state_b = replay(rows_a), replay(rows_b)
    mentions = _mentions(project)
    worked_a = {mentions[r.mention_id][0] for r in rows_a if r.mention_id in mentions}
    worked_b = {mentions[r.mention_id][0] for r in rows_b if r.mention_id in mentions}
    shared_documents = worked_a & worked_b
    result = Agreement(curator_a, curator_b)
    by_document: dict[str, tuple[list[str], list[str]]] = defaultdict(lambda: ([], []))
    for mention_id in sorted(set(state_a) & set(state_b)):
        if mention_id not in mentions:
            continue
        document_id, start, end, text, _origin = mentions[mention_id]
        a, b = label_of(state_a[mention_id]), label_of(state_b[mention_id])
        by_document[document_id][0].append(a)
        by_document[document_id][1].append(b)
        if a != b:
            result.disagreements.append(Disagreement(document_id, mention_id, text, start, end, a, b))
    all_a = [x for labels, _ in by_document.values() for x in labels]
    all_b = [x for _, labels in by_document.values() for x in labels]
    result.kappa = cohen_kappa(all_a, all_b)
    result.mentions_compared = len(all_a)
    result.mentions_agreed = sum(x == y for x, y in zip(all_a, all_b, strict=True))
    spans_a, spans_b = _spans(mentions, rows_a), _spans(mentions, rows_b)
    hits = total_a = total_b = 0
    for document_id in sorted(shared_documents):
        a, b = spans_a.get(document_id, set()), spans_b.get(document_id, set())
        labels = by_document.get(document_id, ([], []))
        _, _, f1 = span_scores(a, b)
        result.per_document[document_id] = {
            "kappa": cohen_kappa(*labels),
            "mentions_compared": len(labels[0]),
            "span_f1": round(f1, 4),
        }
        hits += len(a & b)
        total_a += len(a)
        total_b += len(b)
    precision = hits / total_b if total_b else 1.0
    recall = hits / total_a if total_a else 1.0
    result.span_precision, result.span_recall = precision, recall
    result.span_f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return result


def _mentions(project: Project) -> dict[int, tuple[str, int, int, str, str]]:
    """Mention id -> (document id, start, end, text, origin), removed ones included (edits refer to them)."""
    return project.documents.mention_positions()


def _spans(mentions: dict, rows: list) -> dict[str, set[tuple[int, int]]]:
    """Per document, the curator's view of the mention spans (imported, minus deleted, plus added)."""
    added: dict[int, tuple[int, int]] = {}
    deleted: set[int] = set()
    moved: dict[int, tuple[int, int]] = {}
    for row in rows:
        if row.action not in EDIT_ACTIONS:
            continue
        detail = json.loads(row.detail_json or "{}")
        if row.action == "add_mention":
            added[row.mention_id] = (detail.get("start"), detail.get("end"))
        elif row.action == "delete_mention":
            (deleted.discard if detail.get("restored") else deleted.add)(row.mention_id)
        elif row.action == "adjust_span":
            moved[row.mention_id] = (detail.get("new_start"), detail.get("new_end"))
    spans: dict[str, set[tuple[int, int]]] = defaultdict(set)
    for mention_id, (document_id, start, end, _text, origin) in mentions.items():
        if mention_id in deleted:
            continue
        if origin == "curator":
            if mention_id not in added:
                continue
            start, end = added[mention_id]
        if mention_id in moved:
            start, end = moved[mention_id]
        spans[document_id].add((start, end))
    return spans


def curators(project: Project) -> list[str]:
    """Every named curator who recorded a decision, in order of first appearance."""
    return project.curation.curators()
