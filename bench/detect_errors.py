"""Missed gold spans by cause, and recall of the forms curators annotate that a lexicon finds hard.

`detection_errors(gold_documents, found, dictionary)` reads each type's gold spans against what a
detector found (exact span and type = found):
- causes, one per missed span, first that applies: "type confusion" (the exact span, another type),
  "boundary" (a found span of the type overlaps it), "not in the lexicon" (the dictionary has no name
  for the gold text as a whole), "other" (the lexicon names it; the detector passed it over);
- forms, each gold span counted in every form it has, with how many were found: "coordination"
  ("breast and ovarian cancer", "ovarian/breast cancer"), "abbreviation" (a short form the text defines
  and its uses), "long form + abbreviation" (a long form the text defines), "adjective" ("diabetic",
  "schizophrenic", "inflammatory"), "number in name" ("type 2 diabetes mellitus"), "chemical locants /
  charges / salts" ("2,3-dihydroxy…", "Ca(2+)", "… hydrochloride").

The meshkb engineer's error analysis by cause calls this; so does `curalink bench detect --detectors`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from core.documents import Document, Mention
from core.text.abbreviations import find_abbreviations

CAUSES = ("type confusion", "boundary", "not in the lexicon", "other")
FORMS = (
    "coordination",
    "abbreviation",
    "long form + abbreviation",
    "adjective",
    "number in name",
    "chemical locants / charges / salts",
)
_COORDINATION = re.compile(r"\w\s*(?:,\s*(?:and|or)?|\band\b|\bor\b|/|\band/or\b)\s*\w", re.IGNORECASE)
_ADJECTIVE = re.compile(r"^[a-z]+(?:ic|tic|atory|etic|ous|al)$")
_NUMBER = re.compile(r"[A-Za-z].*\b\d+\b|\b\d+\b.*[A-Za-z]\w*\s")
_CHEMICAL_FORM = re.compile(
    r"\d,\d|\d-[A-Za-z]|\(\d?[+-−]\)|\d[+-−]\)|[+−]$|\b(?:[A-Z][a-z]?)\(\d\)|"
    r"\b(?:hydrochloride|chloride|sodium|potassium|sulfate|sulphate|acetate|citrate|maleate|mesylate|"
    r"phosphate|bromide|tartrate|fumarate|succinate|nitrate|hydrate)\b",
    re.IGNORECASE,
)


def span_forms(document: Document, mention: Mention, definitions=None) -> list[str]:
    """The forms (FORMS) a gold span has."""
    text = mention.text
    definitions = find_abbreviations(document.text) if definitions is None else definitions
    forms = []
    if _COORDINATION.search(text) or mention.is_composite:
        forms.append("coordination")
    if any(text == d.short for d in definitions):
        forms.append("abbreviation")
    if any(d.long_span.start == mention.start and d.long_span.end == mention.end for d in definitions):
        forms.append("long form + abbreviation")
    if _ADJECTIVE.match(text) and " " not in text:
        forms.append("adjective")
    if _NUMBER.search(text) and mention.type != "Chemical":
        forms.append("number in name")
    if mention.type == "Chemical" and _CHEMICAL_FORM.search(text):
        forms.append("chemical locants / charges / salts")
    return forms


def detection_errors(
    documents: Sequence[Document], found: Sequence[Sequence[Mention]], dictionary=None
) -> dict[str, dict]:
    """Per gold type: {"gold", "found", "missed", "causes": {cause: n}, "forms": {form: {"gold", "found"}}}
    (`found[i]`: what the detector found in `documents[i]`; `dictionary`: the project's, for "not in
    the lexicon"; without one that cause is not told apart from "other")."""
    result: dict[str, dict] = {}
    for document, detected in zip(documents, found, strict=True):
        definitions = find_abbreviations(document.text)
        exact = {(m.start, m.end): m.type for m in detected}
        for mention in document.mentions:
            block = result.setdefault(
                mention.type,
                {"gold": 0, "found": 0, "missed": 0, "causes": Counter(), "forms": {}},
            )
            block["gold"] += 1
            hit = exact.get((mention.start, mention.end)) == mention.type
            block["found" if hit else "missed"] += 1
            for form in span_forms(document, mention, definitions):
                counts = block["forms"].setdefault(form, {"gold": 0, "found": 0})
                counts["gold"] += 1
                counts["found"] += hit
            if not hit:
                block["causes"][_cause(mention, detected, exact, dictionary)] += 1
    for block in result.values():
        block["causes"] = {cause: block["causes"].get(cause, 0) for cause in CAUSES}
    return result


def _cause(mention: Mention, detected: Sequence[Mention], exact: dict, dictionary) -> str:
    if (mention.start, mention.end) in exact:
        return "type confusion"
    if any(m.start < mention.end and mention.start < m.end and m.type == mention.type for m in detected):
        return "boundary"
    if dictionary is not None:
        whole = [
            (start, end)
            for start, end, _, _ in dictionary.raw_matches(mention.text)
            if start == 0 and end == len(mention.text)
        ]
        if not whole:
            return "not in the lexicon"
    return "other"
