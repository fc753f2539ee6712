"""Abstracts by PMID: fetch PubMed citations from NCBI efetch and store them as documents.

The PMIDs come from a list typed in the desk or a file (one or more a line, separated by spaces, commas
or semicolons; `#` starts a comment); every item that is not a PMID is reported with its line, all in
one run, before anything is fetched. PMIDs the project already holds are not fetched again (unless
`on_duplicate` is "update"). The rest are fetched in batches of `batch_size` (efetch takes a few
hundred ids a request) at NCBI's rate (core.jobs.io.eutils), each answer kept in a temporary file and read
by the PubMed XML reader, like `curalink corpus import --format pubmed-xml`; then everything is stored
in one transaction: a network failure halfway stores nothing, and a cancel leaves the project as it was.
PMIDs PubMed did not return (unknown or withdrawn) are listed in the summary.
"""

from __future__ import annotations

import logging
import re
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from lxml import etree

from core.documents import Document
from core.errors import CuralinkError, InputError
from core.formats.files import file_kind
from core.formats.pubmed_xml import FORMAT, read
from core.formats.report import MAX_LISTED, FormatReport
from core.formats.xml_guard import PARSER_OPTIONS
from core.jobs.io.eutils import EutilsClient
from core.limits import limit, over_limit, read_bounded
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

if TYPE_CHECKING:
    from core.store.project import Project

log = logging.getLogger(__name__)

BATCH_SIZE = 200  # PMIDs per efetch request
SOURCE = "PubMed efetch"
_SEPARATORS = re.compile(r"[\s,;]+")
_PMID = re.compile(r"[0-9]{1,9}")  # ASCII digits only (\d takes "١٢٣"); 8 digits today


class InvalidPmids(InputError):
    """Items of a PMID list that are not PMIDs: all listed, nothing fetched."""

    def __init__(self, source: str, problems: list[InputError]):
        self.problems = problems
        if len(problems) == 1:
            only = problems[0]
            super().__init__(only.source, only.problem + "; nothing fetched", line=only.line, item=only.item)
            return
        listed = [f"  {problem}" for problem in problems[:MAX_LISTED]]
        if len(problems) > MAX_LISTED:
            listed.append(f"  ... and {len(problems) - MAX_LISTED} more")
        super().__init__(
            source, f"{len(problems)} items are not PMIDs:\n" + "\n".join(listed) + "\nnothing fetched"
        )


@dataclass
class PmidList:
    """PMIDs in the order first given (repeats dropped), and the items that are not PMIDs."""

    pmids: list[str] = field(default_factory=list)
    problems: list[InputError] = field(default_factory=list)

    def require_valid(self, source: str) -> list[str]:
        if self.problems:
            raise InvalidPmids(source, self.problems)
        if not self.pmids:
            raise InputError(source, "no PMID given")
        return self.pmids


def parse_pmids(text: str, source: str = "PMID list") -> PmidList:
    """The PMIDs of `text`; each bad item is a problem naming its line (counted from 1)."""
    found = PmidList()
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        for item in _SEPARATORS.split(line.split("#", 1)[0]):
            if not item:
                continue
            if not _PMID.fullmatch(item) or int(item) == 0:
                found.problems.append(
                    InputError(
                        source,
                        "not a PMID (a PMID is a positive number of up to 9 digits)",
                        line=number,
                        item=repr(item[:40]),
                    )
                )
                continue
            pmid = str(int(item))  # 007 and 7 are one PMID
            if pmid not in seen:
                seen.add(pmid)
                found.pmids.append(pmid)
    return found


def read_pmid_file(path: Path | str) -> PmidList:
    """The PMIDs of a text file (see `parse_pmids`); a missing or binary file is an InputError."""
    path = Path(path)
    try:
        if path.exists() and not path.is_dir() and not path.is_file():
            raise InputError(path, f"{file_kind(path)}, not a file of PMIDs: give a regular file")
        with path.open("rb") as handle:
            text = read_bounded(handle, path).decode("utf-8-sig")
    except FileNotFoundError:
        raise InputError(path, "file not found") from None
    except IsADirectoryError:
        raise InputError(path, "a folder, not a file of PMIDs") from None
    except UnicodeDecodeError as error:
        raise InputError(path, f"not a text file of PMIDs (byte {error.start} is not UTF-8)") from None
    return parse_pmids(text, str(path))


