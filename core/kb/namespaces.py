"""Which of a concept's ids is its primary one, by the project's preferred id namespaces.

MEDIC makes 1,362 of its 11,915 concepts OMIM-primary (Breast Neoplasms is `OMIM:114480`, with
`D001943` as an alternative), while NCBI-disease, CTD and PubTator link to the MeSH id. A project
states an ordered list of namespaces (default MeSH, then OMIM); a concept whose alternative ids hold
one in a better-ranked namespace than its primary is keyed by that one instead, and keeps the old
primary as an alternative, so it still answers to both.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from core.kb.identifiers import canonical_id, namespace_of

DEFAULT_NAMESPACES: tuple[str, ...] = ("MESH", "OMIM")
SETTING_KEY = "id_namespaces"


def parse_namespaces(values: Iterable[str]) -> tuple[str, ...]:
    """Upper-cased, de-duplicated namespace names from user input (`mesh,omim` or separate words)."""
    names: list[str] = []
    for value in values:
        names += [part.strip().upper() for part in value.replace(",", " ").split() if part.strip()]
    if "MSH" in names:
        names = ["MESH" if n == "MSH" else n for n in names]
    return tuple(dict.fromkeys(names))


def rank(concept_id: str, preference: Sequence[str]) -> int:
    """Position of the id's namespace in the preference; unlisted namespaces rank after every listed one."""
    namespace = namespace_of(concept_id)
    return preference.index(namespace) if namespace in preference else len(preference)


def preferred_id(
    primary: str, alt_ids: Iterable[str], preference: Sequence[str], vocabulary: str = ""
) -> str:
    """The best-ranked id among the primary and its alternatives; ties keep the primary (then file order)."""
    best, best_rank = primary, rank(primary, preference)
    for alt in alt_ids:
        candidate = canonical_id(alt, vocabulary)
        candidate_rank = rank(candidate, preference)
        if candidate_rank < best_rank:
            best, best_rank = candidate, candidate_rank
    return best
