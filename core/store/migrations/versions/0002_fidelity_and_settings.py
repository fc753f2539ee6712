"""passage and relation infons, relation roles, concept id aliases, project settings

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23 05:00:00

- `passages.infons_json`, `relations.infons_json`, `relations.roles_json`: what BioC, PubTator3 and
  brat carry on passages and relations, kept so exports and JSONL lose nothing that was read.
- `concept_ids`: every id a concept answers to (its own and its alternatives), indexed, so a search
  or a link by any id finds the concept; filled here from the stored `alt_ids`.
- `settings`: project-level choices (for example the preferred id namespaces) stored with the project,
  so they travel with the folder.
- Stored concepts are keyed by the default preferred namespaces (MeSH, then OMIM), as a new import
  would be: a MEDIC project made before stops suggesting `OMIM:114480` for Breast Neoplasms.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("passages") as batch_op:
        batch_op.add_column(sa.Column("infons_json", sa.Text(), nullable=False, server_default="{}"))
    with op.batch_alter_table("relations") as batch_op:
        batch_op.add_column(sa.Column("roles_json", sa.Text(), nullable=False, server_default="[]"))
        batch_op.add_column(sa.Column("infons_json", sa.Text(), nullable=False, server_default="{}"))
    op.create_table(
        "concept_ids",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("concept_id", sa.String(), nullable=False),
        sa.ForeignKeyConstraint(["concept_id"], ["concepts.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", "concept_id"),
    )
    with op.batch_alter_table("concept_ids") as batch_op:
        batch_op.create_index("ix_concept_ids_concept_id", ["concept_id"], unique=False)
    op.create_table(
        "settings",
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("value_json", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )
    connection = op.get_bind()
    rows = []
    for concept_id, alt_ids in connection.execute(sa.text("SELECT id, alt_ids FROM concepts")):
        ids = dict.fromkeys([concept_id, *(a for a in (alt_ids or "").split("|") if a)])
        rows += [{"id": i, "concept_id": concept_id} for i in ids]
    if rows:
        connection.execute(
            sa.text("INSERT OR IGNORE INTO concept_ids (id, concept_id) VALUES (:id, :concept_id)"), rows
        )
    from sqlalchemy.orm import Session

    from core.kb.namespaces import DEFAULT_NAMESPACES
    from core.store.kb_rekey import rekey_concepts

    rekey_concepts(Session(bind=connection), DEFAULT_NAMESPACES)


def downgrade() -> None:
    op.drop_table("settings")
    op.drop_table("concept_ids")
    with op.batch_alter_table("relations") as batch_op:
        batch_op.drop_column("infons_json")
        batch_op.drop_column("roles_json")
    with op.batch_alter_table("passages") as batch_op:
        batch_op.drop_column("infons_json")
