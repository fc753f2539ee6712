"""The project database schema (SQLAlchemy 2 ORM). Alembic migrations under core/store/migrations own it.

Decisions are append-only history: the current link of a mention is derived from its latest decision,
never stored in place, so nothing a curator did is overwritten.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    pass


class DocumentRow(Base):
    __tablename__ = "documents"
    # the queue reads id, external id and title of every document: a covering index spares it the texts
    __table_args__ = (Index("ix_documents_queue", "id", "external_id", "title"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    external_id: Mapped[str] = mapped_column(String, unique=True, index=True)
    title: Mapped[str] = mapped_column(Text, default="")
    text: Mapped[str] = mapped_column(Text)
    source_file: Mapped[str] = mapped_column(String, default="")
    split: Mapped[str] = mapped_column(String, default="", index=True)
    metadata_json: Mapped[str] = mapped_column(Text, default="{}")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    passages: Mapped[list[PassageRow]] = relationship(
        back_populates="document", cascade="all, delete-orphan", order_by="PassageRow.position"
    )
    mentions: Mapped[list[MentionRow]] = relationship(
        back_populates="document", cascade="all, delete-orphan", order_by="MentionRow.start"
    )


class PassageRow(Base):
    __tablename__ = "passages"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    offset: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(String, default="")
    infons_json: Mapped[str] = mapped_column(Text, default="{}", server_default="{}")

    document: Mapped[DocumentRow] = relationship(back_populates="passages")


class MentionRow(Base):
    __tablename__ = "mentions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"), index=True)
    start: Mapped[int] = mapped_column(Integer)
    end: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    type: Mapped[str] = mapped_column(String, default="")
    concept_id: Mapped[str] = mapped_column(String, default="")
    origin: Mapped[str] = mapped_column(String, default="gold")
    source_key: Mapped[str] = mapped_column(String, default="")
    infons_json: Mapped[str] = mapped_column(Text, default="{}")
    removed: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    document: Mapped[DocumentRow] = relationship(back_populates="mentions")


class RelationRow(Base):
    __tablename__ = "relations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"), index=True)
    type: Mapped[str] = mapped_column(String)
    arguments_json: Mapped[str] = mapped_column(Text)
    source_key: Mapped[str] = mapped_column(String, default="")
    roles_json: Mapped[str] = mapped_column(Text, default="[]", server_default="[]")
    infons_json: Mapped[str] = mapped_column(Text, default="{}", server_default="{}")


class ConceptRow(Base):
    __tablename__ = "concepts"

    id: Mapped[str] = mapped_column(String, primary_key=True)
    vocabulary: Mapped[str] = mapped_column(String, index=True)
    preferred_name: Mapped[str] = mapped_column(Text)
    semantic_types: Mapped[str] = mapped_column(Text, default="")
    definition: Mapped[str] = mapped_column(Text, default="")
    tree_numbers: Mapped[str] = mapped_column(Text, default="")
    parents: Mapped[str] = mapped_column(Text, default="")
    alt_ids: Mapped[str] = mapped_column(Text, default="")


class ConceptIdRow(Base):
    """Every id a concept answers to (its own and its alternatives), so any of them finds it."""

    __tablename__ = "concept_ids"

    id: Mapped[str] = mapped_column(String, primary_key=True)
    concept_id: Mapped[str] = mapped_column(
        ForeignKey("concepts.id", ondelete="CASCADE"), primary_key=True, index=True
    )


class SettingRow(Base):
    """A project-level choice (JSON value), stored in the project so it travels with the folder."""

    __tablename__ = "settings"

    key: Mapped[str] = mapped_column(String, primary_key=True)
    value_json: Mapped[str] = mapped_column(Text)


class NameRow(Base):
    __tablename__ = "names"
    __table_args__ = (
        UniqueConstraint("concept_id", "name", name="uq_names_concept_name"),
        Index("ix_names_normalized", "normalized"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    concept_id: Mapped[str] = mapped_column(ForeignKey("concepts.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(Text)
    normalized: Mapped[str] = mapped_column(Text)
    preferred: Mapped[bool] = mapped_column(Boolean, default=False)
    source: Mapped[str] = mapped_column(String, default="kb")


class ModelVersionRow(Base):
    __tablename__ = "model_versions"
    __table_args__ = (UniqueConstraint("kind", "version", name="uq_model_kind_version"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String)
    version: Mapped[str] = mapped_column(String)
    path: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String, default="candidate")
    metrics_json: Mapped[str] = mapped_column(Text, default="{}")
    kb_fingerprint: Mapped[str] = mapped_column(String, default="")
    data_fingerprint: Mapped[str] = mapped_column(String, default="")
    parent_version: Mapped[str] = mapped_column(String, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class SuggestionRow(Base):
    __tablename__ = "suggestions"
    # the queue reads each mention's first two ranks (core.store.desk_queries)
    __table_args__ = (Index("ix_suggestions_mention_rank", "mention_id", "rank"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    mention_id: Mapped[int] = mapped_column(ForeignKey("mentions.id", ondelete="CASCADE"), index=True)
    concept_id: Mapped[str] = mapped_column(String)
    rank: Mapped[int] = mapped_column(Integer)
    matched_name: Mapped[str] = mapped_column(Text, default="")
    retriever_score: Mapped[float] = mapped_column(Float)
    reranker_score: Mapped[float | None] = mapped_column(Float, nullable=True)
    retriever_version: Mapped[str] = mapped_column(String, default="")
    reranker_version: Mapped[str] = mapped_column(String, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class DecisionRow(Base):
    __tablename__ = "decisions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    mention_id: Mapped[int] = mapped_column(ForeignKey("mentions.id", ondelete="CASCADE"), index=True)
    action: Mapped[str] = mapped_column(String)
    concept_id: Mapped[str] = mapped_column(String, default="")
    curator: Mapped[str] = mapped_column(String, default="")
    model_version: Mapped[str] = mapped_column(String, default="")
    detail_json: Mapped[str] = mapped_column(Text, default="{}")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)


class MentionStateRow(Base):
    """The present of curation, one row per decided mention: the decision in force after replaying the
    mention's history (reverts undo). Written in the transaction that appends the decision, so the log
    stays append-only and the present is one indexed read (core.store.mention_state)."""

    __tablename__ = "mention_state"

    mention_id: Mapped[int] = mapped_column(ForeignKey("mentions.id", ondelete="CASCADE"), primary_key=True)
    decision_id: Mapped[int] = mapped_column(ForeignKey("decisions.id", ondelete="CASCADE"), index=True)
    action: Mapped[str] = mapped_column(String)
    concept_id: Mapped[str] = mapped_column(String, default="")
    curator: Mapped[str] = mapped_column(String, default="")


class CurationMarkRow(Base):
    """A curator's note, "flag for later" or "document done" on a mention or a document, append-only: the
    newest row per target and kind is in force (an empty value clears it), older rows are its history."""

    __tablename__ = "curation_marks"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"), index=True)
    mention_id: Mapped[int | None] = mapped_column(
        ForeignKey("mentions.id", ondelete="CASCADE"), nullable=True, index=True
    )
    kind: Mapped[str] = mapped_column(String)
    value: Mapped[str] = mapped_column(Text, default="")
    curator: Mapped[str] = mapped_column(String, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class QueueSummaryRow(Base):
    """The queue's figures of one document, recomputed when a write makes them stale (core.store.queue_summary):
    the queue of 20,000 documents is one read instead of an aggregate over every mention."""

    __tablename__ = "queue_summary"

    document_id: Mapped[int] = mapped_column(
        ForeignKey("documents.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    mentions: Mapped[int] = mapped_column(Integer)
    reviewed: Mapped[int] = mapped_column(Integer)
    unsuggested: Mapped[int] = mapped_column(Integer)
    margin: Mapped[float | None] = mapped_column(Float, nullable=True)  # None: nothing undecided is uncertain
    marked_done: Mapped[bool] = mapped_column(Boolean)


class QueueStaleRow(Base):
    """A document whose `queue_summary` row is out of date: written by SQLite triggers, emptied by the
    commit of the transaction that wrote (no foreign key: a deleted document's mentions still mark it)."""

    __tablename__ = "queue_stale"

    document_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)


