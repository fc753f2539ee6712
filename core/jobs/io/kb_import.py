"""Importing a vocabulary file into a project, with its report: the one way `curalink kb import`, the
desk's File ▸ Import knowledge base and the demo do it, so each checks the file the same way, takes the
same options (names only, UMLS languages, MeSH typing) and hears the same warnings (an OBO `import:` that
is not followed, how MeSH records were typed).

A new vocabulary format goes in core/kb (a loader in core.kb.registry); this module only puts what a
loader reads into the project's store.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import CuralinkError
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

if TYPE_CHECKING:
    from core.store.project import Project

log = logging.getLogger(__name__)

DEFAULT_LANGUAGES = ("ENG",)  # UMLS: the languages kept when none are asked for
DEFAULT_TYPES_FROM = ("train", "dev")  # mesh-tsv: the splits whose annotations type untyped records


@dataclass
class KbImportReport:
    """What a KB import did: concepts and names added, the namespaces concepts were keyed by, and what the
    loader said about the file (`not_kept`: parts of it not imported; `typing`: how mesh-tsv records
    got their types)."""

    path: Path
    fmt: str
    names_only: bool
    added: int = 0
    present: int = 0  # already in the project (their new names merged); names only: the concepts matched
    names: int = 0
    rekeyed: int = 0
    unmatched: int = 0  # names only: concepts of the file that match none of the project's ids
    namespaces: list[str] = field(default_factory=list)
    not_kept: list[str] = field(default_factory=list)
    typing: list[str] = field(default_factory=list)

    @property
    def warnings(self) -> list[str]:
        return [*self.typing, *self.not_kept]

    def lines(self) -> list[str]:
        """The report as `curalink kb import` prints it and the desk shows it, line for line."""
        if self.names_only:
            head = (
                f"{self.path}: {self.names} names added to {self.present} concepts of the project; "
                f"{self.unmatched} concepts of the file match none of the project's ids and were not added"
            )
            return [head, *(f"  not kept: {warning}" for warning in self.not_kept)]
        head = (
            f"{self.path}: {self.added} concepts added, {self.present} already present (their new names "
            f"merged), {self.names} names added"
            + (
                f"; {self.rekeyed} keyed by a preferred-namespace id ({', '.join(self.namespaces)} first), "
                "answering to their other ids too"
                if self.rekeyed
                else ""
            )
        )
        return [
            head,
            *(f"  types: {warning}" for warning in self.typing),
            *(f"  not kept: {warning}" for warning in self.not_kept),
        ]


def import_kb(
    project: Project,
    path: Path | str,
    fmt: str,
    *,
    names_only: bool = False,
    languages: Collection[str] | None = None,
    sources: Collection[str] | None = None,
    tree_numbers: Path | str | None = None,
    actions: Path | str | None = None,
    types_from: Collection[str] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> KbImportReport:
    """Load `path` as `fmt` and store its concepts (or, `names_only`, only their names onto the concepts
    the project has); one transaction, so a cancel or a bad file stores nothing.

    The file is refused before anything is read when it is missing, when it plainly is another format,
    or when an option does not apply to `fmt`. `languages` / `sources`: umls-rrf; `tree_numbers`,
    `actions`, `types_from`: mesh-tsv (typing records; `types_from` are the splits whose annotations
    type what nothing else does: leave out a split you evaluate on)."""
    from core.kb import load_kb, sniff_kb_format

    path = Path(path)
    if not path.exists():
        raise CuralinkError(f"{path}: no such file or folder")
    sniffed = sniff_kb_format(path)
    if sniffed is not None and sniffed != fmt:
        raise CuralinkError(f"{path}: looks like a {sniffed} file, not {fmt}; nothing was imported")
    if fmt != "mesh-tsv" and (tree_numbers or actions or types_from):
        raise CuralinkError("--tree-numbers, --actions and --types-from apply to --format mesh-tsv only")
    report = KbImportReport(path, fmt, names_only)
    options: dict = {}
    if fmt == "umls-rrf":
        options = {"languages": set(languages or DEFAULT_LANGUAGES), "sources": set(sources) if sources else None}
    elif fmt == "obo":
        options = {"on_warning": report.not_kept.append}
    elif fmt == "mesh-tsv":
        from core.store.annotated_types import annotated_semantic_types

        options = {
            "tree_numbers": tree_numbers,
            "actions": actions,
            "on_summary": report.typing.append,
            "annotated_types": annotated_semantic_types(project, types_from or DEFAULT_TYPES_FROM),
        }
    concepts = load_kb(path, fmt, progress=progress, cancel=cancel, **options)
    summary = project.kb.import_concepts(
        concepts, source=str(path), fmt=fmt, names_only=names_only, progress=progress, cancel=cancel
    )
    report.added, report.present, report.names = summary.added, summary.skipped, summary.names
    report.rekeyed, report.unmatched = summary.rekeyed, summary.unmatched
    report.namespaces = list(project.settings.id_namespaces())
    log.debug("%s (%s): %d concepts added, %d names", path, fmt, report.added, report.names)
    return report

