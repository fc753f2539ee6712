"""`evaluate detect`: every available detector read against gold spans and concepts, end to end.

Detectors, each on the same raw text (the split's documents with their mentions removed):
- "dictionary": the KB dictionary tagger; its concept is the dictionary's id when the name is unique
  to one concept, else the first of its ids;
- "dictionary + linker": its spans linked by the models in force (retriever, reranker, ranker);
- "span model": the detector in force, its spans linked collectively by its own dual encoder;
- "span model + linker": its spans linked by the models in force.

Gold: every gold mention span; its KB id is the first id of a composite (methods.md §C.3, the paper's
protocol) resolved to the KB's primary id. Metrics: core.evaluate.entity_linking (neleval's
definitions). `collective_linking_accuracy` is the ED setting: gold spans given, acc@1 of the span
model's linker and of the retriever on identical mentions.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

from core.documents import Document, Mention
from core.evaluate.entity_linking import Annotation, linking_report
from core.kb.knowledge_base import KnowledgeBase
from core.progress import NEVER_CANCELLED, CancelToken

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


def _linked(linker, documents: Sequence[Document], found: Sequence[Sequence[Mention]]) -> list[list[Mention]]:
    """The detected spans with the linker's top concept (no concept when it has no candidate)."""
    with_spans = [d.with_mentions(list(m)) for d, m in zip(documents, found, strict=True)]
    ranked = linker.suggest(with_spans)
    return [
        [m.with_link(c[0].concept_id if c else "") for m, c in zip(mentions, per_doc, strict=True)]
        for mentions, per_doc in zip(found, ranked, strict=True)
    ]


def _row(name: str, gold, documents, found, kb, seconds: float) -> dict:
    report = linking_report(gold, predicted_annotations(documents, found, kb))
    mentions = sum(len(m) for m in found)
    return {
        "name": name,
        **{
            key: {k: round(100 * v, 2) if k in ("precision", "recall", "f1") else v for k, v in block.items()}
            for key, block in report.items()
        },
        "mentions": mentions,
        "seconds": round(seconds, 2),
    }


def evaluate_detectors(
    project, *, split: str = "test", device: str = "auto", cancel: CancelToken = NEVER_CANCELLED
) -> dict:
    """{"split", "documents", "gold_mentions", "detectors": [...]} with percentages (see module docstring)."""
    from core.detect.choice import project_dictionary
    from core.detect.in_force import load_span_detector
    from core.errors import CuralinkError

    documents = [
        d.with_mentions([m for m in d.mentions if m.origin in GOLD_ORIGINS]) for d in project.documents(split)
    ]
    documents = [d for d in documents if d.mentions]
    if not documents:
        raise CuralinkError(f"{project.path}: no documents with gold mentions in the {split!r} split")
    kb = project.knowledge_base()
    gold = gold_annotations(documents, kb)
    raw = [d.with_mentions([]) for d in documents]
    linker = None
    if project.active_model("retriever") is not None:
        from core.project_models import load_linker

        linker = load_linker(project, kb=kb, device=device, cancel=cancel)
    rows = []
    kinds: list[tuple[str, Callable[[], list[list[Mention]]]]] = []
    # the dictionary `link --detect` uses, its annotated strings taken from every split but this one
    dictionary = project_dictionary(project, kb, leave_out=set(project.document_ids(split)))
    kinds.append(("dictionary", lambda: dictionary.detect(raw)))
    span = load_span_detector(project, kb=kb, device=device)
    if span is not None:
        kinds.append((f"span model {span.version}", lambda: span.detect(raw, cancel=cancel)))
    for name, run in kinds:
        cancel.raise_if_cancelled()
        started = time.perf_counter()
        found = run()
        seconds = time.perf_counter() - started
        rows.append(_row(name, gold, documents, found, kb, seconds))
        if linker is not None:
            started = time.perf_counter()
            typed = _typed(found, project, kb) if name == "dictionary" else found
            linked = _linked(linker, raw, typed)
            rows.append(
                _row(
                    f"{name} + linker ({linker.retriever_version}{'+' + linker.ranked_version if linker.ranked_version else ''})",
                    gold,
                    documents,
                    linked,
                    kb,
                    seconds + time.perf_counter() - started,
                )
            )
    return {"split": split, "documents": len(documents), "gold_mentions": len(gold), "detectors": rows}


def _typed(found: list[list[Mention]], project, kb) -> list[list[Mention]]:
    """Dictionary mentions carry no type; the linker routes by type, so give them the one `link
    --detect` would (core.detect.mention_type)."""
    from dataclasses import replace

    from core.detect.mention_type import choose_mention_type
    from core.errors import CuralinkError

    try:
        name = choose_mention_type(project, kb).name
    except CuralinkError:
        return found
    return [[m if m.type else replace(m, type=name) for m in mentions] for mentions in found]


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
