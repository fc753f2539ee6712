"""`curalink -p P bench missed-spans --split dev`: the gold spans a detector missed, per type, by cause.

A gold mention is found when a detected mention has its exact span and its type (typed strict, as
`evaluate detect` scores); each missed one gets the first cause that fits, in this order:

1. type confusion - a detected mention has its exact span but another type;
2. coordination - it names several concepts (a composite id) or joins words with and/or/nor
   ("breast and ovarian cancer");
3. boundary - a detected mention overlaps it without the same span;
4. abbreviation - its text is a short form the document defines (Schwartz & Hearst) or looks like one
   (one token, no more lower-case than upper-case letters: "CKD", "5-FU", "HbA1c" is not);
5. gold id outside the KB - none of its concept ids is a concept of the project (or it has none);
6. not in the lexicon - its text, in the dictionary's normal form (core.detect.dictionary.dictionary_key),
   is none of the project's names: the KB's names and the strings its annotations link (the evaluated
   split's excepted), which is what the dictionary tagger can match;
7. other - in the lexicon, of a KB concept, and no detected mention overlaps it (a name the detector left
   out: stop names, names the annotators pass over, a route that does not admit the concept).

The detected mentions come from any detector: by default the one `link --detect` uses (the detector in
force, the evaluated split's annotations left out of its dictionary, as `evaluate detect` runs it),
`--detector dictionary` for the dictionary alone, or a corpus file of detected mentions (`--detected
FILE`, e.g. a `corpus export` after `link --detect`, or another tagger's output), so the same table can
be read before and after a new detector lands. Dev only: error analysis chooses what to fix.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from core.documents import Document, Mention
from core.errors import CuralinkError
from core.progress import NEVER_CANCELLED, CancelToken

if TYPE_CHECKING:
    from core.store.project import Project

CAUSES = (
    "type confusion",
    "coordination",
    "boundary",
    "abbreviation",
    "gold id outside the KB",
    "not in the lexicon",
    "other",
)
EXAMPLES = 5
_CONJUNCTION = re.compile(r"\s(?:and|or|nor|and/or)\s", re.IGNORECASE)
_ONE_TOKEN = re.compile(r"^[\w()+\-,']{2,12}$")
GOLD_ORIGINS = ("gold", "imported", "curator")


def looks_like_abbreviation(text: str) -> bool:
    """One short token with at least two capitals and no more lower-case than upper-case letters."""
    upper = sum(ch.isupper() for ch in text)
    lower = sum(ch.islower() for ch in text)
    return bool(_ONE_TOKEN.match(text)) and upper >= 2 and lower <= upper


def cause_of_miss(
    gold: Mention,
    detected: Sequence[Mention],
    *,
    short_forms: Collection[str],
    in_lexicon: Callable[[str], bool],
    in_kb: Callable[[str], bool],
) -> str | None:
    """None when `gold` was found (exact span, same type), else its cause (module docstring, CAUSES)."""
    exact = [m for m in detected if m.start == gold.start and m.end == gold.end]
    if any(m.type == gold.type for m in exact):
        return None
    if exact:
        return "type confusion"
    if len(gold.concept_ids) > 1 or _CONJUNCTION.search(gold.text):
        return "coordination"
    if any(m.start < gold.end and gold.start < m.end for m in detected):
        return "boundary"
    if gold.text in short_forms or looks_like_abbreviation(gold.text):
        return "abbreviation"
    if not any(in_kb(concept_id) for concept_id in gold.concept_ids):
        return "gold id outside the KB"
    if not in_lexicon(gold.text):
        return "not in the lexicon"
    return "other"


def missed_by_cause(
    gold_documents: Sequence[Document],
    detected: Sequence[Sequence[Mention]],
    *,
    in_lexicon: Callable[[str], bool],
    in_kb: Callable[[str], bool],
    types: Collection[str] | None = None,
) -> dict:
    """{"types": {type: {"gold", "found", "missed", "causes": {cause: n}, "examples": {cause: [text]}}},
    "all": the same summed}; `detected[i]` are the mentions found in `gold_documents[i]`."""
    from core.text.abbreviations import find_abbreviations

    rows: dict[str, dict] = {}
    for document, found in zip(gold_documents, detected, strict=True):
        short_forms = {a.short for a in find_abbreviations(document.text)}
        for gold in document.mentions:
            if types is not None and gold.type not in types:
                continue
            row = rows.setdefault(
                gold.type, {"gold": 0, "found": 0, "missed": 0, "causes": Counter(), "examples": {}}
            )
            row["gold"] += 1
            cause = cause_of_miss(gold, found, short_forms=short_forms, in_lexicon=in_lexicon, in_kb=in_kb)
            if cause is None:
                row["found"] += 1
                continue
            row["missed"] += 1
            row["causes"][cause] += 1
            examples = row["examples"].setdefault(cause, [])
            if len(examples) < EXAMPLES and gold.text not in examples:
                examples.append(gold.text)
    total = {"gold": 0, "found": 0, "missed": 0, "causes": Counter()}
    for row in rows.values():
        for key in ("gold", "found", "missed"):
            total[key] += row[key]
        total["causes"].update(row["causes"])
    plain = lambda row: {  # noqa: E731 - one shape for the per-type rows and the total
        **row,
        "causes": {cause: row["causes"].get(cause, 0) for cause in CAUSES},
    }
    return {"types": {t: plain(rows[t]) for t in sorted(rows)}, "all": plain(total)}


def missed_spans(
    project: Project,
    *,
    split: str = "dev",
    detector: str = "in-force",
    detected_file: str | Path | None = None,
    detected_format: str | None = None,
    types: Collection[str] | None = None,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    """The table of `missed_by_cause` for a project's split, with what was compared named."""
    from core.detect.dictionary import dictionary_key
    from core.evaluate.detection import _detect
    from core.project_detector import annotated_names, detector_for_project, dictionary_for_project

    kb = project.kb.knowledge_base()
    documents = [
        d.with_mentions([m for m in d.mentions if m.origin in GOLD_ORIGINS])
        for d in project.documents.documents(split)
    ]
    documents = [d for d in documents if d.mentions]
    if not documents:
        raise CuralinkError(f"{project.path}: no documents with gold mentions in the {split!r} split")
    leave_out = {d.doc_id for d in documents}
    if detected_file is not None:
        detected, source = _read_detected(Path(detected_file), detected_format, documents), str(detected_file)
    else:
        raw = [d.with_mentions([]) for d in documents]
        if detector == "dictionary":
            chosen = dictionary_for_project(project, kb, leave_out=leave_out)
        else:
            chosen = detector_for_project(project, kb, device="cpu", leave_out=leave_out)
        detected, source = _detect(chosen.detector, raw, cancel), chosen.description
    lexicon = {dictionary_key(entry.name) for entry in kb.names}
    lexicon |= {dictionary_key(text) for text, _ in annotated_names(project, kb, leave_out=leave_out)}
    result = missed_by_cause(
        documents,
        detected,
        in_lexicon=lambda text: dictionary_key(text) in lexicon,
        in_kb=lambda concept_id: kb.resolve(concept_id) is not None,
        types=types,
    )
    return {"split": split, "documents": len(documents), "detected_by": source, **result}


def _read_detected(path: Path, fmt: str | None, documents: Sequence[Document]) -> list[list[Mention]]:
    """The mentions a corpus file gives each evaluated document (none for one it lacks); a file document
    whose text differs from the project's is refused (its offsets would mean other words)."""
    from core.formats import read_corpus

    by_id = {d.doc_id: d for d in read_corpus(path, fmt)}
    detected = []
    for document in documents:
        found = by_id.get(document.doc_id)
        if found is not None and found.text != document.text:
            raise CuralinkError(f"{path}: document {document.doc_id} has another text than the project's")
        detected.append(list(found.mentions) if found is not None else [])
    return detected
