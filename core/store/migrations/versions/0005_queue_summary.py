"""queue summary: the queue's figures per document in a table, marked stale by triggers

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-04 08:00:00

The desk's queue aggregated every mention with its current state and first two suggestions on each read
(343-362 ms at 20,000 documents, issue 31). `queue_summary` keeps those figures per document; triggers
on the tables they come from note the document in `queue_stale`, and each writing transaction recomputes
the stale rows before it commits (core.store.queue_summary). An index covering documents' id, external
id and title lets the queue read them without the abstracts' pages. Filled here for existing projects with
plain SQL, self-contained (the trigger SQL is a frozen copy of core.store.queue_summary.TRIGGERS) so
later code changes cannot alter what this step does. A later migration that rebuilds one of these
tables (alembic's batch mode copies and renames it) drops its triggers and must make them again.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

TRIGGERS = (
    "CREATE TRIGGER queue_stale_document_insert AFTER INSERT ON documents BEGIN INSERT OR IGNORE INTO queue_stale (document_id) VALUES (NEW.id); END",
    "CREATE TRIGGER queue_stale_mention_insert AFTER INSERT ON mentions BEGIN INSERT OR IGNORE INTO queue_stale (document_id) VALUES (NEW.document_id); END",
    "CREATE TRIGGER queue_stale_mention_delete AFTER DELETE ON mentions BEGIN INSERT OR IGNORE INTO queue_stale (document_id) VALUES (OLD.document_id); END",
    "CREATE TRIGGER queue_stale_mention_update AFTER UPDATE OF document_id, removed ON mentions BEGIN INSERT OR IGNORE INTO queue_stale (document_id) VALUES (OLD.document_id), (NEW.document_id); END",
    "CREATE TRIGGER queue_stale_state_insert AFTER INSERT ON mention_state BEGIN INSERT OR IGNORE INTO queue_stale (document_id) SELECT document_id FROM mentions WHERE id = NEW.mention_id; END",
    "CREATE TRIGGER queue_stale_state_delete AFTER DELETE ON mention_state BEGIN INSERT OR IGNORE INTO queue_stale (document_id) SELECT document_id FROM mentions WHERE id = OLD.mention_id; END",
    "CREATE TRIGGER queue_stale_state_update AFTER UPDATE OF mention_id ON mention_state BEGIN INSERT OR IGNORE INTO queue_stale (document_id) SELECT document_id FROM mentions WHERE id = OLD.mention_id; INSERT OR IGNORE INTO queue_stale (document_id) SELECT document_id FROM mentions WHERE id = NEW.mention_id; END",
    "CREATE TRIGGER queue_stale_suggestion_insert AFTER INSERT ON suggestions WHEN NEW.rank <= 2 BEGIN INSERT OR IGNORE INTO queue_stale (document_id) SELECT document_id FROM mentions WHERE id = NEW.mention_id; END",
    "CREATE TRIGGER queue_stale_suggestion_delete AFTER DELETE ON suggestions WHEN OLD.rank <= 2 BEGIN INSERT OR IGNORE INTO queue_stale (document_id) SELECT document_id FROM mentions WHERE id = OLD.mention_id; END",
    "CREATE TRIGGER queue_stale_suggestion_update AFTER UPDATE OF mention_id, rank, retriever_score, reranker_score ON suggestions WHEN OLD.rank <= 2 OR NEW.rank <= 2 BEGIN INSERT OR IGNORE INTO queue_stale (document_id) SELECT document_id FROM mentions WHERE id = OLD.mention_id; INSERT OR IGNORE INTO queue_stale (document_id) SELECT document_id FROM mentions WHERE id = NEW.mention_id; END",
    "CREATE TRIGGER queue_stale_mark_insert AFTER INSERT ON curation_marks WHEN NEW.kind = 'done' AND NEW.mention_id IS NULL BEGIN INSERT OR IGNORE INTO queue_stale (document_id) VALUES (NEW.document_id); END",
    "CREATE TRIGGER queue_stale_mark_delete AFTER DELETE ON curation_marks WHEN OLD.kind = 'done' AND OLD.mention_id IS NULL BEGIN INSERT OR IGNORE INTO queue_stale (document_id) VALUES (OLD.document_id); END",
    "CREATE TRIGGER queue_stale_mark_update AFTER UPDATE ON curation_marks BEGIN INSERT OR IGNORE INTO queue_stale (document_id) VALUES (OLD.document_id), (NEW.document_id); END",
)

FILL = (
    "INSERT INTO queue_summary (document_id, mentions, reviewed, unsuggested, margin, marked_done) "
    "SELECT d.id, count(m.id), count(s.mention_id), count(m.id) - count(f.id), "
    "min(CASE WHEN s.mention_id IS NOT NULL THEN NULL WHEN f.id IS NULL THEN NULL "
    "WHEN n.id IS NULL THEN 1.0 ELSE abs(coalesce(f.reranker_score, f.retriever_score) "
    "- coalesce(n.reranker_score, n.retriever_score)) END), "
    "coalesce((SELECT c.value FROM curation_marks c WHERE c.document_id = d.id AND c.mention_id IS NULL "
    "AND c.kind = 'done' ORDER BY c.id DESC LIMIT 1), '') != '' "
    "FROM documents d "
    "LEFT JOIN mentions m ON m.document_id = d.id AND m.removed = 0 "
    "LEFT JOIN mention_state s ON s.mention_id = m.id "
    "LEFT JOIN suggestions f ON f.mention_id = m.id AND f.rank = 1 "
    "LEFT JOIN suggestions n ON n.mention_id = m.id AND n.rank = 2 "
    "GROUP BY d.id"
)


def upgrade() -> None:
    op.create_table(
        "queue_summary",
        sa.Column("document_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("mentions", sa.Integer(), nullable=False),
        sa.Column("reviewed", sa.Integer(), nullable=False),
        sa.Column("unsuggested", sa.Integer(), nullable=False),
        sa.Column("margin", sa.Float(), nullable=True),
        sa.Column("marked_done", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(["document_id"], ["documents.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("document_id"),
    )
    op.create_table(
        "queue_stale",
        sa.Column("document_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.PrimaryKeyConstraint("document_id"),
    )
    with op.batch_alter_table("documents") as batch_op:  # the queue's documents side, without the texts
        batch_op.create_index("ix_documents_queue", ["id", "external_id", "title"], unique=False)
    connection = op.get_bind()
    connection.execute(sa.text(FILL))
    for sql in TRIGGERS:
        connection.execute(sa.text(sql))


def downgrade() -> None:
    for sql in TRIGGERS:
        op.execute(sa.text("DROP TRIGGER IF EXISTS " + sql.split()[2]))
    op.drop_table("queue_stale")
    op.drop_table("queue_summary")
    with op.batch_alter_table("documents") as batch_op:
        batch_op.drop_index("ix_documents_queue")
