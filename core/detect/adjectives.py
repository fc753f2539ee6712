"""The adjective running text uses for a one-word condition: "schizophrenic" for Schizophrenia,
"psychotic" for Psychoses, "inflammatory" for Inflammation, "diabetic" for Diabetes.

Curated corpora (BioRED, BC5CDR) mark such adjectives as mentions of the condition ("schizophrenic
patients", "arrhythmic events"), and KBs hold only the noun. The forms are the regular Greek/Latin
derivations (-ia/-ic, -osis/-otic, -iasis/-iatic, -itis/-itic, -ation/-atory, -etes/-etic), given to the
dictionary with the noun's concept and type. Where a corpus's annotators do not mark an adjective
("inflammatory cytokines"), core.detect.unmarked_names learns to leave it out like any other name.
"""

from __future__ import annotations

import re

_DERIVATIONS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"iasis$"), "iatic"),  # psoriasis -> psoriatic
    (re.compile(r"oses$|osis$"), "otic"),  # psychosis/psychoses -> psychotic, sclerosis -> sclerotic
    (re.compile(r"itis$"), "itic"),  # arthritis -> arthritic
    (re.compile(r"ation$"), "atory"),  # inflammation -> inflammatory
    (re.compile(r"etes$"), "etic"),  # diabetes -> diabetic
    (re.compile(r"(?<=[^aeiou])ias?$"), "ic"),  # schizophrenia -> schizophrenic, arrhythmias -> arrhythmic
)
MIN_NOUN = 6  # "mania" -> "manic" is the shortest worth it; "pica", "acne" are left alone


def adjective_forms(name: str) -> list[str]:
    """The adjective of a one-word name, where a regular derivation gives one (else none)."""
    word = name.strip()
    if " " in word or "-" in word or len(word) < MIN_NOUN - 1 or not word.isalpha():
        return []
    lower = word.lower()
    for pattern, replacement in _DERIVATIONS:
        if pattern.search(lower):
            return [pattern.sub(replacement, lower, count=1)]
    return []


def with_adjectives(named: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """`named` (name, concept id, type) and, after it, the adjective of each one-word name with that
    name's concept and type (a name already in `named` keeps its own entry: the dictionary keeps the
    first type a name is given)."""
    return named + [
        (form, concept_id, kind) for name, concept_id, kind in named for form in adjective_forms(name)
    ]
