"""A Curalink project: a folder with `curalink.db` (SQLite, WAL) and its models, indexes and logs.

Imports are atomic per file: a bad line, a cancel or a crash rolls the whole file back, so the project
is exactly as it was before the import began (nothing already stored is lost or half-written).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event, func, insert, select, update
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import DatabaseError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

import core.store.migrations as migrations_package
from core.documents import Candidate, Document, Mention, Passage, Relation
from core.errors import CuralinkError, ProjectError
from core.kb.concept import Concept
from core.kb.knowledge_base import KnowledgeBase
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress
from core.store.curation import EDIT_ACTIONS, replay
from core.store.schema import (
    ConceptRow,
    DecisionRow,
    DocumentRow,
    ImportRunRow,
    MentionRow,
    ModelVersionRow,
    NameRow,
    PassageRow,
    RelationRow,
    SuggestionRow,
)
from core.text.normalize import normalize_name

log = logging.getLogger(__name__)

DB_NAME = "curalink.db"
SUBFOLDERS = ("models", "index", "logs")
DUPLICATE_POLICIES = ("skip", "update", "error")
DECISION_ACTIONS = (
    "accept",
    "reject",
    "correct",
    "nil",
    "ambiguous",
    "revert",
    *EDIT_ACTIONS,
)
_MULTI = "|"


@dataclass(frozen=True)
class NewDecision:
    """One decision to write with `Project.record_decisions` (the bulk form of `record_decision`)."""

    mention_id: int
    action: str
    concept_id: str = ""
    curator: str = ""
    model_version: str = ""
    detail: dict = field(default_factory=dict)


@dataclass
class ImportSummary:
    added: int = 0
    skipped: int = 0
    updated: int = 0
    mentions: int = 0
    names: int = 0
    skipped_ids: list[str] = field(default_factory=list)


def _alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(Path(migrations_package.__file__).parent))
    return config


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.close()


def _engine(db_path: Path) -> Engine:
    engine = create_engine(f"sqlite:///{db_path}")
    event.listen(engine, "connect", _sqlite_pragmas)
    return engine


class Project:
    """Open with `Project.open(path)` or `Project.create(path)`; close when done (or use `with`)."""

    def __init__(self, path: Path, engine: Engine):
        self.path = path
        self.engine = engine
        self._sessions = sessionmaker(engine, expire_on_commit=False)

    # --- lifecycle -------------------------------------------------------------------------------

    @classmethod
    def create(cls, path: str | Path) -> Project:
        root = Path(path)
        if (root / DB_NAME).exists():
            raise ProjectError(f"{root}: a Curalink project already exists here")
        if root.exists() and not root.is_dir():
            raise ProjectError(f"{root}: exists and is not a folder")
        root.mkdir(parents=True, exist_ok=True)
        for sub in SUBFOLDERS:
            (root / sub).mkdir(exist_ok=True)
        engine = _engine(root / DB_NAME)
        config = _alembic_config()
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
        log.info("created project %s", root)
        return cls(root, engine)

    @classmethod
    def open(cls, path: str | Path, *, upgrade: bool = True) -> Project:
        root = Path(path)
        db_path = root / DB_NAME
        if not root.is_dir():
            raise ProjectError(f"{root}: no such project folder (create one with `curalink init {root}`)")
        if not db_path.is_file():
            raise ProjectError(
                f"{root}: not a Curalink project (no {DB_NAME}; create one with `curalink init`)"
            )
        engine = _engine(db_path)
        script = ScriptDirectory.from_config(_alembic_config())
        known = {rev.revision for rev in script.walk_revisions()}
        try:
            with engine.connect() as connection:
                current = MigrationContext.configure(connection).get_current_revision()
        except DatabaseError as exc:
            engine.dispose()
            raise ProjectError(f"{db_path}: not a readable SQLite database ({exc.orig})") from exc
        if current is None:
            engine.dispose()
            raise ProjectError(f"{db_path}: not a Curalink project database (no schema version)")
        if current not in known:
            engine.dispose()
            raise ProjectError(
                f"{db_path}: schema version {current} is newer than this Curalink understands; "
                "upgrade Curalink to open it"
            )
        if upgrade and current != script.get_current_head():
            config = _alembic_config()
            with engine.begin() as connection:
                config.attributes["connection"] = connection
                command.upgrade(config, "head")
            log.info("upgraded %s from schema %s", db_path, current)
        for sub in SUBFOLDERS:
            (root / sub).mkdir(exist_ok=True)
        return cls(root, engine)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Project:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    @property
    def models_dir(self) -> Path:
        return self.path / "models"

    @property
    def index_dir(self) -> Path:
        return self.path / "index"

    @property
    def logs_dir(self) -> Path:
        return self.path / "logs"

    @contextmanager
    def session(self) -> Iterator[Session]:
        """One transaction: committed on success, rolled back on any error (a cancel included)."""
        session = self._sessions()
        try:
            yield session
            session.commit()
        except OperationalError as exc:
            session.rollback()
            if "locked" in str(exc.orig):
                raise ProjectError(
                    f"{self.path / DB_NAME}: the database is locked by another program"
                ) from exc
            raise
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()

    # --- documents -------------------------------------------------------------------------------

    def import_documents(
        self,
        documents: Iterable[Document],
        *,
        source: str = "",
        fmt: str = "",
        split: str = "",
        on_duplicate: str = "skip",
        origin: str = "gold",
        batch_size: int = 200,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken = NEVER_CANCELLED,
    ) -> ImportSummary:
        """Store documents with their mentions, atomically for the whole iterable.

        Duplicate ids (already stored, or repeated in the file like PMID 8528200 in NCBI-disease train):
        `skip` keeps the first and logs a warning, `update` replaces text and non-curator mentions of a
        document no curator has touched yet, `error` stops and stores nothing.
        """
        if on_duplicate not in DUPLICATE_POLICIES:
            raise CuralinkError(f"unknown duplicate policy {on_duplicate!r}; use one of {DUPLICATE_POLICIES}")
        summary = ImportSummary()
        with self.session() as session:
            existing = dict(session.execute(select(DocumentRow.external_id, DocumentRow.id)).all())
            batch: list[Document] = []
            for document in documents:
                cancel.raise_if_cancelled()
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

    def _handle_duplicate(self, session, document, existing, policy, source, split, origin, summary) -> None:
        if policy == "error":
            raise CuralinkError(f"{source or 'import'}: document {document.doc_id} is already in the project")
        if policy == "skip" or existing[document.doc_id] == -1:
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
                title=document.title, text=document.text, source_file=source, split=split or DocumentRow.split
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
                "metadata_json": json.dumps(doc.metadata, ensure_ascii=False),
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
                {"document_id": row_id, "position": i, "offset": p.offset, "text": p.text, "kind": p.kind}
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
                    "arguments_json": json.dumps(list(r.arguments)),
                    "source_key": r.relation_id,
                }
                for r in doc.relations
            ]
        if passages:
            session.execute(insert(PassageRow), passages)
        if mentions:
            session.execute(insert(MentionRow), mentions)
        if relations:
            session.execute(insert(RelationRow), relations)
        summary.mentions += len(mentions)

    def document_ids(self, split: str | None = None) -> list[str]:
        with self.session() as session:
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
        with self.session() as session:
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
            raise CuralinkError(f"no document {external_id!r} in {self.path}")
        return docs[0]

    @staticmethod
    def _to_document(session: Session, row: DocumentRow, include_removed: bool) -> tuple[Document, list[int]]:
        passages = tuple(Passage(p.offset, p.text, p.kind) for p in row.passages)
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
                infons=json.loads(m.infons_json),
            )
            for m in kept
        )
        relations = tuple(
            Relation(r.type, tuple(json.loads(r.arguments_json)), r.source_key)
            for r in session.scalars(select(RelationRow).where(RelationRow.document_id == row.id))
        )
        document = Document(row.external_id, passages, mentions, relations, json.loads(row.metadata_json))
        return document, [m.id for m in kept]

    # --- knowledge base ------------------------------------------------------------------------

    def import_concepts(
        self,
        concepts: Iterable[Concept],
        *,
        source: str = "",
        fmt: str = "",
        batch_size: int = 5000,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken = NEVER_CANCELLED,
    ) -> ImportSummary:
        """Store concepts and their names atomically; a concept already stored gains the new names only."""
        summary = ImportSummary()
        with self.session() as session:
            known = set(session.scalars(select(ConceptRow.id)))
            concept_rows: list[dict] = []
            name_rows: list[dict] = []
            for concept in concepts:
                cancel.raise_if_cancelled()
                if concept.concept_id in known:
                    summary.skipped += 1
                else:
                    known.add(concept.concept_id)
                    concept_rows.append(_concept_row(concept))
                    summary.added += 1
                seen: set[str] = set()
                for name in concept.names:
                    if name and name not in seen:
                        seen.add(name)
                        name_rows.append(
                            {
                                "concept_id": concept.concept_id,
                                "name": name,
                                "normalized": normalize_name(name),
                                "preferred": name == concept.preferred_name,
                                "source": "kb",
                            }
                        )
                if len(name_rows) >= batch_size:
                    summary.names += self._flush_concepts(session, concept_rows, name_rows)
                    concept_rows, name_rows = [], []
                    progress(summary.added + summary.skipped, None, "concepts")
            summary.names += self._flush_concepts(session, concept_rows, name_rows)
            cancel.raise_if_cancelled()
            session.add(
                ImportRunRow(
                    kind="kb", source_file=source, format=fmt, added=summary.added, skipped=summary.skipped
                )
            )
        progress(summary.added + summary.skipped, None, "concepts")
        return summary

    @staticmethod
    def _flush_concepts(session: Session, concept_rows: list[dict], name_rows: list[dict]) -> int:
        if concept_rows:
            session.execute(insert(ConceptRow), concept_rows)
        if not name_rows:
            return 0
        result = session.connection().execute(
            sqlite_insert(NameRow.__table__).on_conflict_do_nothing(), name_rows
        )
        return max(result.rowcount, 0)

    def add_names(self, concept_id: str, names: Iterable[str], *, source: str = "curator") -> int:
        """Add synonyms to a stored concept (curator-sourced or from training mentions)."""
        rows = [
            {
                "concept_id": concept_id,
                "name": n,
                "normalized": normalize_name(n),
                "preferred": False,
                "source": source,
            }
            for n in dict.fromkeys(names)
            if n.strip()
        ]
        with self.session() as session:
            if session.get(ConceptRow, concept_id) is None:
                raise CuralinkError(f"no concept {concept_id!r} in the project's knowledge base")
            if not rows:
                return 0
            result = session.connection().execute(
                sqlite_insert(NameRow.__table__).on_conflict_do_nothing(), rows
            )
            return max(result.rowcount, 0)

    def knowledge_base(self, vocabulary: str | None = None) -> KnowledgeBase:
        """The stored KB in memory, names in insertion order (stable, so fingerprints are too)."""
        with self.session() as session:
            names: dict[str, list[str]] = {}
            for concept_id, name in session.execute(
                select(NameRow.concept_id, NameRow.name).order_by(NameRow.id)
            ):
                names.setdefault(concept_id, []).append(name)
            query = select(ConceptRow)
            if vocabulary:
                query = query.where(ConceptRow.vocabulary == vocabulary)
            concepts = [_row_concept(row, names.get(row.id, [])) for row in session.scalars(query)]
        return KnowledgeBase(concepts)

    def concept(self, concept_id: str) -> Concept | None:
        with self.session() as session:
            row = session.get(ConceptRow, concept_id)
            if row is None:
                return None
            names = list(
                session.scalars(
                    select(NameRow.name).where(NameRow.concept_id == concept_id).order_by(NameRow.id)
                )
            )
            return _row_concept(row, names)

    def search_names(self, query: str, limit: int = 50) -> list[tuple[str, str, str]]:
        """Type-ahead over names and ids: (concept_id, matched name, preferred name), prefix matches first."""
        key = normalize_name(query)
        if not key:
            return []
        with self.session() as session:
            exact_id = session.get(ConceptRow, query.strip())
            results: list[tuple[str, str, str]] = []
            if exact_id is not None:
                results.append((exact_id.id, exact_id.preferred_name, exact_id.preferred_name))
            prefix = key.replace("%", "").replace("_", "")
            rows = session.execute(
                select(NameRow.concept_id, NameRow.name, ConceptRow.preferred_name)
                .join(ConceptRow, ConceptRow.id == NameRow.concept_id)
                .where(NameRow.normalized >= prefix, NameRow.normalized < prefix + "\uffff")
                .order_by(func.length(NameRow.normalized))
                .limit(limit * 3)
            ).all()
            if len(rows) < limit:
                rows += session.execute(
                    select(NameRow.concept_id, NameRow.name, ConceptRow.preferred_name)
                    .join(ConceptRow, ConceptRow.id == NameRow.concept_id)
                    .where(NameRow.normalized.like(f"% {prefix}%"))
                    .order_by(func.length(NameRow.normalized))
                    .limit(limit * 3)
                ).all()
        seen = {r[0] for r in results}
        for concept_id, name, preferred in rows:
            if concept_id not in seen:
                seen.add(concept_id)
                results.append((concept_id, name, preferred))
            if len(results) >= limit:
                break
        return results

    # --- suggestions, decisions, models ----------------------------------------------------------

    def store_suggestions(
        self,
        suggestions: dict[int, Sequence[Candidate]],
        *,
        retriever_version: str = "",
        reranker_version: str = "",
    ) -> int:
        """Replace the suggestions of the given mentions (by database id) with new ranked candidates."""
        rows = [
            {
                "mention_id": mention_id,
                "concept_id": c.concept_id,
                "rank": rank,
                "matched_name": c.matched_name,
                "retriever_score": float(c.retriever_score),
                "reranker_score": None if c.reranker_score is None else float(c.reranker_score),
                "retriever_version": retriever_version,
                "reranker_version": reranker_version,
            }
            for mention_id, candidates in suggestions.items()
            for rank, c in enumerate(candidates, start=1)
        ]
        with self.session() as session:
            if suggestions:
                session.query(SuggestionRow).filter(SuggestionRow.mention_id.in_(list(suggestions))).delete()
            if rows:
                session.execute(insert(SuggestionRow), rows)
        return len(rows)

    def suggestions(self, mention_id: int) -> list[Candidate]:
        with self.session() as session:
            rows = session.scalars(
                select(SuggestionRow)
                .where(SuggestionRow.mention_id == mention_id)
                .order_by(SuggestionRow.rank)
            ).all()
            names = dict(
                session.execute(
                    select(ConceptRow.id, ConceptRow.preferred_name).where(
                        ConceptRow.id.in_([r.concept_id for r in rows])
                    )
                ).all()
            )
        return [
            Candidate(
                r.concept_id, names.get(r.concept_id, ""), r.matched_name, r.retriever_score, r.reranker_score
            )
            for r in rows
        ]

    def record_decision(
        self,
        mention_id: int,
        action: str,
        *,
        concept_id: str = "",
        curator: str = "",
        model_version: str = "",
        detail: dict | None = None,
    ) -> int:
        return self.record_decisions(
            [NewDecision(mention_id, action, concept_id, curator, model_version, detail or {})]
        )[0]

    def record_decisions(self, decisions: Sequence[NewDecision]) -> list[int]:
        """Write many decisions in one transaction (a bulk accept is all or nothing); returns their ids."""
        decisions = list(decisions)
        for decision in decisions:
            if decision.action not in DECISION_ACTIONS:
                raise CuralinkError(
                    f"unknown decision {decision.action!r}; use one of {', '.join(DECISION_ACTIONS)}"
                )
        if not decisions:
            return []
        with self.session() as session:
            wanted = {d.mention_id for d in decisions}
            known: set[int] = set()
            ordered = sorted(wanted)
            for start in range(0, len(ordered), 500):  # SQLite caps bound parameters per statement
                chunk = ordered[start : start + 500]
                known.update(session.scalars(select(MentionRow.id).where(MentionRow.id.in_(chunk))))
            missing = sorted(wanted - known)
            if missing:
                raise CuralinkError(f"no mention with id {missing[0]}")
            rows = [_decision_row(d) for d in decisions]
            session.add_all(rows)
            session.flush()
            return [row.id for row in rows]

    def current_decisions(
        self, curator: str | None = None, *, mention_ids: Sequence[int] | None = None
    ) -> dict[int, DecisionRow]:
        """The effective decision per mention, replaying the append-only history (reverts undo)."""
        with self.session() as session:
            query = select(DecisionRow).order_by(DecisionRow.id)
            if curator is not None:
                query = query.where(DecisionRow.curator == curator)
            if mention_ids is not None:
                query = query.where(DecisionRow.mention_id.in_(list(mention_ids)))
            return replay(session.scalars(query))

    def register_model(
        self,
        kind: str,
        version: str,
        path: Path,
        *,
        metrics: dict | None = None,
        kb_fingerprint: str = "",
        data_fingerprint: str = "",
        parent_version: str = "",
        status: str = "candidate",
    ) -> None:
        with self.session() as session:
            session.add(
                ModelVersionRow(
                    kind=kind,
                    version=version,
                    path=str(path),
                    status=status,
                    metrics_json=json.dumps(metrics or {}),
                    kb_fingerprint=kb_fingerprint,
                    data_fingerprint=data_fingerprint,
                    parent_version=parent_version,
                )
            )

    def promote_model(self, kind: str, version: str) -> None:
        """Make one version the active one of its kind; the previous active one is retired, not deleted."""
        with self.session() as session:
            target = session.scalar(
                select(ModelVersionRow).where(
                    ModelVersionRow.kind == kind, ModelVersionRow.version == version
                )
            )
            if target is None:
                raise CuralinkError(f"no {kind} model version {version!r}")
            session.execute(
                update(ModelVersionRow)
                .where(ModelVersionRow.kind == kind, ModelVersionRow.status == "active")
                .values(status="retired")
            )
            target.status = "active"

    def active_model(self, kind: str) -> ModelVersionRow | None:
        with self.session() as session:
            return session.scalar(
                select(ModelVersionRow)
                .where(ModelVersionRow.kind == kind, ModelVersionRow.status == "active")
                .order_by(ModelVersionRow.id.desc())
            )

    def model_versions(self, kind: str | None = None) -> list[ModelVersionRow]:
        with self.session() as session:
            query = select(ModelVersionRow).order_by(ModelVersionRow.id)
            if kind:
                query = query.where(ModelVersionRow.kind == kind)
            return list(session.scalars(query))

    # --- curator queries (the desk) -----------------------------------------------------------

    def suggestions_for(self, mention_ids: Sequence[int]) -> dict[int, list[Candidate]]:
        """Ranked candidates of many mentions in one query, so opening an abstract costs one round trip."""
        found: dict[int, list[Candidate]] = {mention_id: [] for mention_id in mention_ids}
        if not found:
            return found
        with self.session() as session:
            rows = session.execute(
                select(SuggestionRow, ConceptRow.preferred_name)
                .outerjoin(ConceptRow, ConceptRow.id == SuggestionRow.concept_id)
                .where(SuggestionRow.mention_id.in_(list(found)))
                .order_by(SuggestionRow.mention_id, SuggestionRow.rank)
            ).all()
        for row, preferred in rows:
            found[row.mention_id].append(
                Candidate(
                    row.concept_id, preferred or "", row.matched_name, row.retriever_score, row.reranker_score
                )
            )
        return found

    def suggestion_version(self, mention_id: int) -> str:
        """The model version(s) behind a mention's suggestions, recorded with the decision acted on them."""
        with self.session() as session:
            row = session.execute(
                select(SuggestionRow.retriever_version, SuggestionRow.reranker_version)
                .where(SuggestionRow.mention_id == mention_id)
                .limit(1)
            ).first()
        if row is None:
            return ""
        return "+".join(v for v in row if v)

    def queue(self) -> list[QueueEntry]:
        """Per document: mention and reviewed counts, and the smallest top-two score margin (uncertainty)."""
        state = self.current_decisions()
        with self.session() as session:
            docs = session.execute(
                select(DocumentRow.id, DocumentRow.external_id, DocumentRow.title).order_by(DocumentRow.id)
            ).all()
            mentions = session.execute(
                select(MentionRow.id, MentionRow.document_id).where(MentionRow.removed.is_(False))
            ).all()
            scores = session.execute(
                select(SuggestionRow.mention_id, SuggestionRow.retriever_score, SuggestionRow.reranker_score)
                .where(SuggestionRow.rank <= 2)
                .order_by(SuggestionRow.mention_id, SuggestionRow.rank)
            ).all()
        top: dict[int, list[float]] = {}
        for mention_id, retrieved, reranked in scores:
            top.setdefault(mention_id, []).append(retrieved if reranked is None else reranked)
        entries = {row_id: QueueEntry(external_id, title) for row_id, external_id, title in docs}
        for mention_id, document_id in mentions:
            entry = entries[document_id]
            entry.mentions += 1
            entry.reviewed += mention_id in state
            pair = top.get(mention_id)
            if pair is None:
                entry.unsuggested += 1
                continue
            margin = pair[0] - pair[1] if len(pair) > 1 else 1.0
            if mention_id not in state:
                entry.margin = min(entry.margin, margin)
        return list(entries.values())

    def add_mention(
        self, document_id: str, start: int, end: int, *, type: str = "", curator: str | None = None
    ) -> int:
        """A curator-drawn mention (origin 'curator'); its text is cut from the stored document.

        With `curator`, an `add_mention` decision is logged in the same transaction (provenance).
        """
        with self.session() as session:
            document = session.scalar(select(DocumentRow).where(DocumentRow.external_id == document_id))
            if document is None:
                raise CuralinkError(f"no document {document_id!r} in {self.path}")
            if not 0 <= start < end <= len(document.text):
                raise CuralinkError(f"{document_id}: span [{start}, {end}) is outside the text")
            row = MentionRow(
                document_id=document.id,
                start=start,
                end=end,
                text=document.text[start:end],
                type=type,
                origin="curator",
            )
            session.add(row)
            session.flush()
            if curator is not None:
                edit = NewDecision(
                    row.id, "add_mention", curator=curator, detail={"start": start, "end": end}
                )
                session.add(_decision_row(edit))
            return row.id

    def set_mention_removed(
        self, mention_id: int, removed: bool = True, *, curator: str | None = None
    ) -> None:
        """Delete (or restore) a mention by flag, so its decisions and an undo survive.

        With `curator`, a `delete_mention` decision (detail `restored` on a restore) is logged with it.
        """
        with self.session() as session:
            row = session.get(MentionRow, mention_id)
            if row is None:
                raise CuralinkError(f"no mention with id {mention_id}")
            row.removed = removed
            if curator is not None:
                detail = {"start": row.start, "end": row.end, "restored": not removed}
                session.add(
                    _decision_row(NewDecision(mention_id, "delete_mention", curator=curator, detail=detail))
                )

    def set_mention_span(
        self, mention_id: int, start: int, end: int, *, curator: str | None = None
    ) -> tuple[int, int]:
        """Move a mention's boundaries; returns the old span so the caller can undo.

        With `curator`, an `adjust_span` decision holding the old and new offsets is logged with it.
        """
        with self.session() as session:
            row = session.get(MentionRow, mention_id)
            if row is None:
                raise CuralinkError(f"no mention with id {mention_id}")
            text = row.document.text
            if not 0 <= start < end <= len(text):
                raise CuralinkError(f"mention {mention_id}: span [{start}, {end}) is outside the text")
            old = (row.start, row.end)
            row.start, row.end, row.text = start, end, text[start:end]
            if curator is not None:
                detail = {"old_start": old[0], "old_end": old[1], "new_start": start, "new_end": end}
                session.add(
                    _decision_row(NewDecision(mention_id, "adjust_span", curator=curator, detail=detail))
                )
            return old

    # --- summary ---------------------------------------------------------------------------------

    def stats(self) -> dict:
        with self.session() as session:
            count = lambda model: session.scalar(select(func.count()).select_from(model))  # noqa: E731
            splits = dict(
                session.execute(select(DocumentRow.split, func.count()).group_by(DocumentRow.split)).all()
            )
            origins = dict(
                session.execute(select(MentionRow.origin, func.count()).group_by(MentionRow.origin)).all()
            )
            vocabularies = dict(
                session.execute(
                    select(ConceptRow.vocabulary, func.count()).group_by(ConceptRow.vocabulary)
                ).all()
            )
            reviewed = session.scalar(select(func.count(func.distinct(DecisionRow.mention_id))))
            stats = {
                "project": str(self.path),
                "documents": count(DocumentRow),
                "documents_by_split": {k or "(none)": v for k, v in splits.items()},
                "mentions": session.scalar(
                    select(func.count()).select_from(MentionRow).where(MentionRow.removed.is_(False))
                ),
                "mentions_by_origin": origins,
                "concepts": count(ConceptRow),
                "concepts_by_vocabulary": vocabularies,
                "names": count(NameRow),
                "suggestions": count(SuggestionRow),
                "decisions": count(DecisionRow),
                "mentions_reviewed": reviewed,
                "model_versions": count(ModelVersionRow),
            }
        for kind in ("retriever", "reranker"):
            active = self.active_model(kind)
            stats[f"{kind}_version"] = active.version if active else None
        return stats


