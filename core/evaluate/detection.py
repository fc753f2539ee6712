"""`evaluate detect`: exactly what `link --detect` would store, read against gold spans and concepts.

On the split's documents with their mentions removed (raw text), each detector tags as `link --detect`
tags (the same choice, core.project_detector: the span model in force, else the project's dictionary of
every routed type; the dictionary learns no strings from the evaluated split's own annotations), its
mentions typed as they would be stored, then linked by the models in force with the same routing and
candidates - the top suggestion is the concept. Rows, each with a per-type breakdown:
- "link --detect: <detector> + linker": the product path; its figures equal a score of the top stored
  suggestion of each mention `link --detect` stores on the same raw text (tests/test_detect_evaluation);
- "<detector>": the detector's own concepts (the dictionary's id when the name is unique to one concept,
  else the first of its ids; the span model's collective linking);
- with a span model in force, "span model alone" (without the dictionary filling its gaps) and the
  dictionary's rows too (what `link --detect` would do without it).

Gold: every gold mention span; its KB id is the first id of a composite (methods.md §C.3, the paper's
protocol) resolved to the KB's primary id. Metrics: core.evaluate.entity_linking (neleval's
definitions); per type, a mention is scored against the gold of its type (typed P/R/F1) and
"span_recall" counts the gold spans of the type found by a detected span of any type.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from core.documents import Document, Mention
from core.evaluate.entity_linking import Annotation, linking_report
from core.kb.knowledge_base import KnowledgeBase
from core.progress import NEVER_CANCELLED, CancelToken

if TYPE_CHECKING:
    from core.store.project import Project

log = logging.getLogger(__name__)

GOLD_ORIGINS = ("gold", "imported")


def _kb_id(concept_id: str, kb: KnowledgeBase) -> str | None:
    from core.documents import split_concept_ids

    ids = split_concept_ids(concept_id)
    if not ids:
        return None
    return kb.resolve(ids[0]) or ids[0]


def gold_annotations(documents: Sequence[Document], kb: KnowledgeBase) -> list[Annotation]:
    return [
        Annotation(d.doc_id, m.start, m.end, _kb_id(m.concept_id, kb))
        for d in documents
        for m in d.mentions
        if m.origin in GOLD_ORIGINS or m.origin == "curator"
    ]


def predicted_annotations(
    documents: Sequence[Document], found: Sequence[Sequence[Mention]], kb: KnowledgeBase
) -> list[Annotation]:
    return [
        Annotation(d.doc_id, m.start, m.end, _kb_id(m.concept_id or _dictionary_id(m), kb))
        for d, mentions in zip(documents, found, strict=True)
        for m in mentions
    ]


def _dictionary_id(mention: Mention) -> str:
    ids = str(mention.infons.get("dictionary_ids", ""))
    return ids.split("|")[0] if ids else ""


def linked_as_stored(
    linker, documents: Sequence[Document], found: Sequence[Sequence[Mention]]
) -> list[list[Mention]]:
    """The detected spans as `link --detect` stores them (unlinked, typed) with the linker's top concept
    (none when it has no candidate), as `link` stores suggestions."""
    stored = [[replace(m, concept_id="") for m in mentions] for mentions in found]
    with_spans = [d.with_mentions(list(m)) for d, m in zip(documents, stored, strict=True)]
    ranked = linker.suggest(with_spans)
    return [
        [m.with_link(c[0].concept_id if c else "") for m, c in zip(mentions, per_doc, strict=True)]
        for mentions, per_doc in zip(stored, ranked, strict=True)
    ]


def _percent(block: dict) -> dict:
    return {k: round(100 * v, 2) if k in ("precision", "recall", "f1") else v for k, v in block.items()}


def _row(name: str, documents, found, kb, seconds: float) -> dict:
    gold = gold_annotations(documents, kb)
    report = linking_report(gold, predicted_annotations(documents, found, kb))
    return {
        "name": name,
        **{key: _percent(block) for key, block in report.items()},
        "types": _per_type(documents, found, kb),
        "mentions": sum(len(m) for m in found),
        "seconds": round(seconds, 2),
    }


def scored_row(name: str, documents, found, kb, seconds: float = 0.0) -> dict:
    """One row as `evaluate detect` gives it: overall and per type, `found` against the documents' gold
    (the benchmarks compare detectors with it)."""
    return _row(name, documents, found, kb, seconds)


def _per_type(documents, found, kb) -> dict[str, dict]:
    """Per mention type (gold types and detected types): typed strict span and end-to-end P/R/F1, and
    the recall of the type's gold spans by detected spans of any type."""
    all_predicted = predicted_annotations(documents, found, kb)
    types = sorted({m.type for d in documents for m in d.mentions} | {m.type for ms in found for m in ms})
    result = {}
    for mention_type in types:
        gold_docs = [d.with_mentions([m for m in d.mentions if m.type == mention_type]) for d in documents]
        predicted = [[m for m in ms if m.type == mention_type] for ms in found]
        gold = gold_annotations(gold_docs, kb)
        typed = linking_report(gold, predicted_annotations(documents, predicted, kb))
        any_type = linking_report(gold, all_predicted)
        result[mention_type] = {
            "gold": len(gold),
            "detected": sum(len(m) for m in predicted),
            "span_recall": round(100 * any_type["strict"]["recall"], 2),
            "end_to_end_recall": round(100 * any_type["end_to_end_strict"]["recall"], 2),
            "strict": _percent(typed["strict"]),
            "end_to_end_strict": _percent(typed["end_to_end_strict"]),
        }
    return result


