"""Annotate every occurrence of a string (PubTator's, TeamTat's and INCEpTION's "annotate all"): a
mention's text or a selection, found word-bounded in the document or the whole project, shown as a count
first (`preview_occurrences`), then added as mentions in one transaction and one undo step
(`annotate_occurrences`). Ctrl+D (core.store.identical_mentions) only reaches mentions that already exist;
this draws the missing ones.

An occurrence is a case-insensitive match of the string's words, any run of white space between them,
that neither starts nor ends inside a word (core.text.words: "HD" is not found in "HDL") and whose text
normalises as the string does (core.text.normalize). A span overlapping a mention already there (deleted
ones aside) is skipped and counted. Started from a mention, the new mentions take its type and, when it
has one, its decision (detail `identical_to`, as a copy to identical mentions says), for that mention's
own text only (another text is refused: its decision says nothing about it), and without teaching when
the source was decided without teaching. Undone, the step's decisions are reverted and its mentions
removed; a loaded linker then withdraws what they taught (core.learn.live reads deleted mentions too).
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.errors import CuralinkError
from core.jobs.curation import undo as history
from core.jobs.curation.operations import _finish
from core.jobs.curation.undo import OCCURRENCES, Step
from core.learn.teaching import TEACH, teaches
from core.store.curation_log import NewDecision
from core.store.identical_mentions import COPIED_FROM
from core.store.op_changes import OpChanges
from core.text.normalize import normalize_name
from core.text.words import word_bounded

if TYPE_CHECKING:
    from core.store.project import Project

MAX_OCCURRENCES = 10000  # one step; more is refused (a string that common is not an entity)


@dataclass(frozen=True)
class Occurrences:
    """Where a string occurs and no mention is yet: (document, start, end) in document order; `skipped`:
    occurrences left alone because a mention overlaps them."""

    text: str
    spans: tuple[tuple[str, int, int], ...]
    skipped: int = 0

    @property
    def documents(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(document for document, _, _ in self.spans))

    def describe(self) -> str:
        """“N occurrences in M documents”, the count the curator confirms."""
        n, m = len(self.spans), len(self.documents)
        said = f"{n} occurrence{'s' if n != 1 else ''} in {m} document{'s' if m != 1 else ''}"
        return said + (f" ({self.skipped} already a mention)" if self.skipped else "")


def _pattern(text: str) -> re.Pattern[str]:
    words = text.split()
    if not words or not normalize_name(text):
        raise CuralinkError(f"{text!r} has no words to look for")
    return re.compile(r"\s+".join(re.escape(w) for w in words), re.IGNORECASE)


def preview_occurrences(project: Project, text: str, *, document: str | None = None) -> Occurrences:
    """The occurrences of `text` with no mention on them, in `document` (external id) or, without it, in
    the whole project. Nothing is written."""
    pattern = _pattern(text)
    wanted = normalize_name(text)
    longest = max(text.split(), key=len)
    spans: list[tuple[str, int, int]] = []
    skipped = 0
    containing = longest if document is None and longest.isascii() else None  # narrowed in SQL
    rows = project.documents.occurrence_documents(document, containing=containing)
    for external_id, body, mentions in rows:
        for hit in pattern.finditer(body):
            start, end = hit.span()
            if not word_bounded(body, start, end) or normalize_name(body[start:end]) != wanted:
                continue
            if any(s < end and start < e for s, e in mentions):
                skipped += 1
                continue
            spans.append((external_id, start, end))
    return Occurrences(text, tuple(spans), skipped)


def annotate_occurrences(
    project: Project,
    text: str,
    *,
    document: str | None = None,
    type: str = "",
    source: int | None = None,
    curator: str = "",
) -> OpChanges:
    """Add a mention at every occurrence `preview_occurrences` finds (read again under the write lock, so
    what was counted and what is written agree with the store as it is then), typed `type`; with
    `source` (a mention id) typed as it is and given its decision when it has one. One transaction, one
    undo step; `OpChanges.edited` holds the new mentions (to suggest for)."""
    decision = None
    if source is not None:
        source_text, _ = mention_text(project, source)
        if normalize_name(source_text) != normalize_name(text):  # its decision is about its own text
            raise CuralinkError(
                f"mention {source} says “{source_text}”, not “{text}”: its decision is not copied to another text"
            )
        facts = project.curation.current_decisions(mention_ids=[source])
        decision = facts.get(source)
        if decision is not None and decision.action == "reject":  # "not these suggestions": nothing to copy
            decision = None
    with project.transaction():
        history.ensure(project, curator)
        found = preview_occurrences(project, text, document=document)
        if not found.spans:
            raise CuralinkError(f"no occurrence of “{text}” without a mention {_where(document)}")
        if len(found.spans) > MAX_OCCURRENCES:
            raise CuralinkError(
                f"“{text}” occurs {len(found.spans)} times {_where(document)}: more than {MAX_OCCURRENCES} "
                "in one step; annotate it document by document"
            )
        added = [project.documents.add_mention(d, s, e, type=type, curator=curator) for d, s, e in found.spans]
        decided = OpChanges()
        if decision is not None:
            batch = uuid.uuid4().hex[:12]
            copies = [
                NewDecision(
                    m,
                    decision.action,
                    concept_id=decision.concept_id,
                    curator=curator,
                    detail={COPIED_FROM: source, "batch": batch, **_kept_from(decision)},
                )
                for m in added
            ]
            decided = project.curation.decide(copies)
        link = (
            f" as {decision.action}" + (f" → {decision.concept_id}" if decision.concept_id else "")
            if decision
            else ""
        )
        label = f"annotate “{text}”{link}: {found.describe()}"
        first = found.spans[0][0]
        step = Step(
            OCCURRENCES, label, first, added[0], {"mentions": added, "decisions": list(decided.decision_ids)}
        )
        now, _ = history.push(project, curator, step)
    documents = frozenset(found.documents)
    changes = decided | OpChanges(mentions=frozenset(added), documents=documents, edited=frozenset(added))
    return _finish(project, changes, label=label, focus=(first, added[0]), history_now=now)


def _kept_from(decision) -> dict:
    """What a copy keeps of the source decision's detail: a decision taken without teaching (core.learn.
    teaching) gives copies that do not teach either."""
    return {} if teaches(decision.detail_json) else {TEACH: False}


def _where(document: str | None) -> str:
    return f"in {document}" if document is not None else "in the project"


def mention_text(project: Project, mention_id: int) -> tuple[str, str]:
    """(text, type) of a mention, to annotate its other occurrences."""
    return project.documents.live_mention(mention_id)