@dataclass
class QueueEntry:
    """One row of the curation queue; `margin` is 1.0 when nothing unreviewed is uncertain."""

    doc_id: str
    title: str
    mentions: int = 0
    reviewed: int = 0
    unsuggested: int = 0
    margin: float = 1.0

    @property
    def status(self) -> str:
        if self.mentions and self.reviewed >= self.mentions:
            return "done"
        return "in progress" if self.reviewed else "unreviewed"


def _decision_row(decision: NewDecision) -> DecisionRow:
    return DecisionRow(
        mention_id=decision.mention_id,
        action=decision.action,
        concept_id=decision.concept_id,
        curator=decision.curator,
        model_version=decision.model_version,
        detail_json=json.dumps(decision.detail),
    )


def _concept_row(concept: Concept) -> dict:
    return {
        "id": concept.concept_id,
        "vocabulary": concept.vocabulary,
        "preferred_name": concept.preferred_name,
        "semantic_types": _MULTI.join(concept.semantic_types),
        "definition": concept.definition,
        "tree_numbers": _MULTI.join(concept.tree_numbers),
        "parents": _MULTI.join(concept.parents),
        "alt_ids": _MULTI.join(concept.alt_ids),
    }


def _split(value: str) -> tuple[str, ...]:
    return tuple(v for v in value.split(_MULTI) if v) if value else ()


def _row_concept(row: ConceptRow, names: list[str]) -> Concept:
    return Concept(
        concept_id=row.id,
        vocabulary=row.vocabulary,
        preferred_name=row.preferred_name,
        synonyms=tuple(n for n in names if n != row.preferred_name),
        alt_ids=_split(row.alt_ids),
        semantic_types=_split(row.semantic_types),
        definition=row.definition,
        tree_numbers=_split(row.tree_numbers),
        parents=_split(row.parents),
    )
