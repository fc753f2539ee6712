"""Re-key stored concepts by the project's preferred id namespaces (core.kb.namespaces).

Runs inside the caller's transaction: after a KB import (so MEDIC's Breast Neoplasms is stored as
`D001943`, answering to `OMIM:114480` too) and when a curator changes the preference. Every table that
names a concept by id follows: names, the id table, suggestions, and other concepts' `parents`.
Decisions are history and keep the id they were made with; exports map them through the id table.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from sqlalchemy import bindparam, select, text, update
from sqlalchemy.orm import Session

from core.kb.namespaces import preferred_id
from core.store.schema import ConceptIdRow, ConceptRow, NameRow, SuggestionRow

log = logging.getLogger(__name__)
_MULTI = "|"


def rekey_concepts(session: Session, preference: Sequence[str]) -> int:
    """Give every concept its best-ranked id as primary; returns how many changed.

    A concept keeps its primary when the better id is already another concept's primary (two
    concepts never merge), and the count of such clashes is logged.
    """
    rows = session.execute(
        select(ConceptRow.id, ConceptRow.alt_ids, ConceptRow.vocabulary).where(ConceptRow.alt_ids != "")
    ).all()
    if not rows:
        return 0
    primaries = set(session.scalars(select(ConceptRow.id)))
    mapping: dict[str, str] = {}
    alt_lists: dict[str, str] = {}
    clashes: list[str] = []
    for concept_id, alt_ids, vocabulary in rows:
        alts = [a for a in alt_ids.split(_MULTI) if a]
        best = preferred_id(concept_id, alts, preference, vocabulary)
        if best == concept_id:
            continue
        if best in primaries:
            clashes.append(f"{concept_id} (not {best})")
            continue
        primaries.discard(concept_id)
        primaries.add(best)
        mapping[concept_id] = best
        alt_lists[best] = _MULTI.join(dict.fromkeys([concept_id, *(a for a in alts if a != best)]))
    if clashes:
        log.warning(
            "%d concept(s) kept their primary id, the preferred one being another concept's: %s",
            len(clashes),
            ", ".join(clashes[:5]),
        )
    if not mapping:
        return 0
    # Parent rows change key before their children follow; SQLite checks the keys at commit.
    session.execute(text("PRAGMA defer_foreign_keys = ON"))
    pairs = [{"old": old, "new": new, "alts": alt_lists[new]} for old, new in mapping.items()]
    table = ConceptRow.__table__
    session.connection().execute(
        update(table)
        .where(table.c.id == bindparam("old"))
        .values(id=bindparam("new"), alt_ids=bindparam("alts")),
        pairs,
    )
    for model in (NameRow, ConceptIdRow):
        child = model.__table__
        session.connection().execute(
            update(child).where(child.c.concept_id == bindparam("old")).values(concept_id=bindparam("new")),
            [{"old": old, "new": new} for old, new in mapping.items()],
        )
    _rewrite_suggestions(session, mapping)
    _rewrite_parents(session, mapping)
    log.info("re-keyed %d concept(s) by the preferred namespaces %s", len(mapping), ", ".join(preference))
    return len(mapping)


def _rewrite_suggestions(session: Session, mapping: dict[str, str]) -> None:
    """One pass over the suggestions (their concept ids are not indexed) through a temporary table."""
    session.execute(text("CREATE TEMP TABLE IF NOT EXISTS rekey_map (old TEXT PRIMARY KEY, new TEXT)"))
    session.execute(text("DELETE FROM rekey_map"))
    session.execute(
        text("INSERT INTO rekey_map (old, new) VALUES (:old, :new)"),
        [{"old": old, "new": new} for old, new in mapping.items()],
    )
    session.execute(
        text(
            f"UPDATE {SuggestionRow.__tablename__} SET concept_id = "
            "(SELECT new FROM rekey_map WHERE old = concept_id) "
            "WHERE concept_id IN (SELECT old FROM rekey_map)"
        )
    )
    session.execute(text("DROP TABLE rekey_map"))


def _rewrite_parents(session: Session, mapping: dict[str, str]) -> None:
    rows = session.execute(select(ConceptRow.id, ConceptRow.parents).where(ConceptRow.parents != "")).all()
    changed = []
    for concept_id, parents in rows:
        parts = parents.split(_MULTI)
        new_parts = [mapping.get(p, p) for p in parts]
        if new_parts != parts:
            changed.append({"key": concept_id, "parents": _MULTI.join(new_parts)})
    if changed:
        table = ConceptRow.__table__
        session.connection().execute(
            update(table).where(table.c.id == bindparam("key")).values(parents=bindparam("parents")), changed
        )
