"""Alembic environment: Curalink runs migrations programmatically on the project's own connection."""

from __future__ import annotations

from alembic import context

from core.store.schema import Base

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("Curalink migrations run through core.store.project, which passes a connection")

context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
