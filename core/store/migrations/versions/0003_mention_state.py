"""current-state table: one row per decided mention, kept with each appended decision

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23 12:30:00

The desk, exports and training read the present of curation from `mention_state` instead of replaying
the whole decision log (which grew with the log: 345 ms for the queue at 20,000 decisions). Filled here
by replaying the existing log, self-contained (plain SQL) so later code changes cannot alter what this
step does: per mention, link decisions stack, a `revert` pops the top, span and type edits are skipped.
Also an index on suggestions (mention_id, rank): the queue reads each mention's first two ranks.
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

EDIT_ACTIONS = ("adjust_span", "change_type", "add_mention", "delete_mention")
STATE_MARK = "curation.state_through_decision"


def upgrade() -> None:
    op.create_table(
        "mention_state",
        sa.Column("mention_id", sa.Integer(), nullable=False),
        sa.Column("decision_id", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(), nullable=False),
        sa.Column("concept_id", sa.String(), nullable=False),
        sa.Column("curator", sa.String(), nullable=False),
        sa.ForeignKeyConstraint(["mention_id"], ["mentions.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["decision_id"], ["decisions.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("mention_id"),
    )
    with op.batch_alter_table("mention_state") as batch_op:
        batch_op.create_index("ix_mention_state_decision_id", ["decision_id"], unique=False)
    with op.batch_alter_table("suggestions") as batch_op:  # the queue reads ranks 1 and 2 per mention
        batch_op.create_index("ix_suggestions_mention_rank", ["mention_id", "rank"], unique=False)
    connection = op.get_bind()
    stacks: dict[int, list[tuple]] = {}
    newest = 0
    for row in connection.execute(
        sa.text("SELECT id, mention_id, action, concept_id, curator FROM decisions ORDER BY id")
    ):
        newest = row.id
        if row.action in EDIT_ACTIONS:
            continue
        stack = stacks.setdefault(row.mention_id, [])
        if row.action == "revert":
            if stack:
                stack.pop()
        else:
            stack.append(tuple(row))
    rows = [
        {"mention_id": m, "decision_id": top[0], "action": top[2], "concept_id": top[3], "curator": top[4]}
        for m, stack in stacks.items()
        if stack
        for top in [stack[-1]]
    ]
    if rows:
        connection.execute(
            sa.text(
                "INSERT INTO mention_state (mention_id, decision_id, action, concept_id, curator) "
                "VALUES (:mention_id, :decision_id, :action, :concept_id, :curator)"
            ),
            rows,
        )
    connection.execute(
        sa.text("INSERT OR REPLACE INTO settings (key, value_json) VALUES (:key, :value)"),
        {"key": STATE_MARK, "value": json.dumps(newest)},
    )


def downgrade() -> None:
    with op.batch_alter_table("suggestions") as batch_op:
        batch_op.drop_index("ix_suggestions_mention_rank")
    op.drop_table("mention_state")
    op.execute(sa.text(f"DELETE FROM settings WHERE key = '{STATE_MARK}'"))
