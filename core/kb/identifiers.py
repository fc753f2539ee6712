"""Canonical concept ids, so corpora and vocabularies that spell ids differently still meet.

Conventions (those of the NCBI-disease corpus): MeSH ids bare (`D003110`, `C535575`), OMIM ids
prefixed (`OMIM:601450`), UMLS CUIs prefixed (`UMLS:C0011849`; a bare `C` + 7 digits would clash
with MeSH supplementary ids), everything else kept as its CURIE (`MONDO:0005148`, `HP:0001250`).
"""

from __future__ import annotations

import re

_MESH = re.compile(r"^[CD]\d{6}(\d{3})?$")
_CUI = re.compile(r"^C\d{7}$")
_DIGITS = re.compile(r"^\d+$")


def canonical_id(raw: str, vocabulary: str = "") -> str:
    """The canonical spelling of one id; `vocabulary` resolves bare numbers and bare CUIs."""
    value = raw.strip()
    if not value:
        return value
    prefix, sep, rest = value.partition(":")
    if sep:
        upper = prefix.upper()
        if upper in ("MESH", "MSH"):
            return rest.strip()
        if upper in ("OMIM", "MIM"):
            return f"OMIM:{rest.strip()}"
        if upper == "UMLS":
            return f"UMLS:{rest.strip()}"
        if upper == "DO" and rest.upper().startswith("DOID:"):
            return rest.strip().upper()
        return f"{upper}:{rest.strip()}"
    vocab = vocabulary.upper()
    if _DIGITS.match(value):
        return f"OMIM:{value}" if vocab in ("", "OMIM", "MEDIC", "CTD") else f"{vocab}:{value}"
    if _CUI.match(value) and vocab == "UMLS":
        return f"UMLS:{value}"
    if _MESH.match(value):
        return value
    if _CUI.match(value):
        return f"UMLS:{value}"
    return value


def split_ids(raw: str, vocabulary: str = "") -> tuple[str, ...]:
    """The canonical parts of a composite id string (`A|B`, `A+B`); empty for '' and '-1'."""
    if not raw or raw.strip() == "-1":
        return ()
    return tuple(canonical_id(part, vocabulary) for part in re.split(r"[|+]", raw) if part.strip())


def namespace_of(concept_id: str) -> str:
    """The namespace of a canonical id: `MESH` for bare MeSH ids, else the CURIE prefix (`OMIM`, `UMLS`)."""
    if _MESH.match(concept_id):
        return "MESH"
    prefix, sep, _ = concept_id.partition(":")
    return prefix.upper() if sep else ""
