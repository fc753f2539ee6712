"""Documents in the store: atomic imports, reading documents back, curator mention edits (written by
core.store.mention_edits) and detected mentions (core.store.detected_mentions).

Imports are atomic per file: a bad line, a cancel or a crash rolls the whole file back (nothing stored is
lost or half-written). Passage infons, relation roles and infons, and a document's BioC collection (under
`_bioc_collection`) are kept in the 0002 columns (`passages.infons_json`, `relations.roles_json` /
`infons_json`, `documents.metadata_json`), so an export gives back what an import read."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from sqlalchemy import func, insert, select, update
from sqlalchemy.orm import Session

from core.documents import Document, Mention, Passage, Relation
from core.errors import CuralinkError, InputError
from core.formats.jsonl import to_json
from core.formats.report import FormatReport, InvalidItemsError, skip_or_raise
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress
from core.store import detected_mentions, mention_edits, mention_reads, span_infons
from core.store.access import StoreAccess
from core.store.curation_marks import restore_marks
from core.store.detected_mentions import DetectionFacts
from core.store.schema import (
    DecisionRow,
    DocumentRow,
    ImportRunRow,
    MentionRow,
    PassageRow,
    RelationRow,
)

TRAINING_SPLITS = ("train", "dev")  # the splits whose gold models learn from (test is for measuring)

log = logging.getLogger(__name__)

DUPLICATE_POLICIES = ("skip", "update", "error")
INVALID_POLICIES = ("error", "skip")
_COLLECTION_KEY = "_bioc_collection"  # where metadata_json keeps Document.collection


@dataclass
class ImportSummary:
    """What an import did. `skipped` / `skipped_ids` are documents already in the project before the
    import (the `on_duplicate` policy); `in_file_duplicates` are documents the file itself repeats
    exactly (NCBI-disease train repeats PMID 8528200), always skipped; `invalid` counts the items a
    lenient import skipped as bad (listed in the read report)."""

    added: int = 0
    skipped: int = 0
    updated: int = 0
    mentions: int = 0
    names: int = 0
    rekeyed: int = 0
    unmatched: int = 0  # kb import --names-only: concepts of the file the project has none of
    skipped_ids: list[str] = field(default_factory=list)
    in_file_duplicates: list[str] = field(default_factory=list)
    invalid: int = 0


class DocumentStore:
    """The corpus: documents, their mentions and mention edits (`project.documents`)."""

    def __init__(self, store: StoreAccess):
        self._store = store

    def import_documents(
        self,
        documents: Iterable[Document],
        *,
        source: str = "",
        fmt: str = "",
        split: str = "",
        on_duplicate: str = "skip",
        on_invalid: str = "error",
        report: FormatReport | None = None,
        origin: str = "gold",
        batch_size: int = 200,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken = NEVER_CANCELLED,
    ) -> ImportSummary:
        """Store documents with their mentions, atomically for the whole iterable.

        Ids already stored before this import: `on_duplicate` `skip` keeps the stored one and logs a
        warning, `update` replaces text and non-curator mentions of a document no curator has touched
        yet, `error` stops and stores nothing. A document the file repeats exactly is skipped and
        listed in `in_file_duplicates`; one repeated with other content is a problem of the file.
        `report` is the reader's (read_corpus(..., report=report)): with `on_invalid` "error" any
        problem in it, or found here, stores nothing and raises InvalidItemsError listing them all;
        with "skip" the rest is stored. Without a report the first problem raises.
        """
        if on_duplicate not in DUPLICATE_POLICIES:
            raise CuralinkError(f"unknown duplicate policy {on_duplicate!r}; use one of {DUPLICATE_POLICIES}")
        if on_invalid not in INVALID_POLICIES:
            raise CuralinkError(f"unknown invalid-item policy {on_invalid!r}; use one of {INVALID_POLICIES}")
        summary = ImportSummary()
        with self._store.session() as session:
            existing = dict(session.execute(select(DocumentRow.external_id, DocumentRow.id)).all())
            seen: dict[str, bytes] = {}  # doc_id -> content digest, for documents of this import
            batch: list[Document] = []
            for document in documents:
                cancel.raise_if_cancelled()
                if document.doc_id in seen:
                    self._repeated_in_file(document, seen, source, report, summary)
                    continue
                seen[document.doc_id] = _digest(document)
                if document.doc_id in existing:
                    self._handle_duplicate(
                        session, document, existing, on_duplicate, source, split, origin, summary
                    )
                    continue
                existing[document.doc_id] = -1
                batch.append(document)
                if len(batch) >= batch_size:
                    self._insert_documents(session, batch, source, split, origin, summary, existing)
                    batch = []
                    progress(summary.added + summary.skipped + summary.updated, None, "documents")
            if batch:
                self._insert_documents(session, batch, source, split, origin, summary, existing)
            cancel.raise_if_cancelled()
            if report is not None:
                summary.invalid = report.problem_count
                if report.problem_count and on_invalid == "error":
                    raise InvalidItemsError(source or "import", report)
            session.add(
                ImportRunRow(
                    kind="corpus",
                    source_file=source,
                    format=fmt,
                    added=summary.added,
                    skipped=summary.skipped,
                    updated=summary.updated,
                )
            )
        progress(summary.added + summary.skipped + summary.updated, None, "documents")
        if summary.skipped:
            log.warning(
                "%s: skipped %d document(s) whose id was already stored: %s",
                source or "import",
                summary.skipped,
                ", ".join(summary.skipped_ids[:10]),
            )
        return summary

    @staticmethod
    def _repeated_in_file(document, seen, source, report, summary) -> None:
        if seen[document.doc_id] == _digest(document):
            summary.in_file_duplicates.append(document.doc_id)
            if report is not None:
                report.duplicate(document.doc_id, source or "import")
            return
        skip_or_raise(
            report,
            InputError(
                source or "import",
                "appears again in the file with different content; the later one is skipped",
                item=f"document {document.doc_id}",
            ),
        )

    def _handle_duplicate(self, session, document, existing, policy, source, split, origin, summary) -> None:
        if policy == "error":
            raise CuralinkError(
                f"{source or 'import'}: document {document.doc_id} is already in the project "
                "(imported before; use --on-duplicate skip or update)"
            )
        if policy == "skip":
            summary.skipped += 1
            summary.skipped_ids.append(document.doc_id)
            return
        row_id = existing[document.doc_id]
        touched = session.scalar(
            select(func.count(DecisionRow.id)).join(MentionRow).where(MentionRow.document_id == row_id)
        )
        if touched:
            raise CuralinkError(
                f"{source or 'import'}: document {document.doc_id} has curator decisions; "
                "refusing to replace it (use --on-duplicate skip)"
            )
        session.query(PassageRow).filter_by(document_id=row_id).delete()
        session.query(RelationRow).filter_by(document_id=row_id).delete()
        session.query(MentionRow).filter(
            MentionRow.document_id == row_id, MentionRow.origin != "curator"
        ).delete()
        session.execute(
            update(DocumentRow)
            .where(DocumentRow.id == row_id)
            .values(
                title=document.title,
                text=document.text,
                source_file=source,
                split=split or DocumentRow.split,
                metadata_json=_metadata_json(document),
            )
        )
        self._insert_children(session, [(row_id, document)], origin, summary)
        summary.updated += 1

    def _insert_documents(self, session, batch, source, split, origin, summary, existing) -> None:
        rows = [
            {
                "external_id": doc.doc_id,
                "title": doc.title,
                "text": doc.text,
                "source_file": source,
                "split": split,
                "metadata_json": _metadata_json(doc),
            }
            for doc in batch
        ]
        ids = session.scalars(
            insert(DocumentRow).returning(DocumentRow.id, sort_by_parameter_order=True), rows
        ).all()
        for doc, row_id in zip(batch, ids, strict=True):
            existing[doc.doc_id] = row_id
        self._insert_children(session, list(zip(ids, batch, strict=True)), origin, summary)
        summary.added += len(batch)

    @staticmethod
    def _insert_children(
        session, pairs: list[tuple[int, Document]], origin: str, summary: ImportSummary
    ) -> None:
        passages, mentions, relations = [], [], []
        for row_id, doc in pairs:
            passages += [
                {
                    "document_id": row_id,
                    "position": i,
                    "offset": p.offset,
                    "text": p.text,
                    "kind": p.kind,
                    "infons_json": json.dumps(p.infons, ensure_ascii=False),
                }
                for i, p in enumerate(doc.passages)
            ]
            mentions += [
                {
                    "document_id": row_id,
                    "start": m.start,
                    "end": m.end,
                    "text": m.text,
                    "type": m.type,
                    "concept_id": m.concept_id,
                    "origin": m.origin or origin,
                    "source_key": m.mention_id,
                    "infons_json": json.dumps(m.infons, ensure_ascii=False),
                }
                for m in doc.mentions
            ]
            relations += [
                {
                    "document_id": row_id,
                    "type": r.type,
                    "arguments_json": json.dumps(list(r.arguments), ensure_ascii=False),
                    "source_key": r.relation_id,
                    "roles_json": json.dumps(list(r.roles), ensure_ascii=False),
                    "infons_json": json.dumps(r.infons, ensure_ascii=False),
                }
                for r in doc.relations
            ]
        if passages:
            session.execute(insert(PassageRow), passages)
        if mentions:
            session.execute(insert(MentionRow), mentions)
        if relations:
            session.execute(insert(RelationRow), relations)
        restore_marks(session, [row_id for row_id, _ in pairs])  # notes and flags a file carried back
        summary.mentions += len(mentions)

    def splits(self) -> list[str]:
        """The splits documents were imported into (train, dev, test, ...), without the empty one."""
        with self._store.session() as session:
            found = session.scalars(select(DocumentRow.split).where(DocumentRow.split != "").distinct())
            return sorted(found)

    def document_ids(self, split: str | None = None) -> list[str]:
        with self._store.session() as session:
            query = select(DocumentRow.external_id).order_by(DocumentRow.id)
            if split:
                query = query.where(DocumentRow.split == split)
            return list(session.scalars(query))

    def documents(
        self, split: str | None = None, *, ids: Sequence[str] | None = None, include_removed: bool = False
    ) -> Iterator[Document]:
        """Documents as stored, with their (non-removed) mentions; `concept_id` is the mention's gold id."""
        for document, _ in self.documents_with_mention_ids(split, ids=ids, include_removed=include_removed):
            yield document

    def documents_with_mention_ids(
        self, split: str | None = None, *, ids: Sequence[str] | None = None, include_removed: bool = False
    ) -> Iterator[tuple[Document, list[int]]]:
        """Documents and, aligned with `document.mentions`, each mention's database id."""
        with self._store.session() as session:
            query = select(DocumentRow).order_by(DocumentRow.id)
            if split:
                query = query.where(DocumentRow.split == split)
            if ids is not None:
                query = query.where(DocumentRow.external_id.in_(list(ids)))
            for row in session.scalars(query):
                yield self._to_document(session, row, include_removed)

    def document(self, external_id: str) -> Document:
        docs = list(self.documents(ids=[external_id]))
        if not docs:
            raise CuralinkError(f"no document {external_id!r} in {self._store.path}")
        return docs[0]

    @staticmethod
    def _to_document(session: Session, row: DocumentRow, include_removed: bool) -> tuple[Document, list[int]]:
        passages = tuple(Passage(p.offset, p.text, p.kind, json.loads(p.infons_json)) for p in row.passages)
        kept = [
            m
            for m in sorted(row.mentions, key=lambda m: (m.start, m.end, m.id))
            if include_removed or not m.removed
        ]
        mentions = tuple(
            Mention(
                start=m.start,
                end=m.end,
                text=m.text,
                type=m.type,
                concept_id=m.concept_id,
                mention_id=m.source_key,
                origin=m.origin,
                infons=span_infons.current(json.loads(m.infons_json), m.start, m.end),
            )
            for m in kept
        )
        relations = tuple(
            Relation(
                r.type,
                tuple(json.loads(r.arguments_json)),
                r.source_key,
                tuple(json.loads(r.roles_json)),
                json.loads(r.infons_json),
            )
            for r in session.scalars(
                select(RelationRow).where(RelationRow.document_id == row.id).order_by(RelationRow.id)
            )
        )
        metadata = json.loads(row.metadata_json)
        collection = metadata.pop(_COLLECTION_KEY, {})
        document = Document(row.external_id, passages, mentions, relations, metadata, collection)
        return document, [m.id for m in kept]

    def add_mention(
        self, document_id: str, start: int, end: int, *, type: str = "", curator: str | None = None
    ) -> int:
        """A curator-drawn mention (origin 'curator'); its text is cut from the stored document.

        With `curator`, an `add_mention` decision is logged in the same transaction (provenance).
        """
        with self._store.session() as session:
            return mention_edits.add_mention(session, self._store.path, document_id, start, end, type, curator)

    def set_mention_removed(
        self, mention_id: int, removed: bool = True, *, curator: str | None = None
    ) -> None:
        """Delete (or restore) a mention by flag, so its decisions and an undo survive.

        With `curator`, a `delete_mention` decision (detail `restored` on a restore) is logged with it.
        """
        with self._store.session() as session:
            mention_edits.set_mention_removed(session, mention_id, removed, curator)

    def set_mention_span(
        self, mention_id: int, start: int, end: int, *, curator: str | None = None
    ) -> tuple[int, int]:
        """Move a mention's boundaries; returns the old span so the caller can undo.

        The mention's suggestions (computed for the old text) are deleted in the same transaction; the
        caller re-suggests it. With `curator`, an `adjust_span` decision holding the old and new offsets
        is logged with it.
        """
        with self._store.session() as session:
            return mention_edits.set_mention_span(session, mention_id, start, end, curator)

    def set_mention_type(self, mention_id: int, type: str, *, curator: str | None = None) -> str:
        """Change a mention's type; returns the old one. Like a span edit, it deletes the mention's
        suggestions in the same transaction; with `curator`, a `change_type` decision is logged."""
        with self._store.session() as session:
            return mention_edits.set_mention_type(session, mention_id, type, curator)

    def add_detected_mentions(self, found: Iterable[tuple[str, Mention]]) -> int:
        """Store what a detector found, (document id, mention) pairs, unlinked (origin "detected"), in
        one statement; returns how many. Which documents and spans may take them is the caller's rule
        (core.jobs.linking.detect_targets, core.jobs.linking.mentions)."""
        with self._store.session() as session:
            return detected_mentions.add_detected(session, found)

    def detection_facts(self) -> DetectionFacts:
        """What the choice of documents to detect in reads (core.jobs.linking.detect_targets)."""
        with self._store.session() as session:
            return detected_mentions.detection_facts(session)

    def occurrence_documents(
        self, document: str | None = None, *, containing: str | None = None
    ) -> list[tuple[str, str, list[tuple[int, int]]]]:
        """Where a string may occur (core.jobs.curation.occurrences): (document id, text, spans of its live
        mentions), of `document` or of every document whose text holds the ASCII word `containing`."""
        with self._store.session() as session:
            return mention_reads.occurrence_documents(session, self._store.path, document, containing)

    def live_mention_texts(self) -> dict[int, str]:
        """Mention id -> text, of every mention not deleted."""
        with self._store.session() as session:
            return mention_reads.live_mention_texts(session)

    def live_mention(self, mention_id: int) -> tuple[str, str]:
        """(text, type) of a mention not deleted; an error for a deleted or unknown one."""
        with self._store.session() as session:
            return mention_reads.live_mention(session, mention_id)

    def mention_positions(self) -> dict[int, tuple[str, int, int, str, str]]:
        """Mention id -> (document id, start, end, text, origin) for every mention, removed ones included."""
        with self._store.session() as session:
            rows = session.execute(
                select(
                    MentionRow.id,
                    DocumentRow.external_id,
                    MentionRow.start,
                    MentionRow.end,
                    MentionRow.text,
                    MentionRow.origin,
                ).join(DocumentRow, DocumentRow.id == MentionRow.document_id)
            ).all()
        return {row[0]: tuple(row[1:]) for row in rows}

    def mention_documents(self, mention_ids: Sequence[int]) -> dict[int, str]:
        """Mention id -> the id of the document it belongs to."""
        with self._store.session() as session:
            rows = session.execute(
                select(MentionRow.id, DocumentRow.external_id)
                .join(DocumentRow, DocumentRow.id == MentionRow.document_id)
                .where(MentionRow.id.in_(list(mention_ids)))
            ).all()
        return dict(rows)

    def mention_types(self) -> list[str]:
        """The mention types in use, most frequent first (the desk's type chooser)."""
        with self._store.session() as session:
            rows = session.execute(
                select(MentionRow.type, func.count())
                .where(MentionRow.type != "", MentionRow.removed.is_(False))
                .group_by(MentionRow.type)
                .order_by(func.count().desc(), MentionRow.type)
            ).all()
        return [kind for kind, _ in rows]


def _metadata_json(document: Document) -> str:
    metadata = dict(document.metadata)
    if document.collection:
        metadata[_COLLECTION_KEY] = document.collection
    return json.dumps(metadata, ensure_ascii=False)


def _digest(document: Document) -> bytes:
    """A fingerprint of everything a document holds, to tell an exact repeat from a conflict."""
    text = json.dumps(to_json(document), ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()
