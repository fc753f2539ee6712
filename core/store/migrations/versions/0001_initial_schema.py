"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-22 18:01:05.198355
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "concepts",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("vocabulary", sa.String(), nullable=False),
        sa.Column("preferred_name", sa.Text(), nullable=False),
        sa.Column("semantic_types", sa.Text(), nullable=False),
        sa.Column("definition", sa.Text(), nullable=False),
        sa.Column("tree_numbers", sa.Text(), nullable=False),
        sa.Column("parents", sa.Text(), nullable=False),
        sa.Column("alt_ids", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("concepts", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_concepts_vocabulary"), ["vocabulary"], unique=False)

    op.create_table(
        "documents",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("external_id", sa.String(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("source_file", sa.String(), nullable=False),
        sa.Column("split", sa.String(), nullable=False),
        sa.Column("metadata_json", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("documents", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_documents_external_id"), ["external_id"], unique=True)
        batch_op.create_index(batch_op.f("ix_documents_split"), ["split"], unique=False)

    op.create_table(
        "import_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("source_file", sa.Text(), nullable=False),
        sa.Column("format", sa.String(), nullable=False),
        sa.Column("added", sa.Integer(), nullable=False),
        sa.Column("skipped", sa.Integer(), nullable=False),
        sa.Column("updated", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "model_versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("version", sa.String(), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("metrics_json", sa.Text(), nullable=False),
        sa.Column("kb_fingerprint", sa.String(), nullable=False),
        sa.Column("data_fingerprint", sa.String(), nullable=False),
        sa.Column("parent_version", sa.String(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("kind", "version", name="uq_model_kind_version"),
    )
    op.create_table(
        "mentions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("document_id", sa.Integer(), nullable=False),
        sa.Column("start", sa.Integer(), nullable=False),
        sa.Column("end", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("type", sa.String(), nullable=False),
        sa.Column("concept_id", sa.String(), nullable=False),
        sa.Column("origin", sa.String(), nullable=False),
        sa.Column("source_key", sa.String(), nullable=False),
        sa.Column("infons_json", sa.Text(), nullable=False),
        sa.Column("removed", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["document_id"], ["documents.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("mentions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_mentions_document_id"), ["document_id"], unique=False)

    op.create_table(
        "names",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("concept_id", sa.String(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("normalized", sa.Text(), nullable=False),
        sa.Column("preferred", sa.Boolean(), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.ForeignKeyConstraint(["concept_id"], ["concepts.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("concept_id", "name", name="uq_names_concept_name"),
    )
    with op.batch_alter_table("names", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_names_concept_id"), ["concept_id"], unique=False)
        batch_op.create_index("ix_names_normalized", ["normalized"], unique=False)

    op.create_table(
        "passages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("document_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("offset", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.ForeignKeyConstraint(["document_id"], ["documents.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("passages", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_passages_document_id"), ["document_id"], unique=False)

    op.create_table(
        "relations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("document_id", sa.Integer(), nullable=False),
        sa.Column("type", sa.String(), nullable=False),
        sa.Column("arguments_json", sa.Text(), nullable=False),
        sa.Column("source_key", sa.String(), nullable=False),
        sa.ForeignKeyConstraint(["document_id"], ["documents.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("relations", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_relations_document_id"), ["document_id"], unique=False)

    op.create_table(
        "decisions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("mention_id", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(), nullable=False),
        sa.Column("concept_id", sa.String(), nullable=False),
        sa.Column("curator", sa.String(), nullable=False),
        sa.Column("model_version", sa.String(), nullable=False),
        sa.Column("detail_json", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["mention_id"], ["mentions.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("decisions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_decisions_created_at"), ["created_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_decisions_mention_id"), ["mention_id"], unique=False)

    op.create_table(
        "suggestions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("mention_id", sa.Integer(), nullable=False),
        sa.Column("concept_id", sa.String(), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("matched_name", sa.Text(), nullable=False),
        sa.Column("retriever_score", sa.Float(), nullable=False),
        sa.Column("reranker_score", sa.Float(), nullable=True),
        sa.Column("retriever_version", sa.String(), nullable=False),
        sa.Column("reranker_version", sa.String(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["mention_id"], ["mentions.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("suggestions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_suggestions_mention_id"), ["mention_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("suggestions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_suggestions_mention_id"))

    op.drop_table("suggestions")
    with op.batch_alter_table("decisions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_decisions_mention_id"))
        batch_op.drop_index(batch_op.f("ix_decisions_created_at"))

    op.drop_table("decisions")
    with op.batch_alter_table("relations", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_relations_document_id"))

    op.drop_table("relations")
    with op.batch_alter_table("passages", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_passages_document_id"))

    op.drop_table("passages")
    with op.batch_alter_table("names", schema=None) as batch_op:
        batch_op.drop_index("ix_names_normalized")
        batch_op.drop_index(batch_op.f("ix_names_concept_id"))

    op.drop_table("names")
    with op.batch_alter_table("mentions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_mentions_document_id"))

    op.drop_table("mentions")
    op.drop_table("model_versions")
    op.drop_table("import_runs")
    with op.batch_alter_table("documents", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_documents_split"))
        batch_op.drop_index(batch_op.f("ix_documents_external_id"))

    op.drop_table("documents")
    with op.batch_alter_table("concepts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_concepts_vocabulary"))

    op.drop_table("concepts")
