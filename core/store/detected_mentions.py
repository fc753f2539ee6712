"""What detection reads from and writes into the store (`project.documents.detection_facts`,
`add_detected_mentions`): which documents have mentions and where those came from, and the detected
mentions themselves. The rules over them are core.jobs.linking.detect_targets' and mentions'."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session

from core.documents import Mention
from core.store.schema import DocumentRow, MentionRow

# Mentions of these origins were made inside the project; any other origin came from a file.
PROJECT_ORIGINS = ("detected", "curator")


@dataclass
class DetectionFacts:
    """Every document (id, split, source file) in store order; those with a mention (deleted ones
    included), those with a mention from a file (gold), and the files that annotated some document."""

    documents: list[tuple[str, str, str]] = field(default_factory=list)
    with_mentions: set[str] = field(default_factory=set)
    gold: set[str] = field(default_factory=set)
    annotated_files: set[str] = field(default_factory=set)


def detection_facts(session: Session) -> DetectionFacts:
    rows = session.execute(
        select(DocumentRow.id, DocumentRow.external_id, DocumentRow.split, DocumentRow.source_file).order_by(
            DocumentRow.id
        )
    ).all()
    external = {row_id: doc_id for row_id, doc_id, _, _ in rows}
    with_mentions = set(session.scalars(select(MentionRow.document_id).distinct()))
    gold = set(
        session.scalars(select(MentionRow.document_id).where(MentionRow.origin.not_in(PROJECT_ORIGINS)).distinct())
    )
    annotated_files = set(
        session.scalars(
            select(func.distinct(DocumentRow.source_file))
            .join(MentionRow, MentionRow.document_id == DocumentRow.id)
            .where(MentionRow.origin.not_in(PROJECT_ORIGINS), DocumentRow.source_file != "")
        )
    )
    return DetectionFacts(
        [(doc_id, split, source) for _, doc_id, split, source in rows],
        {external[i] for i in with_mentions},
        {external[i] for i in gold},
        annotated_files,
    )


def add_detected(session: Session, found: Iterable[tuple[str, Mention]]) -> int:
    """Unlinked: the dictionary's ids stay in the infons (a guess is not a link; linking suggests)."""
    found = list(found)
    if not found:
        return 0
    row_ids = dict(session.execute(select(DocumentRow.external_id, DocumentRow.id)).all())
    rows = [
        {
            "document_id": row_ids[doc_id],
            "start": mention.start,
            "end": mention.end,
            "text": mention.text,
            "type": mention.type,
            "concept_id": "",
            "origin": "detected",
            "infons_json": json.dumps(mention.infons, ensure_ascii=False),
        }
        for doc_id, mention in found
    ]
    session.execute(insert(MentionRow), rows)
    return len(rows)
