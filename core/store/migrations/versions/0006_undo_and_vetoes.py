"""undo history and synonym vetoes: their own tables, carried over from the settings JSON

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-04 17:00:00

Until now a curator's undo history was kept as settings rows (`undo.<curator>`: first step's number, how
many are done, every label; `undo.<curator>.<n>`: one step as JSON), and the learnt synonyms a curator
removed as one settings row `learn.vetoed` ([[concept id, normalised string], ...]) with a change counter
`learn.veto_changes`. They move to `undo_histories` / `undo_steps` and to the append-only
`synonym_vetoes`, and the old settings keys are removed. `curation.synonyms_through_decision` (what the last
model load learnt from, compared with the veto counter) is removed too, so the first load after this
step reads every decision again rather than trusting a counter that no longer exists.

Self-contained (plain SQL and JSON, no Curalink imports) so later code changes cannot alter what it does.
Which settings row is an index and which a step is read from its value (an index has "labels", a step
"kind"), since a curator's name may itself contain dots. A history whose steps are not all stored (never
written so by Curalink) keeps the steps after the last missing one.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

log = logging.getLogger(__name__)

VETOED_KEY = "learn.vetoed"
DROPPED_KEYS = (VETOED_KEY, "learn.veto_changes", "curation.synonyms_through_decision")

histories = sa.table(
    "undo_histories", sa.column("curator", sa.String), sa.column("first", sa.Integer), sa.column("done", sa.Integer)
)
steps = sa.table(
    "undo_steps",
    sa.column("curator", sa.String),
    sa.column("number", sa.Integer),
    sa.column("kind", sa.String),
    sa.column("label", sa.Text),
    sa.column("document", sa.String),
    sa.column("mention_id", sa.Integer),
    sa.column("data_json", sa.Text),
)
vetoes = sa.table(
    "synonym_vetoes",
    sa.column("concept_id", sa.String),
    sa.column("string", sa.Text),
    sa.column("vetoed", sa.Boolean),
    sa.column("created_at", sa.DateTime(timezone=True)),
)


def upgrade() -> None:
    op.create_table(
        "undo_histories",
        sa.Column("curator", sa.String(), nullable=False),
        sa.Column("first", sa.Integer(), nullable=False),
        sa.Column("done", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("curator"),
    )
    op.create_table(
        "undo_steps",
        sa.Column("curator", sa.String(), nullable=False),
        sa.Column("number", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("label", sa.Text(), nullable=False),
        sa.Column("document", sa.String(), nullable=False),
        sa.Column("mention_id", sa.Integer(), nullable=True),
        sa.Column("data_json", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("curator", "number"),
    )
    op.create_table(
        "synonym_vetoes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("concept_id", sa.String(), nullable=False),
        sa.Column("string", sa.Text(), nullable=False),
        sa.Column("vetoed", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("synonym_vetoes") as batch_op:
        batch_op.create_index("ix_synonym_vetoes_concept_id", ["concept_id"], unique=False)
    connection = op.get_bind()
    rows = connection.execute(
        sa.text("SELECT key, value_json FROM settings WHERE key LIKE 'undo.%' OR key IN :keys").bindparams(
            sa.bindparam("keys", expanding=True)
        ),
        {"keys": list(DROPPED_KEYS)},
    ).all()
    values = {key: json.loads(value) for key, value in rows}
    _carry_history(connection, values)
    pairs = values.get(VETOED_KEY) or []
    now = datetime.now(UTC)
    if pairs:
        connection.execute(
            vetoes.insert(),
            [{"concept_id": c, "string": s, "vetoed": True, "created_at": now} for c, s in sorted(pairs)],
        )
    connection.execute(
        sa.text("DELETE FROM settings WHERE key LIKE 'undo.%' OR key IN :keys").bindparams(
            sa.bindparam("keys", expanding=True)
        ),
        {"keys": list(DROPPED_KEYS)},
    )


def _carry_history(connection, values: dict) -> None:
    indexes = {
        key[len("undo.") :]: value
        for key, value in values.items()
        if key.startswith("undo.") and isinstance(value, dict) and "labels" in value
    }
    stored = {key: value for key, value in values.items() if isinstance(value, dict) and "kind" in value}
    for curator, index in sorted(indexes.items()):
        first, done, count = int(index["first"]), int(index["done"]), len(index["labels"])
        numbers = range(first, first + count)
        missing = [n for n in numbers if f"undo.{curator}.{n}" not in stored]
        if missing:
            log.warning("undo history of %r: steps %s were never stored; the older ones are dropped", curator, missing)
            kept_from = missing[-1] + 1
            done = max(0, done - (kept_from - first))
            first, numbers = kept_from, range(kept_from, first + count)
        connection.execute(histories.insert(), [{"curator": curator, "first": first, "done": done}])
        rows = []
        for number in numbers:
            step = stored[f"undo.{curator}.{number}"]
            rows.append(
                {
                    "curator": curator,
                    "number": number,
                    "kind": step["kind"],
                    "label": step["label"],
                    "document": step.get("document") or "",
                    "mention_id": step.get("mention"),
                    "data_json": json.dumps(step.get("data") or {}),
                }
            )
        if rows:
            connection.execute(steps.insert(), rows)


def downgrade() -> None:
    connection = op.get_bind()
    settings = sa.table("settings", sa.column("key", sa.String), sa.column("value_json", sa.Text))
    written = []
    for curator, first, done in connection.execute(sa.text("SELECT curator, first, done FROM undo_histories")):
        labels = []
        for number, kind, label, document, mention_id, data_json in connection.execute(
            sa.text(
                "SELECT number, kind, label, document, mention_id, data_json FROM undo_steps "
                "WHERE curator = :curator ORDER BY number"
            ),
            {"curator": curator},
        ):
            labels.append(label)
            step = {"kind": kind, "label": label, "document": document, "mention": mention_id}
            step["data"] = json.loads(data_json)
            written.append({"key": f"undo.{curator}.{number}", "value_json": json.dumps(step)})
        index = {"first": first, "done": done, "labels": labels}
        written.append({"key": f"undo.{curator}", "value_json": json.dumps(index)})
    in_force: dict[tuple[str, str], bool] = {}
    changes = 0
    for concept_id, string, vetoed in connection.execute(
        sa.text("SELECT concept_id, string, vetoed FROM synonym_vetoes ORDER BY id")
    ):
        in_force[(concept_id, string)] = bool(vetoed)
        changes += 1
    pairs = sorted([c, s] for (c, s), on in in_force.items() if on)
    written.append({"key": VETOED_KEY, "value_json": json.dumps(pairs)})
    written.append({"key": "learn.veto_changes", "value_json": json.dumps(changes)})
    if written:
        connection.execute(settings.insert(), written)
    op.drop_table("synonym_vetoes")
    op.drop_table("undo_steps")
    op.drop_table("undo_histories")
