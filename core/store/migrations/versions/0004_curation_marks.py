"""curation marks: notes, "flag for later" and "document done" on mentions and documents

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23 12:40:00

`curation_marks` is append-only like the decision log: each row is one curator's note, flag or done
mark (with curator and time) on a document or one of its mentions; the newest row per target and kind
is in force, an empty value clears it. A new table: existing projects start with no marks.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "curation_marks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("document_id", sa.Integer(), nullable=False),
        sa.Column("mention_id", sa.Integer(), nullable=True),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("curator", sa.String(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["document_id"], ["documents.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["mention_id"], ["mentions.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("curation_marks") as batch_op:
        batch_op.create_index("ix_curation_marks_document_id", ["document_id"], unique=False)
        batch_op.create_index("ix_curation_marks_mention_id", ["mention_id"], unique=False)


def downgrade() -> None:
    op.drop_table("curation_marks")
