"""Name variants: the forms running text uses for a vocabulary's names, added by every KB loader.

MeSH and UMLS write many names inverted ("Scleroderma, Systemic", "Leukemia, Myeloid, Acute"), a few
with a possessive ("Bowen's Disease") or without one ("Alzheimer Disease"), and categories in the
plural ("Antibodies, Monoclonal"); abstracts say "systemic scleroderma", "acute myeloid leukemia",
"Alzheimer's disease", "a monoclonal antibody". The rules are those of the standard lexical variant
generators (NLM's lvg "uninvert" and inflection flows, which MetaMap uses; scispaCy's linker indexes
UMLS's own uninverted strings):

- uninversion around ", ": the parts in reverse ("Acute Myeloid Leukemia"), and for three parts also
  the head moved last ("Death, Sudden, Cardiac" -> "Sudden Cardiac Death"); a part that starts with a
  lower-case function word stays at the end ("Anemia, Refractory, with Excess of Blasts" -> "Refractory
  Anemia with Excess of Blasts"); "X, Y of Z" -> "Y X of Z" ("Carcinoma, Squamous Cell of Head and
  Neck" -> "Squamous Cell Carcinoma of Head and Neck"). Not for lists ("..., and Proteins"), names with
  brackets (chemical nomenclature: "acid, 1,4-dihydro-...") or UMLS's "NOS" qualifiers;
- the possessive of an eponym before a singular head ("Alzheimer Disease" -> "Alzheimer's Disease",
  "Graves Disease" -> "Graves' Disease"), and the name without its possessive;
- the singular of a plural last word ("Monoclonal Antibodies" -> "Monoclonal Antibody");
- an organ's noun and its adjective swapped in a modifier position, as lvg's derivational variants pair
  them ("Liver Steatosis" -> "Hepatic Steatosis", "Renal Insufficiency" -> "Kidney Insufficiency"):
  running text says "hepatic steatosis" where MEDIC and MeSH only list "Liver Steatosis".

Each variant is stored as a name of its concept with source "variant" (core.store.kb_store), so KB
search, the retriever's index and the dictionary tagger all find it, and it can be told from the
vocabulary's own names.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

from core.kb.concept import Concept
from core.text.normalize import normalize_name

SOURCE = "variant"

_FUNCTION_START = re.compile(r"^(?:with|without|of|in|and|or|due|associated|not|to|for|from|by|on)\b")
_SKIP_PART = re.compile(r"^(?:nos|unspecified|not elsewhere classified|nec)$", re.IGNORECASE)
_EPONYM_HEADS = frozenset(
    "disease syndrome sarcoma lymphoma palsy disorder tumor tumour anomaly ulcer phenomenon sign "
    "paralysis cyst fracture angina reflex dystrophy ataxia chorea".split()
)
_EPONYM = re.compile(r"^[A-Z][a-z]+(?:-[A-Z][a-z]+)?$")
# endings of the adjectives MeSH capitalises like names ("Choreatic Disorder", "Mental Disorder")
_ADJECTIVE = ("ic", "al", "ous", "ive", "ary", "ar", "oid", "ile", "ed", "ory", "ant", "ent", "ful", "less")
_POSSESSIVE = re.compile(r"(\w)(?:'s|s')(?=\s)")
# words whose final s is not a plural (checked lower-case); -ss, -us, -is, -ys, -ics are never cut either
_NOT_PLURAL = frozenset(
    "diabetes herpes measles mumps rabies rickets scabies caries species series mellitus lupus "
    "tetanus pertussis sepsis status virus bacillus corpus fetus uterus anus pancreas biceps "
    "triceps ascites hepatitis lens gas bias atlas canvas iris pubis thymus diagnosis ems".split()
)


# organ nouns and the adjectives medical English derives from them (lvg's derivational pairs); only
# pairs whose adjective means nothing else ("cervical" is the neck and the cervix, so neck is left out)
_ORGAN_ADJECTIVES = {
    "liver": "hepatic",
    "kidney": "renal",
    "heart": "cardiac",
    "lung": "pulmonary",
    "brain": "cerebral",
    "stomach": "gastric",
    "skin": "cutaneous",
    "eye": "ocular",
    "spleen": "splenic",
    "pancreas": "pancreatic",
    "intestine": "intestinal",
    "bowel": "intestinal",
    "colon": "colonic",
    "rectum": "rectal",
    "ovary": "ovarian",
    "uterus": "uterine",
    "testis": "testicular",
    "prostate": "prostatic",
    "breast": "mammary",
    "muscle": "muscular",
    "nerve": "neural",
    "spine": "spinal",
    "chest": "thoracic",
    "larynx": "laryngeal",
    "pharynx": "pharyngeal",
    "tooth": "dental",
    "artery": "arterial",
    "vein": "venous",
    "nose": "nasal",
}
_ORGAN_NOUNS = {adjective: noun for noun, adjective in _ORGAN_ADJECTIVES.items() if noun != "bowel"}
_ORGAN_SWAPS = {**_ORGAN_ADJECTIVES, **_ORGAN_NOUNS}
_MAX_ORGAN_WORDS = 4  # longer names are descriptions more than terms; their swaps rarely occur in text


def name_variants(name: str) -> list[str]:
    """The variants of one name (see the module docstring), without the name itself, in a stable order."""
    forms = [name, *_uninverted(name)]
    variants = list(forms)
    for form in forms:
        variants += _possessive_forms(form)
    variants += [s for form in list(variants) if ", " not in form and (s := _singular_last_word(form))]
    variants += [s for form in list(variants) if ", " not in form for s in _organ_forms(form)]
    seen = {normalize_name(name)}
    result = []
    for variant in variants:
        key = normalize_name(variant)
        if key and key not in seen:
            seen.add(key)
            result.append(variant)
    return result


def with_variants(concept: Concept) -> Concept:
    """The concept with the variants of its names that are not already names of it."""
    known = {normalize_name(n) for n in concept.names}
    variants: list[str] = []
    for name in concept.names:
        for variant in name_variants(name):
            key = normalize_name(variant)
            if key not in known:
                known.add(key)
                variants.append(variant)
    return replace(concept, variants=tuple(variants)) if variants else concept


def concepts_with_variants(concepts: Iterator[Concept]) -> Iterator[Concept]:
    for concept in concepts:
        yield with_variants(concept)


def _uninverted(name: str) -> list[str]:
    if ", " not in name or any(bracket in name for bracket in "()[]{}"):
        return []
    parts = [p.strip() for p in name.split(", ")]
    if any(not p or _SKIP_PART.match(p) or p.endswith("-") for p in parts):
        return []
    trailing = [p for p in parts[1:] if _FUNCTION_START.match(p)]
    core = [p for p in parts if p not in trailing]
    if any(p.startswith(("and ", "or ")) for p in trailing) or len(core) < 2:
        return []
    before_of = core[-1].split(" of ")[0]
    if " of " in core[0] or " and " in before_of or " or " in before_of:
        return []  # "Syndrome of a, b and c" is a list, not an inversion ("..., X of Head and Neck" is)
    if len(core) > 2 and not all(p[:1].isupper() or p[:1].isdigit() for p in core):
        return []  # "Ascitis, splenomegaly, lymphadenopathy": three names, not MeSH's "Leukemia, Myeloid, Acute"
    tail = (" " + " ".join(trailing)) if trailing else ""
    forms = []
    head, last = core[0], core[-1]
    of_at = last.find(" of ")
    if len(core) == 2 and of_at > 0:
        forms.append(f"{last[:of_at]} {head}{last[of_at:]}{tail}")
    else:
        forms.append(" ".join(reversed(core)) + tail)
        if len(core) == 3:
            forms.append(" ".join([*core[1:], head]) + tail)
    return forms


def _possessive_forms(form: str) -> list[str]:
    """'Alzheimer Disease' -> "Alzheimer's Disease"; "Bowen's Disease" -> 'Bowen Disease'."""
    found = []
    if _POSSESSIVE.search(form):
        found.append(_POSSESSIVE.sub(r"\1", form))
    words = form.split(" ")
    for at in range(len(words) - 1):
        word = words[at]
        eponym = _EPONYM.match(word) and not word.endswith(_ADJECTIVE) and word.lower() not in _ORGAN_SWAPS
        if words[at + 1].lower() in _EPONYM_HEADS and eponym:
            mark = "'" if word.endswith("s") else "'s"
            found.append(" ".join([*words[:at], word + mark, *words[at + 1 :]]))
    return found


def _organ_forms(form: str) -> list[str]:
    """'Liver Steatosis' -> 'Hepatic Steatosis'; 'Renal Insufficiency' -> 'Kidney Insufficiency': one
    organ word swapped for its adjective (or back) where it modifies a later word, never the head."""
    words = form.split(" ")
    if len(words) < 2 or len(words) > _MAX_ORGAN_WORDS:
        return []
    found = []
    for at, word in enumerate(words[:-1]):
        swap = _ORGAN_SWAPS.get(word.lower())
        if swap is None or words[at + 1].lower() in ("of", "and", "or", "in", "with"):
            continue
        if word.isupper():
            swap = swap.upper()
        elif word[:1].isupper():
            swap = swap.capitalize()
        found.append(" ".join([*words[:at], swap, *words[at + 1 :]]))
    return found


def _singular_last_word(form: str) -> str | None:
    head, space, word = form.rpartition(" ")
    lowered = word.lower()
    if (
        len(word) < 4
        or not word.isalpha()
        or word.isupper()
        or lowered in _NOT_PLURAL
        or not lowered.endswith("s")
        or lowered.endswith(("ss", "us", "is", "ys", "ics", "'s"))
    ):
        return None
    if lowered.endswith("ies") and len(word) > 4:
        singular = word[:-3] + "y"
    elif lowered.endswith(("sses", "uses", "xes", "zes", "shes")):
        singular = word[:-2]
    else:
        singular = word[:-1]
    return f"{head}{space}{singular}"
