"""Where a concept's ids can be read about on the web: MeSH, OMIM and UMLS pages, by canonical id.

Only ids whose namespace has a known public page get a link; the rest are shown as plain ids.
"""

from __future__ import annotations

import re

from core.kb.concept import Concept
from core.kb.identifiers import canonical_id

_MESH = re.compile(r"^[CD]\d{6}(\d{3})?$")
_OMIM = re.compile(r"^OMIM:(\d+)$")
_UMLS = re.compile(r"^UMLS:(C\d{7})$")


def link_out(concept_id: str) -> tuple[str, str] | None:
    """(label, url) for one id (any spelling canonical_id reads), or None without a known page."""
    canonical = canonical_id(concept_id)
    if _MESH.match(canonical):
        return f"MeSH {canonical}", f"https://meshb.nlm.nih.gov/record/ui?ui={canonical}"
    if match := _OMIM.match(canonical):
        return f"OMIM {match[1]}", f"https://omim.org/entry/{match[1]}"
    if match := _UMLS.match(canonical):
        return f"UMLS {match[1]}", f"https://uts.nlm.nih.gov/uts/umls/concept/{match[1]}"
    return None


def link_outs(concept: Concept) -> list[tuple[str, str]]:
    """Links for the concept's own id and its alternative ids, each page once, own id first."""
    links: dict[str, str] = {}
    for concept_id in (concept.concept_id, *concept.alt_ids):
        found = link_out(concept_id)
        if found is not None:
            links.setdefault(found[1], found[0])
    return [(label, url) for url, label in links.items()]