def evaluate_detectors(
    project: Project,
    *,
    split: str = "test",
    device: str = "auto",
    candidates: int | None = None,
    requested_type: str | None = None,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    """{"split", "documents", "gold_mentions", "detector", "detectors": [...]} with percentages (see the
    module docstring); `candidates` and `requested_type` as `link --candidates/--type` take them."""
    from core.errors import CuralinkError
    from core.project_detector import ChosenDetector, detector_for_project, dictionary_for_project

    documents = [
        d.with_mentions([m for m in d.mentions if m.origin in GOLD_ORIGINS])
        for d in project.documents.documents(split)
    ]
    documents = [d for d in documents if d.mentions]
    if not documents:
        raise CuralinkError(f"{project.path}: no documents with gold mentions in the {split!r} split")
    kb = project.kb.knowledge_base()
    raw = [d.with_mentions([]) for d in documents]
    leave_out = set(project.documents.document_ids(split))
    chosen = detector_for_project(
        project, kb, requested_type=requested_type, device=device, leave_out=leave_out
    )
    detectors = [chosen]
    if getattr(chosen.detector, "gap_filler", None) is not None:
        span = chosen.detector
        detectors.append(ChosenDetector(_SpanModelAlone(span), f"span model {span.version} alone"))
    if not isinstance(chosen.detector, _dictionary_class()):
        detectors.append(
            dictionary_for_project(project, kb, requested_type=requested_type, leave_out=leave_out)
        )
    linker = None
    if project.models.active_model("retriever") is not None:
        from core.pipeline import DEFAULT_CANDIDATES
        from core.project_models import load_linker

        linker = load_linker(
            project, kb=kb, device=device, candidates=candidates or DEFAULT_CANDIDATES, cancel=cancel
        )
    rows = []
    for position, detector in enumerate(detectors):
        cancel.raise_if_cancelled()
        name = detector.description.split(" (")[0]
        started = time.perf_counter()
        found = _detect(detector.detector, raw, cancel)
        seconds = time.perf_counter() - started
        if linker is not None:
            linked = linked_as_stored(linker, raw, found)
            label = f"{name} + linker ({linker.retriever_version}{'+' + linker.ranked_version if linker.ranked_version else ''})"
            if position == 0:
                label = f"link --detect: {label}"
            row = _row(label, documents, linked, kb, time.perf_counter() - started)
            rows.append({**row, "link_detect": position == 0})
        rows.append({**_row(name, documents, found, kb, seconds), "link_detect": False})
    return {
        "split": split,
        "documents": len(documents),
        "gold_mentions": len(gold_annotations(documents, kb)),
        "detector": chosen.description,
        "detectors": rows,
    }


class _SpanModelAlone:
    """The span model in force without the dictionary filling its gaps: the row that shows what the
    filling adds."""

    name = "span model"

    def __init__(self, span):
        self.span = span

    def detect(self, documents: Sequence[Document], *, cancel: CancelToken = NEVER_CANCELLED):
        filler, self.span.gap_filler = self.span.gap_filler, None
        try:
            return self.span.detect(documents, cancel=cancel)
        finally:
            self.span.gap_filler = filler


def _dictionary_class() -> type:
    from core.detect.dictionary import DictionaryDetector

    return DictionaryDetector


def _detect(detector, raw: list[Document], cancel: CancelToken) -> list[list[Mention]]:
    """What `detect_into_project` stores on raw text: the detector's mentions, every one typed."""
    from core.errors import CuralinkError

    found = detector.detect(raw, cancel=cancel) if detector.name != "dictionary" else detector.detect(raw)
    for document, mentions in zip(raw, found, strict=True):
        if any(not m.type for m in mentions):
            raise CuralinkError(f"detector {detector.name!r} gave an untyped mention in {document.doc_id}")
    return found


THRESHOLDS = tuple(round(0.05 * k, 2) for k in range(2, 19))  # 0.10 .. 0.90
"""Span probabilities tried on dev: the paper leaves γ unreported (code default 0), and a span head trained
with BCE over thousands of negative spans per gold one is calibrated low early in training."""


def dev_scorer(detector, documents: Sequence[Document], kb: KnowledgeBase) -> Callable[[], dict]:
    """For training: strict span F1 and end-to-end strict F1 (percent) of `detector` on dev raw text at
    the best threshold of THRESHOLDS ("threshold"); "score" is their mean there.

    One reading at the lowest threshold gives every higher one: overlaps are resolved greedily from the
    most probable span down, so the spans kept at γ are those kept at the lowest threshold with p >= γ."""
    gold = gold_annotations(documents, kb)
    raw = [d.with_mentions([]) for d in documents]

    def score() -> dict:
        kept = detector.threshold
        detector.threshold = THRESHOLDS[0]
        try:
            found = detector.detect(raw)
        finally:
            detector.threshold = kept
        best: dict = {}
        for threshold in THRESHOLDS:
            above = [[m for m in mentions if m.infons["probability"] >= threshold] for mentions in found]
            report = linking_report(gold, predicted_annotations(documents, above, kb))
            span_f1 = round(100 * report["strict"]["f1"], 2)
            e2e_f1 = round(100 * report["end_to_end_strict"]["f1"], 2)
            if not best or (span_f1 + e2e_f1) / 2 > best["score"]:
                best = {
                    "dev_span_f1": span_f1,
                    "dev_span_precision": round(100 * report["strict"]["precision"], 2),
                    "dev_span_recall": round(100 * report["strict"]["recall"], 2),
                    "dev_end_to_end_f1": e2e_f1,
                    "threshold": threshold,
                    "score": (span_f1 + e2e_f1) / 2,
                }
        return best

    return score
