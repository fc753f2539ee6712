"""Apply one mention's decision to every identical unreviewed mention (MedCATtrainer's and Prodigy's
"annotate all like this"), in the document or in the whole queue (`project.identical`).

Identical means the same text under the project's one name normalisation (core.text.normalize: case,
Unicode forms, punctuation and hyphens), optionally of the same type. Only mentions without a decision
are touched, checked again under the write lock (`decide(skip_decided=True)`), so a curator's decision is
never overwritten; all of them are written in one transaction and undone by one transaction of reverts.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import or_, select

from core.errors import CuralinkError
from core.store.access import StoreAccess
from core.store.curation_log import CurationLog, NewDecision
from core.store.op_changes import OpChanges
from core.store.schema import DocumentRow, MentionRow, MentionStateRow
from core.text.normalize import normalize_name

COPIED_FROM = "identical_to"  # decision detail: the mention whose decision was copied
_CHUNK = 5000  # ids per IN (...), below SQLite's variable limit
_NARROWED = 20  # up to this many strings are narrowed in SQL first; more are matched in one full pass
_ASCII_WORD = re.compile(r"[a-z0-9]+")  # a word LIKE can look for (no wildcard, no case folding beyond ASCII)
_NOT_ASCII = "*[^ -~]*"  # GLOB: some character outside printable ASCII


@dataclass(frozen=True)
class IdenticalMentions:
    """The undecided mentions identical to `source` (never `source` itself) and their documents."""

    source: int
    normalized: str
    mention_ids: tuple[int, ...]
    documents: tuple[str, ...]

    def describe(self) -> str:
        """“N mentions in M documents”, the count the curator confirms."""
        n, m = len(self.mention_ids), len(self.documents)
        return f"{n} mention{'s' if n != 1 else ''} in {m} document{'s' if m != 1 else ''}"


def _undecided():
    """Mentions without a decision, not deleted, in document order, with their document's id."""
    return (
        select(MentionRow.id, MentionRow.text, MentionRow.type, DocumentRow.external_id)
        .join(DocumentRow, DocumentRow.id == MentionRow.document_id)
        .outerjoin(MentionStateRow, MentionStateRow.mention_id == MentionRow.id)
        .where(MentionRow.removed.is_(False), MentionStateRow.mention_id.is_(None))
        .order_by(MentionRow.document_id, MentionRow.start, MentionRow.id)
    )


class IdenticalMentionsStore:
    """Mentions identical to one, and its decision copied to them (`project.identical`)."""

    def __init__(self, store: StoreAccess, curation: CurationLog):
        self._store = store
        self._curation = curation  # the copies and their reverts are decisions of the log

    def find(self, mention_id: int, *, document: str | None = None, same_type: bool = False) -> IdenticalMentions:
        """The undecided, not deleted mentions whose normalised text equals that of `mention_id`, in the
        document `document` (external id) or, without it, in the whole project."""
        with self._store.session() as session:
            source = session.get(MentionRow, mention_id)
            if source is None or source.removed:
                raise CuralinkError(f"no mention with id {mention_id}")
            normalized = normalize_name(source.text)
            query = _undecided().where(MentionRow.id != mention_id)
            if document is not None:
                query = query.where(DocumentRow.external_id == document)
            if same_type:
                query = query.where(MentionRow.type == source.type)
            rows = session.execute(query).all()
        if not normalized:
            return IdenticalMentions(mention_id, normalized, (), ())
        hits = [(row.id, row.external_id) for row in rows if normalize_name(row.text) == normalized]
        return IdenticalMentions(
            mention_id,
            normalized,
            tuple(m for m, _ in hits),
            tuple(dict.fromkeys(doc for _, doc in hits)),
        )

    def undecided(self, mention_ids: Sequence[int]) -> list[int]:
        """Every undecided mention, in the whole project, whose normalised text is that of one of these
        mentions: what a decision on them may change the suggestions of.

        A few strings are first narrowed in SQL: a mention can only normalise to a string if it contains
        that string's longest word (case-insensitively, a final "s" dropped for possessives), or has a
        character outside printable ASCII (where Unicode folding could make the word); only those rows are
        normalised in Python, so a decision on a 200,000-mention project reads a few hundred rows."""
        wanted = sorted(set(mention_ids))
        if not wanted:
            return []
        with self._store.session() as session:
            texts: list[str] = []
            for start in range(0, len(wanted), _CHUNK):
                chunk = wanted[start : start + _CHUNK]
                texts += session.execute(select(MentionRow.text).where(MentionRow.id.in_(chunk))).scalars()
            normalized = {normalize_name(text) for text in texts} - {""}
            if not normalized:
                return []
            query = _undecided()
            if len(normalized) <= _NARROWED:
                words = [max(n.split(), key=len) for n in normalized]
                words = [w[:-1] if w.endswith("s") and len(w) > 1 else w for w in words]
                if all(_ASCII_WORD.fullmatch(w) for w in words):
                    query = query.where(
                        or_(
                            MentionRow.text.op("GLOB")(_NOT_ASCII),
                            *(MentionRow.text.ilike(f"%{w}%") for w in words),
                        )
                    )
            rows = session.execute(query).all()
        skip = set(wanted)
        return [row.id for row in rows if row.id not in skip and normalize_name(row.text) in normalized]

    def apply(self, source: int, targets: Sequence[int], *, curator: str = "") -> OpChanges:
        """Copy the decision in force on `source` to each target still undecided, in one transaction.

        The copies say where they came from (detail `identical_to`, and one `batch` id shared by the lot)."""
        decision = self._curation.current_decisions(mention_ids=[source]).get(source)
        if decision is None:
            raise CuralinkError(f"mention {source} has no decision to apply to identical mentions")
        batch = uuid.uuid4().hex[:12]
        copies = [
            NewDecision(
                target,
                decision.action,
                concept_id=decision.concept_id,
                curator=curator,
                detail={COPIED_FROM: source, "batch": batch},
            )
            for target in targets
            if target != source
        ]
        return self._curation.decide(copies, skip_decided=True)


    def revert_all(self, mention_ids: Sequence[int], *, curator: str = "", undoing: str = "") -> OpChanges:
        """Undo a propagation: one revert per mention it decided, all in one transaction."""
        reverts = [
            NewDecision(m, "revert", curator=curator, detail={"undo": undoing or "identical"})
            for m in sorted(mention_ids)
        ]
        return self._curation.decide(reverts)