@dataclass
class FetchSummary:
    requested: int = 0  # distinct PMIDs asked for
    already_stored: list[str] = field(default_factory=list)  # not fetched: the project has them
    requests: int = 0  # efetch requests that answered
    returned: int = 0  # citations PubMed returned
    missing: list[str] = field(default_factory=list)  # asked for, not returned (unknown or withdrawn)
    added: int = 0
    updated: int = 0
    skipped: int = 0
    problems: list[str] = field(default_factory=list)  # citations the reader could not read

    def lines(self) -> list[str]:
        """What happened, for the CLI and the desk: the first line always, the others when they apply."""
        out = [
            f"{self.added} PubMed abstracts added ({self.requested} PMIDs asked for, {self.returned} "
            f"returned by PubMed in {self.requests} request{'s' if self.requests != 1 else ''})"
        ]
        if self.already_stored:
            out.append(
                f"{len(self.already_stored)} already in the project, not fetched: {_listed(self.already_stored)}"
            )
        if self.updated:
            out.append(f"{self.updated} documents already in the project updated")
        if self.skipped:
            out.append(f"{self.skipped} not stored: the project holds documents with these ids")
        if self.missing:
            out.append(
                f"{len(self.missing)} not found in PubMed (unknown or withdrawn): {_listed(self.missing)}"
            )
        if self.problems:
            out.append(f"{len(self.problems)} citations could not be read: " + "; ".join(self.problems[:5]))
        return out


def _listed(ids: list[str], shown: int = 10) -> str:
    return ", ".join(ids[:shown]) + (f" and {len(ids) - shown} more" if len(ids) > shown else "")


def fetch_pubmed(
    project: Project,
    pmids: list[str],
    client: EutilsClient,
    *,
    batch_size: int = BATCH_SIZE,
    split: str = "",
    on_duplicate: str = "skip",
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> FetchSummary:
    """Fetch these PMIDs' citations and store them in `project` as one import (see the module doc)."""
    if batch_size < 1:
        raise CuralinkError(f"batch size must be at least 1, not {batch_size}")
    summary = FetchSummary(requested=len(pmids))
    stored = set(project.documents.document_ids()) if on_duplicate == "skip" else set()
    summary.already_stored = [p for p in pmids if p in stored]
    wanted = [p for p in pmids if p not in stored]
    batches = [wanted[i : i + batch_size] for i in range(0, len(wanted), batch_size)]
    returned: set[str] = set()
    with tempfile.TemporaryDirectory(prefix="curalink-efetch-") as folder:
        files: list[Path] = []
        for number, batch in enumerate(batches, start=1):
            progress(number - 1, len(batches), f"fetching PMIDs {batch[0]}…{batch[-1]} from PubMed")
            answer = client.efetch(batch, cancel)
            summary.requests += 1
            found = _returned_pmids(answer, f"{SOURCE} batch {number}")
            returned.update(found)
            if found:
                files.append(Path(folder) / f"batch-{number}.xml")
                files[-1].write_bytes(answer)
        progress(len(batches), len(batches), "storing the citations")
        summary.returned = len(returned)
        summary.missing = [p for p in wanted if p not in returned]
        if files:
            report = FormatReport()
            result = project.documents.import_documents(
                _read_all(files, report),
                source=SOURCE,
                fmt=FORMAT,
                split=split,
                on_duplicate=on_duplicate,
                on_invalid="skip",
                report=report,
                progress=progress,
                cancel=cancel,
            )
            summary.added, summary.updated, summary.skipped = result.added, result.updated, result.skipped
            summary.problems = [str(p).replace(folder + "/", f"{SOURCE} ") for p in report.problems]
    if summary.missing:
        log.warning(
            "PubMed returned no citation for %d PMID(s): %s",
            len(summary.missing),
            ", ".join(summary.missing[:MAX_LISTED]),
        )
    return summary


def _read_all(files: Iterable[Path], report: FormatReport) -> Iterator[Document]:
    for path in files:
        yield from read(path, report)


def _returned_pmids(answer: bytes, source: str) -> list[str]:
    """The PMIDs of the citations in one efetch answer; an answer that is not PubMed XML is an error
    quoting the server (efetch says what was wrong in an `<ERROR>` element)."""
    tags = answer.count(b"<")
    if tags > limit("xml-tags"):  # parsed whole: lxml builds every element (200 citations: ~100,000 tags)
        raise CuralinkError(f"{source}: " + over_limit("xml-tags", f"an answer of {tags:,} XML tags"))
    try:
        root = etree.fromstring(answer, etree.XMLParser(**PARSER_OPTIONS))
    except etree.XMLSyntaxError as error:
        start = " ".join(answer[:200].decode("utf-8", "replace").split())
        raise CuralinkError(f"{source}: not XML ({error.msg}); the server sent: {start!r}") from None
    if root.tag != "PubmedArticleSet":
        said = " ".join(root.xpath("string(//ERROR)").split()) or root.tag
        raise CuralinkError(f"{source}: efetch answered with an error, not citations: {said[:300]}")
    return [
        (pmid.text or "").strip()
        for pmid in root.xpath("PubmedArticle/MedlineCitation/PMID | PubmedBookArticle/BookDocument/PMID")
    ]
