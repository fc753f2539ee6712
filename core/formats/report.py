"""What a read or a write did not keep, so a command can say so in its summary.

Real files carry a few bad items (an annotation whose text is not at its offsets, a line with a field
missing). A reader given a `FormatReport` records each problem and skips only the item it concerns
(the annotation, the line, or the document when the document itself cannot be read), so one run lists
every problem of a file. Without a report a reader raises at the first problem, as it always did.
Writers record, by reason, what the target format cannot hold (`lost`), so an export can warn.
"""

from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from core.errors import InputError
from core.formats.files import atomic_text_writer

# Problems kept item by item; beyond this many only a count is kept (a broken 30 GB file must not
# fill the memory with its error list).
MAX_KEPT = 10_000
# Problems an error message lists before "... and N more".
MAX_LISTED = 20


@dataclass(frozen=True)
class Problem:
    """One skipped item: where it is and why it was skipped."""

    source: str
    line: int | None
    item: str
    reason: str

    @classmethod
    def from_error(cls, error: InputError) -> Problem:
        return cls(error.source or "<input>", error.line, error.item or "", error.problem)

    def __str__(self) -> str:
        where = self.source
        if self.line is not None:
            where += f", line {self.line}"
        if self.item:
            where += f", {self.item}"
        return f"{where}: {self.reason}"


@dataclass(frozen=True)
class Duplicate:
    """A document repeated inside one file (NCBI-disease train repeats PMID 8528200 whole)."""

    doc_id: str
    source: str
    line: int | None = None


@dataclass(frozen=True)
class Deletion:
    """A document the file itself says is withdrawn (PubMed's `<DeleteCitation>`): never imported from
    this file; `in_file` when the file also held it (then left out of the import)."""

    doc_id: str
    source: str
    line: int | None = None
    in_file: bool = False


class FormatReport:
    """Collects problems (items skipped), in-file duplicates, deletions the file asks for and losses
    (what a format cannot hold)."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.problem_count = 0
        self.duplicates: list[Duplicate] = []
        self.deletions: list[Deletion] = []
        self.deletion_count = 0
        self.losses: Counter[str] = Counter()

    def invalid(self, error: InputError) -> None:
        """Record a problem; the caller skips the item."""
        self.problem_count += 1
        if len(self.problems) < MAX_KEPT:
            self.problems.append(Problem.from_error(error))

    def duplicate(self, doc_id: str, source: str | Path, line: int | None = None) -> None:
        self.duplicates.append(Duplicate(doc_id, str(source), line))

    def deletion(self, deletion: Deletion) -> None:
        """Record a deletion the file asks for (kept item by item up to MAX_KEPT, then counted)."""
        self.deletion_count += 1
        if len(self.deletions) < MAX_KEPT:
            self.deletions.append(deletion)

    def lost(self, reason: str, count: int = 1) -> None:
        """Count `count` things not kept for `reason` (a short sentence naming what and why)."""
        if count:
            self.losses[reason] += count

    def loss_lines(self) -> list[str]:
        """One line per reason, most frequent first: '12 × mention infons not written (...)'."""
        return [f"{count} × {reason}" for reason, count in self.losses.most_common()]


def skip_or_raise(report: FormatReport | None, error: InputError) -> None:
    """Strict without a report (raise), lenient with one (record; the caller skips the item)."""
    if report is None:
        raise error
    report.invalid(error)


def lost(report: FormatReport | None, reason: str, count: int = 1) -> None:
    if report is not None:
        report.lost(reason, count)


class InvalidItemsError(InputError):
    """A file with problems imported under `--on-invalid error`: nothing was stored; all are listed (a
    single problem is one line, like any other InputError)."""

    def __init__(self, source: str | Path, report: FormatReport):
        self.report = report
        if report.problem_count == 1 and report.problems:  # one problem: one line, naming where it is
            only = report.problems[0]
            super().__init__(
                only.source,
                f"{only.reason}; nothing imported: fix it, or import the rest with --on-invalid skip",
                line=only.line,
                item=only.item or None,
            )
            return
        listed = [f"  {problem}" for problem in report.problems[:MAX_LISTED]]
        more = report.problem_count - len(listed)
        if more:
            listed.append(f"  ... and {more} more")
        noun = "problem" if report.problem_count == 1 else "problems"
        super().__init__(
            source,
            f"{report.problem_count} {noun}:\n"
            + "\n".join(listed)
            + f"\n{report.problem_count} {noun}, nothing imported: fix them, or import the rest with "
            "--on-invalid skip (a report then lists each skipped item)",
        )


def write_problem_report(report: FormatReport, path: Path) -> Path:
    """A tab-separated list of every skipped item (file, line, item, reason); returns `path`."""
    with atomic_text_writer(path) as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(["file", "line", "item", "reason"])
        for problem in report.problems:
            writer.writerow(
                [problem.source, "" if problem.line is None else problem.line, problem.item, problem.reason]
            )
        for duplicate in report.duplicates:
            writer.writerow(
                [
                    duplicate.source,
                    "" if duplicate.line is None else duplicate.line,
                    f"document {duplicate.doc_id}",
                    "in-file duplicate: repeats an earlier block of the same document exactly; skipped",
                ]
            )
        for deletion in report.deletions:
            writer.writerow(
                [
                    deletion.source,
                    "" if deletion.line is None else deletion.line,
                    f"document {deletion.doc_id}",
                    "deleted by the file (DeleteCitation): "
                    + ("held in the file too, not imported" if deletion.in_file else "not in the file")
                    + "; a document with this id already in the project is kept, not deleted",
                ]
            )
        unlisted = report.problem_count - len(report.problems)
        if unlisted:
            writer.writerow(["", "", "", f"... and {unlisted} more problems, not listed"])
    return path
