"""Noticing what another process wrote to an open project (the CLI linking, importing, bulk-accepting).

A desk polls `marks()` every few seconds: a handful of indexed `max(id)` reads, well under a millisecond.
When they moved, `changed_documents` names the documents touched since (decisions and suggestions carry
ascending ids), or None when the change is wider (documents or concepts added or removed, a model
promoted) and the whole queue is re-read. The desk's own writes are seen too: re-reading a document it
just wrote is cheap, and it keeps one rule, "what is on screen is what is stored".
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select

from core.store.access import StoreAccess
from core.store.schema import (
    ConceptRow,
    DecisionRow,
    DocumentRow,
    ImportRunRow,
    MentionRow,
    ModelVersionRow,
    SuggestionRow,
)


@dataclass(frozen=True)
class ChangeMarks:
    decision: int
    suggestion: int
    mention: int
    documents: int
    concepts: int
    models: tuple


class ChangeWatch:
    """Change marks, so the desk can tell what another program changed (`project.changes`)."""

    def __init__(self, store: StoreAccess):
        self._store = store

    def marks(self) -> ChangeMarks:
        with self._store.session() as session:
            newest = lambda column: session.scalar(select(func.max(column))) or 0  # noqa: E731
            models = tuple(
                session.execute(
                    select(ModelVersionRow.kind, ModelVersionRow.version).where(
                        ModelVersionRow.status == "active"
                    )
                ).all()
            )
            return ChangeMarks(
                newest(DecisionRow.id),
                newest(SuggestionRow.id),
                newest(MentionRow.id),
                session.scalar(select(func.count()).select_from(DocumentRow)) or 0,
                session.scalar(select(func.count()).select_from(ConceptRow)) or 0,
                tuple(sorted(models)),
            )

    def changed_documents(self, before: ChangeMarks, after: ChangeMarks) -> set[str] | None:
        """External ids of the documents whose mentions got decisions, suggestions or new mentions between
        two marks; None when the change is wider than documents (re-read everything)."""
        if (before.documents, before.concepts, before.models) != (
            after.documents,
            after.concepts,
            after.models,
        ):
            return None
        if after.decision < before.decision or after.suggestion < before.suggestion:
            return None  # rows were removed (a re-import replaced documents): not a local change
        with self._store.session() as session:
            touched = (
                select(DocumentRow.external_id)
                .join(MentionRow, MentionRow.document_id == DocumentRow.id)
                .distinct()
            )
            found: set[str] = set()
            if after.decision > before.decision:
                found.update(
                    session.scalars(
                        touched.join(DecisionRow, DecisionRow.mention_id == MentionRow.id).where(
                            DecisionRow.id > before.decision
                        )
                    )
                )
            if after.suggestion > before.suggestion:
                found.update(
                    session.scalars(
                        touched.join(SuggestionRow, SuggestionRow.mention_id == MentionRow.id).where(
                            SuggestionRow.id > before.suggestion
                        )
                    )
                )
            if after.mention > before.mention:
                found.update(session.scalars(touched.where(MentionRow.id > before.mention)))
        return found

    def decided_since(self, decision_id: int) -> tuple[int, list[int]]:
        """(the newest decision id, the mentions with a decision written after `decision_id`): what a
        linker loading again must learn from, when it learnt everything up to `decision_id` before."""
        with self._store.session() as session:
            newest = session.scalar(select(func.max(DecisionRow.id))) or 0
            mentions = session.scalars(
                select(DecisionRow.mention_id).where(DecisionRow.id > decision_id).distinct()
            ).all()
        return newest, sorted(mentions)

    def wide_changes(self) -> tuple[int, int]:
        """(the newest import run, mentions flagged removed): changes to the KB and the mentions that log
        no decision (an import may replace names; a mention may be removed without a curator)."""
        with self._store.session() as session:
            return (
                session.scalar(select(func.max(ImportRunRow.id))) or 0,
                session.scalar(
                    select(func.count()).select_from(MentionRow).where(MentionRow.removed.is_(True))
                )
                or 0,
            )
