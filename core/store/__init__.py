"""The project store: schema, migrations and the `Project` object."""

from core.store.project import ImportSummary, Project

__all__ = ["ImportSummary", "Project"]
