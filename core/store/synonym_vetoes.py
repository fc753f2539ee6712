"""The learnt synonyms the curators removed (`project.vetoes`): a (concept id, normalised string) pair per
veto, kept append-only in `synonym_vetoes` (migration 0006; before it, the settings row `learn.vetoed`).
The newest row per pair is in force (removed, or allowed again); the number of rows counts the changes, so a
veto set and lifted still tells a model load that the names it withdrew meanwhile must be read again
(core.project_models). What a veto means for learning is core.learn.teaching's business.
"""

from __future__ import annotations

from sqlalchemy import func, select

from core.store.access import StoreAccess
from core.store.schema import SynonymVetoRow


class SynonymVetoes:
    """Vetoed learnt synonyms (`project.vetoes`)."""

    def __init__(self, store: StoreAccess):
        self._store = store

    def vetoed(self) -> set[tuple[str, str]]:
        """The (concept id, normalised string) pairs removed now."""
        query = select(SynonymVetoRow.concept_id, SynonymVetoRow.string, SynonymVetoRow.vetoed).order_by(
            SynonymVetoRow.id
        )
        in_force: dict[tuple[str, str], bool] = {}
        with self._store.session() as session:
            for concept_id, string, vetoed in session.execute(query):
                in_force[(concept_id, string)] = vetoed
        return {pair for pair, on in in_force.items() if on}

    def set_veto(self, concept_id: str, string: str, on: bool) -> None:
        """Remove (or allow again) one pair; `string` is already normalised. Joins the caller's transaction."""
        with self._store.session() as session:
            session.add(SynonymVetoRow(concept_id=concept_id, string=string, vetoed=on))

    def changes(self) -> int:
        """How many times a veto was set or lifted."""
        with self._store.session() as session:
            return session.scalar(select(func.count()).select_from(SynonymVetoRow)) or 0