class ImportRunRow(Base):
    __tablename__ = "import_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String)
    source_file: Mapped[str] = mapped_column(Text)
    format: Mapped[str] = mapped_column(String)
    added: Mapped[int] = mapped_column(Integer, default=0)
    skipped: Mapped[int] = mapped_column(Integer, default=0)
    updated: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class UndoHistoryRow(Base):
    """Where a curator's undo history stands (core.store.undo_history): the number of its oldest step kept
    and how many steps are done; the steps after those are the ones a redo does again."""

    __tablename__ = "undo_histories"

    curator: Mapped[str] = mapped_column(String, primary_key=True)
    first: Mapped[int] = mapped_column(Integer)
    done: Mapped[int] = mapped_column(Integer)


class UndoStepRow(Base):
    """One step of a curator's undo history: its kind, label, the document and mention an undo goes to,
    and what it changed (JSON, enough to take it back and to do it again; core.jobs.curation.undo)."""

    __tablename__ = "undo_steps"

    curator: Mapped[str] = mapped_column(String, primary_key=True)
    number: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    kind: Mapped[str] = mapped_column(String)
    label: Mapped[str] = mapped_column(Text)
    document: Mapped[str] = mapped_column(String, default="")
    mention_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    data_json: Mapped[str] = mapped_column(Text, default="{}")


class SynonymVetoRow(Base):
    """A learnt synonym a curator removed (vetoed) or allowed again, append-only: the newest row per
    (concept, normalised string) is in force; the number of rows says how often vetoes changed."""

    __tablename__ = "synonym_vetoes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    concept_id: Mapped[str] = mapped_column(String, index=True)
    string: Mapped[str] = mapped_column(Text)
    vetoed: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
