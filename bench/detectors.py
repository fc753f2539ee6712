"""`curalink bench detect --detectors`: the dictionary, the span model, the tagger (alone and with the
dictionary in its gaps) and the detector in force side by side, per type, end to end through the linker
in force, with detection speed (abstracts/s) and the missed spans by cause (bench/detect_errors.py).

Every detector tags the same raw text of one split; each one's dictionary leaves out that split's
annotations, as `evaluate detect` does. The gold is typed as the tagger types it
(core.jobs.models.tagger.tagger_types): the types the project's dictionary tags (BioRED's genes in a
MeSH project are left out; NCBI-disease's four classes are its one disease type). Speed is detection
alone (no linking), one process, measured one detector after the other in the same run; the load
average is reported beside it. Choose on dev; run test once.
"""

from __future__ import annotations

import logging
import os
import time

from core.errors import CuralinkError
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress

log = logging.getLogger(__name__)


def _latest(project, kind: str):
    """The version in force, else the newest candidate (a bench compares what exists)."""
    row = project.models.active_model(kind)
    if row is not None:
        return row
    rows = project.models.model_versions(kind)
    return rows[-1] if rows else None


def bench_detectors(
    project,
    *,
    split: str = "dev",
    candidates: int | None = None,
    device: str = "cpu",
    documents: int | None = None,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    from bench.detect_errors import detection_errors
    from core.detect.per_type import DICTIONARY, SPAN_MODEL, TAGGER, TAGGER_AND_DICTIONARY
    from core.detect.tagger import CrfTagger
    from core.evaluate.detection import GOLD_ORIGINS, linked_as_stored, scored_row
    from core.jobs.models.tagger import retyped, tagger_types
    from core.pipeline import DEFAULT_CANDIDATES
    from core.project_detector import detector_for_project, dictionary_for_project, load_span_detector
    from core.project_models import load_linker

    kb = project.kb.knowledge_base()
    docs = [
        d.with_mentions([m for m in d.mentions if m.origin in GOLD_ORIGINS])
        for d in project.documents.documents(split)
    ]
    docs = [d for d in docs if d.mentions][:documents]
    if not docs:
        raise CuralinkError(f"{project.path}: no documents with gold mentions in the {split!r} split")
    if project.models.active_model("retriever") is None:
        raise CuralinkError(
            f"{project.path}: no trained retriever (run `curalink -p {project.path} train retriever`)"
        )
    leave_out = set(project.documents.document_ids(split))
    dictionary = dictionary_for_project(project, kb, leave_out=leave_out).detector
    gold = retyped(docs, tagger_types(dictionary.types, docs, kb))
    raw = [d.with_mentions([]) for d in docs]
    detectors: list[tuple[str, object]] = [(DICTIONARY, dictionary)]
    span_row = _latest(project, "detector")
    if span_row is not None:
        span = load_span_detector(project, kb=kb, device=device, version=span_row)
        span.gap_filler = dictionary
        detectors.append((f"{SPAN_MODEL} {span_row.version} (+ dictionary)", span))
    tagger_row = _latest(project, "tagger")
    if tagger_row is not None:
        detectors.append((f"{TAGGER} {tagger_row.version}", CrfTagger(tagger_row.path, dictionary)))
        detectors.append(
            (
                f"{TAGGER_AND_DICTIONARY} {tagger_row.version}",
                CrfTagger(tagger_row.path, dictionary, gap_filler=dictionary),
            )
        )
    chosen = detector_for_project(project, kb, device=device, leave_out=leave_out)
    detectors.append((f"in force: {chosen.description}", chosen.detector))
    linker = load_linker(
        project, kb=kb, device=device, candidates=candidates or DEFAULT_CANDIDATES, cancel=cancel
    )
    warm = raw[:1]
    rows = []
    errors = {}
    for number, (name, detector) in enumerate(detectors):
        cancel.raise_if_cancelled()
        progress(number, len(detectors), name)
        detector.detect(warm)
        started = time.perf_counter()
        found = detector.detect(raw)
        seconds = time.perf_counter() - started
        linked = linked_as_stored(linker, raw, found)
        row = scored_row(name, gold, linked, kb, seconds)
        row["abstracts_per_s"] = round(len(raw) / seconds, 1) if seconds else None
        rows.append(row)
        errors[name] = detection_errors(gold, found, dictionary)
    progress(len(detectors), len(detectors), "done")
    return {
        "split": split,
        "documents": len(docs),
        "gold_mentions": sum(len(d.mentions) for d in gold),
        "types": sorted({m.type for d in gold for m in d.mentions}),
        "detector_in_force": chosen.description,
        "linker": f"{linker.retriever_version}{'+' + linker.ranked_version if linker.ranked_version else ''}",
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "detectors": rows,
        "errors": errors,
    }
