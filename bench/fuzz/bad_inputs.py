"""The bad-input figure of issue 11: every crafted bad file (bench.fuzz.bad_input_cases) is imported
into a project that already holds documents and concepts, the way `curalink corpus import` and
`curalink kb import` do it (strict: `--on-invalid error`), and each answer is classified.

A case passes when the import raised a CuralinkError (no traceback), its message names the file and,
where the case has one, the line or element (`WHERE`), and the project's database is byte-for-byte the
same content as before (an SQL dump compared). `evaluate(folder)` returns the figures and one row per
case, for the fault harness and the README table.
"""

from __future__ import annotations

import hashlib
import sqlite3
import traceback
from dataclasses import asdict, dataclass
from pathlib import Path

from bench.fuzz.bad_input_cases import CASES, WHERE
from bench.fuzz.targets import CORPUS_FORMATS, SEEDS
from core.errors import CuralinkError
from core.progress import ProgressFn, no_progress

__all__ = ["CASES", "WHERE", "CaseResult", "evaluate", "run_case"]


@dataclass(frozen=True)
class CaseResult:
    name: str
    fmt: str
    outcome: (
        str  # "error" (a CuralinkError), "imported" (accepted: a defect) or "traceback" (another exception)
    )
    names_file: bool
    names_where: bool  # the expected line or element is named (True when the case has none)
    one_line: bool  # the whole message is one line (a list of every problem of the file is several)
    store_unchanged: bool
    message: str

    @property
    def clear(self) -> bool:
        return self.outcome == "error" and self.names_file and self.names_where and self.store_unchanged


def store_digest(db_path: Path) -> str:
    """A digest of every row of every table (the SQL dump), independent of page layout: equal digests
    mean the store did not change."""
    connection = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=30)
    try:
        digest = hashlib.sha256()
        for line in connection.iterdump():
            digest.update(line.encode("utf-8", "surrogatepass"))
        return digest.hexdigest()
    finally:
        connection.close()


def baseline_project(folder: Path):
    """A project holding two documents and two concepts, so "unchanged" means something."""
    from core.formats import read_corpus
    from core.kb import load_kb
    from core.store import Project

    folder.mkdir(parents=True, exist_ok=True)
    corpus = folder / "baseline.pubtator"
    corpus.write_bytes(SEEDS["pubtator"][1])
    vocabulary = folder / "baseline.tsv"
    vocabulary.write_bytes(SEEDS["tsv"][1])
    project = Project.create(folder / "project")
    project.documents.import_documents(read_corpus(corpus, "pubtator"), source=str(corpus), fmt="pubtator")
    project.kb.import_concepts(load_kb(vocabulary, "tsv"), source=str(vocabulary), fmt="tsv")
    return project


def import_file(project, path: Path, fmt: str) -> None:
    """Import as the CLI does: a corpus with a FormatReport and `--on-invalid error`, a KB checked by
    sniffing first."""
    from core.formats import FormatReport, read_corpus
    from core.kb import load_kb

    if fmt in CORPUS_FORMATS:
        report = FormatReport()
        project.documents.import_documents(
            read_corpus(path, fmt, report=report),
            source=str(path),
            fmt=fmt,
            report=report,
            on_invalid="error",
        )
    else:
        project.kb.import_concepts(load_kb(path, fmt), source=str(path), fmt=fmt)


def run_case(name: str, folder: Path, project) -> CaseResult:
    """Build case `name` in `folder` (empty) and import it into `project`."""
    path, fmt = CASES[name](folder)
    db_path = project.path / "curalink.db"
    before = store_digest(db_path)
    try:
        import_file(project, path, fmt)
    except CuralinkError as error:
        outcome, message = "error", str(error)
    except Exception as error:  # noqa: BLE001 - what the figure counts
        outcome, message = "traceback", "".join(traceback.format_exception_only(error)).strip()
    else:
        outcome, message = "imported", ""
    where = WHERE[name]
    return CaseResult(
        name=name,
        fmt=fmt,
        outcome=outcome,
        names_file=path.name in message,
        names_where=where is None or where in message,
        one_line="\n" not in message,
        store_unchanged=store_digest(db_path) == before,
        message=message[:500],
    )


def evaluate(folder: Path, names: list[str] | None = None, progress: ProgressFn = no_progress) -> dict:
    """Run every case (or `names`) against one baseline project in `folder`; the figures and rows."""
    folder = Path(folder)
    chosen = names or list(CASES)
    results: list[CaseResult] = []
    project = baseline_project(folder / "baseline")
    try:
        for number, name in enumerate(chosen):
            progress(number, len(chosen), name)
            case_folder = folder / "cases" / f"{number:03d}"
            case_folder.mkdir(parents=True)
            results.append(run_case(name, case_folder, project))
    finally:
        project.close()
    progress(len(chosen), len(chosen), "done")
    return {
        "tried": len(results),
        "clear_errors": sum(r.clear for r in results),
        "one_line_errors": sum(r.clear and r.one_line for r in results),
        "store_unchanged": sum(r.store_unchanged for r in results),
        "imported": sum(r.outcome == "imported" for r in results),
        "tracebacks": sum(r.outcome == "traceback" for r in results),
        "cases": [asdict(r) | {"clear": r.clear} for r in results],
    }
