"""Which detector tags raw text in a project: the tagger in force with its per-type plan, else the span
model in force, else the dictionary tagger.

The dictionary tags every type the project's routes admit in one pass, each name carrying its route's
type (core.detect.typed_names); `--type` narrows it to one, and a KB whose concepts cannot be told apart
by type (no tree numbers, no semantic types) is tagged with the one type `choose_mention_type` picks.
`link --detect`, the desk's "find mentions", `link-batch --detect` and `evaluate detect` all take it from
here, so what is evaluated is what is stored.

The dictionary stays the fast fallback for projects without training data; with a trained detector,
detected mentions carry the type the span model predicts (unless the user names one) and their span
probability (infons "probability"), which the store keeps with the mention. The dictionary then fills
the span model's gaps: its mentions are kept where the span model found nothing overlapping (on the
last 100 BioRED train + dev abstracts held out, with MeSH: end-to-end strict F1 48.95 -> 51.20 for
chemicals + diseases; NCBI-disease dev with MEDIC: 71.29 -> 72.71; README, "Mention detection"). A span
model goes in force only when that links its held-out documents at least as well as the dictionary
alone (core.jobs.models.detector).

The dictionary holds the KB's names and the strings the project's own annotations link to its concepts
(imported train/dev gold, not other splits' gold, and curator-accepted links): running text calls diseases
"cancers" or "tumour" far more often than MEDIC's names do. On NCBI-disease test with MEDIC that took
strict span F1 from 66.23 to 74.20 (README, "Mention detection"). It leaves out the names the project's
annotated train/dev documents show its annotators pass over (core.detect.unmarked_names: "DNA",
"placebo" in a MeSH project annotated like BioRED).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.detect.mention_type import MentionType, choose_mention_type
from core.store.annotated_types import annotated_mentions
from core.store.documents_store import TRAINING_SPLITS

if TYPE_CHECKING:
    from core.detect.span_detector import SpanDetector
    from core.store.project import Project


@dataclass
class ChosenDetector:
    detector: object
    description: str


def detector_for_project(
    project: Project,
    kb,
    *,
    requested_type: str | None = None,
    device: str = "auto",
    leave_out: Collection[str] = (),
) -> ChosenDetector:
    """The detector `link --detect` uses; refuses (CuralinkError) before anything is stored.
    `leave_out`: documents whose annotations the dictionary does not learn from (an evaluation's split)."""
    if requested_type is None:
        tagged = tagger_in_force(project, kb, device=device, leave_out=leave_out)
        if tagged is not None:
            return tagged
    span = load_span_detector(project, kb=kb, device=device)
    if span is not None:
        if requested_type is not None:
            span.mention_type = project_mention_type(project, kb, requested_type).name
            types = f"type {span.mention_type!r} as asked"
        else:
            types = "types predicted: " + ", ".join(span.config.types)
        span.gap_filler = dictionary_for_project(
            project, kb, requested_type=requested_type, leave_out=leave_out
        ).detector
        return ChosenDetector(
            span, f"span model {span.version} ({types}; the dictionary where it finds none)"
        )
    return dictionary_for_project(project, kb, requested_type=requested_type, leave_out=leave_out)


def tagger_in_force(
    project: Project, kb, *, device: str = "auto", leave_out: Collection[str] = ()
) -> ChosenDetector | None:
    """The tagger in force with the plan it was promoted with (per type: the tagger, the tagger with
    the dictionary in its gaps, the span model or the dictionary; core.jobs.models.tagger); None
    when no tagger is in force. Types the plan does not name keep the dictionary."""
    from core.detect.per_type import (
        DICTIONARY,
        SPAN_MODEL,
        TAGGER,
        TAGGER_AND_DICTIONARY,
        PerTypeDetector,
    )
    from core.detect.tagger import CrfTagger, load_settings

    row = project.models.active_model("tagger")
    if row is None:
        return None
    plan = dict(load_settings(row.path).metrics.get("plan") or {})
    dictionary = dictionary_for_project(project, kb, leave_out=leave_out).detector
    detectors: dict[str, object] = {DICTIONARY: dictionary}
    if TAGGER in plan.values():
        detectors[TAGGER] = CrfTagger(row.path, dictionary, version=row.version)
    if TAGGER_AND_DICTIONARY in plan.values():
        detectors[TAGGER_AND_DICTIONARY] = CrfTagger(
            row.path, dictionary, version=row.version, gap_filler=dictionary
        )
    if SPAN_MODEL in plan.values():
        span = load_span_detector(project, kb=kb, device=device)
        if span is None:  # rolled back since: the dictionary stands in
            plan = {kind: DICTIONARY if name == SPAN_MODEL else name for kind, name in plan.items()}
        else:
            span.gap_filler = dictionary
            detectors[SPAN_MODEL] = span
    for kind in dictionary.types:
        plan.setdefault(kind, DICTIONARY)
    described = ", ".join(f"{kind}: {name}" for kind, name in sorted(plan.items()))
    names = set(plan.values())
    detector = detectors[names.pop()] if len(names) == 1 else PerTypeDetector(detectors, plan)
    return ChosenDetector(detector, f"tagger {row.version} ({described})")


def load_span_detector(
    project: Project, *, kb=None, device: str = "auto", threshold: float | None = None, version=None
) -> SpanDetector | None:
    """The detector in force (or the registry row `version`) with concept vectors for the project's KB
    now; None when none is trained."""
    from core.detect.in_force import KIND, load_span_model

    active = version if version is not None else project.models.active_model(KIND)
    if active is None:
        return None
    kb = kb if kb is not None else project.kb.knowledge_base()
    return load_span_model(
        active.path, active.version, kb, index_dir=project.index_dir, device=device, threshold=threshold
    )


def load_detector_version(
    project: Project, row, *, kb=None, device: str = "auto", threshold: float | None = None
) -> SpanDetector:
    """A registered detector version (`row` of the model registry), with concept vectors for the KB now."""
    return load_span_detector(project, kb=kb, device=device, threshold=threshold, version=row)


def load_tagger_version(project: Project, row, *, kb=None, leave_out=()):
    """A registered tagger version with the project's dictionary (leaving out `leave_out`'s annotations)
    as its lexicon."""
    from core.detect.tagger import CrfTagger

    kb = kb if kb is not None else project.kb.knowledge_base()
    dictionary = dictionary_for_project(project, kb, leave_out=leave_out).detector
    return CrfTagger(row.path, dictionary, version=row.version)


def dictionary_for_project(
    project: Project, kb, *, requested_type: str | None = None, leave_out: Collection[str] = ()
) -> ChosenDetector:
    """The project's dictionary tagger: every type its routes admit in one pass (core.detect.typed_names),
    or one type where asked (--type) or where the KB's concepts cannot be told apart by type."""
    from core.detect.adjectives import with_adjectives
    from core.detect.dictionary import DictionaryDetector
    from core.detect.typed_names import detection_types, typed_names
    from core.kb.routing import TypeRouter

    router = TypeRouter.for_project(project, kb)
    active = requested_type is None and router.active
    annotated = annotated_mentions(project) if requested_type is None else []
    types = detection_types(annotated, kb, router, leave_out=leave_out) if active else []
    if not types:
        mention_type = choose_mention_type(annotated, kb, requested_type, where=str(project.path))
        # tag only names of concepts the type may link to: all of MeSH as "Disease" would tag chemicals
        typed_kb = router.restricted_kb(mention_type.name)
        return ChosenDetector(
            project_dictionary(project, kb, typed_kb, mention_type=mention_type.name, leave_out=leave_out),
            f"dictionary (type {mention_type.name!r}: {mention_type.reason}; --type to choose; "
            "`train detector` for the span model)",
        )
    pairs = [(entry.name, entry.concept_id) for entry in kb.names]
    pairs += annotated_names(project, kb, leave_out=leave_out)
    training = [row for row in annotated if row.split in TRAINING_SPLITS]
    named = with_adjectives(typed_names(training, router, types, pairs, leave_out=leave_out))
    detector = DictionaryDetector(
        named, stop_names=_stop_names(project, DictionaryDetector(named), leave_out)
    )
    return ChosenDetector(
        detector,
        f"dictionary (types {', '.join(t.name for t in types)}, each name typed by its route; "
        "--type to narrow; `train detector` for the span model)",
    )


def project_mention_type(project: Project, kb, requested_type: str | None = None) -> MentionType:
    """The one type for a project's detected mentions (core.detect.mention_type), from its annotations."""
    annotated = annotated_mentions(project) if requested_type is None else []
    return choose_mention_type(annotated, kb, requested_type, where=str(project.path))


def dictionary_label(project: Project, kb, requested_type: str | None = None) -> str:
    """The types a project's dictionary tags, '|'-joined (types never hold '|'): what a batch records
    and hands its workers (`batch_dictionary`)."""
    return "|".join(dictionary_for_project(project, kb, requested_type=requested_type).detector.types)


def batch_dictionary(project: Project, kb, label: str):
    """The dictionary `dictionary_label` named: the project's own choice, or the one type asked."""
    chosen = dictionary_for_project(project, kb)
    if "|".join(chosen.detector.types) == label:
        return chosen.detector
    return dictionary_for_project(project, kb, requested_type=label).detector


def annotated_names(
    project: Project, kb, *, admitted=None, leave_out: Collection[str] = ()
) -> list[tuple[str, str]]:
    """(mention text, concept id) of every link the project's annotations teach: imported train/dev gold
    and curator-accepted or corrected links (core.learn.training_data), of concepts in `admitted` (a
    KnowledgeBase; default all), the documents in `leave_out` excepted (an evaluation's own split)."""
    from core.learn.training_data import training_set

    taught = training_set(project, kb, held_out_fraction=0.0).train_documents
    return [
        (mention.text, mention.concept_ids[0])
        for document in taught
        if document.doc_id not in leave_out
        for mention in document.mentions
        if len(mention.concept_ids) == 1 and (admitted is None or mention.concept_ids[0] in admitted.concepts)
    ]


def project_dictionary(
    project: Project, kb, typed_kb=None, *, mention_type: str = "", leave_out: Collection[str] = ()
):
    """The dictionary tagger of a project: `typed_kb`'s names (default the whole KB) plus the annotated
    strings of its concepts."""
    from core.detect.dictionary import DictionaryDetector

    typed_kb = typed_kb if typed_kb is not None else kb
    names = [(entry.name, entry.concept_id) for entry in typed_kb.names]
    names += annotated_names(project, kb, admitted=typed_kb, leave_out=leave_out)
    first = DictionaryDetector(names, mention_type=mention_type)
    return DictionaryDetector(
        names, mention_type=mention_type, stop_names=_stop_names(project, first, leave_out)
    )


def _stop_names(project: Project, detector, leave_out: Collection[str]) -> frozenset[str]:
    """The default stop names and the names the project's annotated train/dev documents show its
    annotators pass over (core.detect.unmarked_names); `leave_out`'s documents are not read."""
    from core.detect.dictionary import DEFAULT_STOP_NAMES
    from core.detect.unmarked_names import unmarked_names

    left_out = set(leave_out)
    annotated = (
        document.with_mentions([m for m in document.mentions if m.origin in ("gold", "imported")])
        for split in TRAINING_SPLITS
        for document in project.documents.documents(split)
        if document.doc_id not in left_out
    )
    return DEFAULT_STOP_NAMES | unmarked_names(detector, annotated)
