"""Corpus import and export as operations that return what they did and what they could not keep, so
the CLI (`curalink corpus import`, `curalink export`) and the desk (File > Import corpus, Export) do
the same thing and say the same thing.

An import reads with a `FormatReport`: under `on_invalid="error"` every bad item of the file is listed
at once and nothing is stored (InvalidItemsError, which the desk turns into an offer to skip them);
under "skip" the rest is stored and each skipped item, in-file duplicate and deletion is written to a
tab-separated report in the project's logs folder. An export writes with a report too, and its
`loss_lines` say what the target format has no place for.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core.formats import FormatReport, get_format, read_corpus, write_corpus, write_problem_report
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress
from core.store.curation import curated_documents
from core.store.documents_store import ImportSummary

if TYPE_CHECKING:
    from core.store.project import Project


@dataclass(frozen=True)
class ImportResult:
    """What an import stored, the reader's report, and where the list of skipped items was written."""

    path: Path
    summary: ImportSummary
    report: FormatReport
    report_file: Path | None

    def lines(self) -> list[str]:
        """The summary as lines: what was added, then each kind of thing skipped or not kept."""
        summary, report, written = self.summary, self.report, self.report_file
        lines = [f"{self.path}: {summary.added} documents ({summary.mentions} mentions) added"]
        if summary.skipped:
            lines.append(
                f"  {summary.skipped} skipped as duplicates of documents already in the project "
                "(--on-duplicate skip): " + _ids(summary.skipped_ids)
            )
        if summary.updated:
            lines.append(
                f"  {summary.updated} documents already in the project updated (--on-duplicate update)"
            )
        if summary.in_file_duplicates:
            lines.append(
                f"  {len(summary.in_file_duplicates)} repeated in the file exactly, skipped: "
                + _ids(summary.in_file_duplicates)
            )
        duplicates_here = len(report.duplicates) - len(summary.in_file_duplicates)
        if duplicates_here > 0:
            lines.append(
                f"  {duplicates_here} repeated block(s) of a document skipped: "
                + _ids([d.doc_id for d in report.duplicates if d.doc_id not in summary.in_file_duplicates])
            )
        if report.problem_count:
            lines.append(
                f"  {report.problem_count} invalid item(s) skipped (--on-invalid skip), each listed in {written}"
            )
        lines += [f"  not kept: {line}" for line in report.loss_lines()]
        if report.deletion_count:
            held = [d.doc_id for d in report.deletions if d.in_file]
            lines.append(
                f"  {report.deletion_count} citation(s) deleted by the file (DeleteCitation): "
                + _ids([d.doc_id for d in report.deletions])
                + f"; {len(held)} of them were in the file and were not imported; documents with these ids "
                f"already in the project are kept (never deleted by an import), each listed in {written}"
            )
        return lines


@dataclass(frozen=True)
class ExportResult:
    """How many documents were written, and the writer's report of what the format could not keep."""

    path: Path
    fmt: str
    count: int
    report: FormatReport

    def lines(self) -> list[str]:
        return [f"wrote {self.count} documents to {self.path} ({self.fmt})"] + [
            f"  not written: {line}" for line in self.report.loss_lines()
        ]


def import_corpus(
    project: Project,
    path: Path | str,
    fmt: str,
    *,
    split: str = "",
    on_duplicate: str = "skip",
    on_invalid: str = "error",
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> ImportResult:
    """Import one corpus file or folder into `project`; raises InvalidItemsError (nothing stored) when
    it has bad items and `on_invalid` is "error"."""
    path = Path(path)
    get_format(fmt, path)
    report = FormatReport()
    summary = project.documents.import_documents(
        read_corpus(path, fmt, report=report),
        source=str(path),
        fmt=fmt,
        split=split,
        on_duplicate=on_duplicate,
        on_invalid=on_invalid,
        report=report,
        progress=progress,
        cancel=cancel,
    )
    return ImportResult(path, summary, report, problem_report(project, path, report))


def problem_report(project: Project, path: Path, report: FormatReport) -> Path | None:
    """Write the list of skipped items in the project's logs folder; its path, None when none."""
    if not report.problem_count and not report.duplicates and not report.deletions:
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S")
    name = re.sub(r"[^A-Za-z0-9._-]", "_", path.name)
    return write_problem_report(report, project.logs_dir / f"import-{stamp}-{name}.skipped.tsv")


def export_corpus(
    project: Project,
    path: Path | str,
    fmt: str,
    *,
    accepted_only: bool = False,
    curated_only: bool = False,
    split: str | None = None,
) -> ExportResult:
    """Write the curated corpus (core.store.curation.curated_documents) in `fmt`."""
    path = Path(path)
    get_format(fmt, path, writing=True)
    report = FormatReport()
    documents = curated_documents(
        project, accepted_only=accepted_only, curated_only=curated_only, split=split
    )
    count = write_corpus(documents, path, fmt, report=report)
    return ExportResult(path, fmt, count, report)


def _ids(ids: list[str], shown: int = 5) -> str:
    return ", ".join(ids[:shown]) + (f" and {len(ids) - shown} more" if len(ids) > shown else "")
