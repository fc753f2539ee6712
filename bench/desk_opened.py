"""Did a desk session store anything on a document the curator never had on screen (issue 31)?

The desk logs each document it opens (app/gui/desk_document.py: "desk opened document ID" in the
project's logs/curalink.log). This compares those documents with the documents that got decisions and
done marks since the log's first such line: a decision made by a key on one document, or a done mark,
must be on a document that was opened. Steps that write on many documents by design (bulk accept,
apply to identical mentions, annotate every occurrence: one `batch` id; undo's reverts) are counted
apart, not as faults.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import CuralinkError

if TYPE_CHECKING:
    from core.store.project import Project

OPENED = re.compile(
    r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),\d+ \S+ app\.gui\.desk_document: desk opened document (.+)$"
)


def opened_documents(lines: Iterable[str]) -> Iterator[tuple[datetime, str]]:
    """(when, document id) for each document the desk opened, read line by line from a project log
    (its times are the desk machine's local time; returned in UTC)."""
    for line in lines:
        found = OPENED.match(line.rstrip("\n"))
        if found:
            when = datetime.strptime(found.group(1), "%Y-%m-%d %H:%M:%S").astimezone(UTC)
            yield when, found.group(2)


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _many_documents(detail_json: str) -> str | None:
    """Which multi-document step wrote a decision ("batch": bulk accept, identical, occurrences;
    "undo"), or None for a decision made on one mention."""
    detail = json.loads(detail_json or "{}")
    if "undo" in detail:
        return "undo"
    if "batch" in detail or "bulk_threshold" in detail:
        return "batch"
    return None


def check_opened(project: Project, log: Path, *, since: datetime | None = None) -> dict:
    """Documents decided or marked done since `since` (default: the log's first opened document) that
    the log never shows opened; with the counts behind that answer."""
    if not log.is_file():
        raise CuralinkError(f"{log}: no such log file (the desk writes logs/curalink.log in the project)")
    with log.open(encoding="utf-8", errors="replace") as lines:
        opened = list(opened_documents(lines))
    if since is None:
        if not opened:
            raise CuralinkError(f"{log}: no “desk opened document” line: open the project in the desk first")
        since = opened[0][0]
    since = _utc(since)
    seen = {doc_id for _when, doc_id in opened}
    decisions = [d for d in project.curation.decision_history() if _utc(d.created_at) >= since]
    where = project.documents.mention_documents(sorted({d.mention_id for d in decisions})) if decisions else {}
    by_keys: Counter[str] = Counter()
    by_steps: Counter[str] = Counter()
    for decision in decisions:
        document = where.get(decision.mention_id)
        if document is None:
            continue
        if _many_documents(decision.detail_json):
            by_steps[document] += 1
        else:
            by_keys[document] += 1
    marks = project.marks.document_marks()
    marked = {doc for doc, found in marks.items() if "done" in found and _utc(found["done"].created_at) >= since}
    unopened = sorted((set(by_keys) | marked) - seen)
    return {
        "log": str(log),
        "since": since.isoformat(),
        "opened": len(seen),
        "opens": len(opened),
        "decided_by_keys": len(by_keys),
        "key_decisions": sum(by_keys.values()),
        "marked_done": len(marked),
        "decided_by_multi_document_steps": len(by_steps),
        "multi_document_decisions": sum(by_steps.values()),
        "unopened": [
            {"document": doc, "decisions": by_keys.get(doc, 0), "done_mark": doc in marked} for doc in unopened
        ],
    }
