"""Which documents detection may write into, and why the others are left alone.

Detection adds mentions; on a gold-annotated document every added mention is a false one (on
NCBI-disease train + test, an unrestricted run added 669 of them, turning a finished 5/5 document into
5/11). So the rules are:

- Without a selection, only documents that have never had a mention are tagged (raw text).
- A selection (document ids and/or a split) names the documents; it still skips gold documents.
- A gold document is one with a mention (even a deleted one) that neither detection nor a curator
  drew, i.e. one read from an annotated file, or one from a file that annotated other documents (an
  annotated corpus that gives a document no mention says it has none). Only `include_gold` tags them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import CuralinkError, InputError
from core.store.detected_mentions import PROJECT_ORIGINS

if TYPE_CHECKING:
    from core.store.project import Project

__all__ = ["PROJECT_ORIGINS", "DetectTargets", "plan_targets", "read_id_file", "require_known_ids"]

SKIP_GOLD = "gold"
SKIP_HAS_MENTIONS = "has mentions"
SKIP_OTHER_SPLIT = "other split"


@dataclass
class DetectTargets:
    """Document ids to tag, and the skipped ones by reason (SKIP_*)."""

    tag: list[str] = field(default_factory=list)
    skipped: dict[str, list[str]] = field(default_factory=dict)

    def skip(self, reason: str, doc_id: str) -> None:
        self.skipped.setdefault(reason, []).append(doc_id)


def plan_targets(
    project: Project,
    *,
    split: str | None = None,
    ids: Sequence[str] | None = None,
    include_gold: bool = False,
) -> DetectTargets:
    """Choose the documents to tag (see the module docstring); unknown ids are an error."""
    facts = project.documents.detection_facts()
    if ids is not None:
        require_known_ids(project, {doc_id: "" for doc_id in ids}, known={row[0] for row in facts.documents})
    wanted = None if ids is None else set(ids)
    targets = DetectTargets()
    for doc_id, doc_split, source_file in facts.documents:
        if wanted is not None and doc_id not in wanted:
            continue
        if split and doc_split != split:
            if wanted is not None:
                targets.skip(SKIP_OTHER_SPLIT, doc_id)
            continue
        if wanted is None and not split and doc_id in facts.with_mentions:
            targets.skip(SKIP_HAS_MENTIONS, doc_id)
        elif not include_gold and (doc_id in facts.gold or source_file in facts.annotated_files):
            targets.skip(SKIP_GOLD, doc_id)
        else:
            targets.tag.append(doc_id)
    return targets


def require_known_ids(project: Project, requested: Mapping[str, str], *, known: set[str] | None = None) -> None:
    """Refuse, naming each one and where it was given (`requested`: id -> "FILE line N" or ""), ids
    that are not documents of the project; nothing is changed."""
    if known is None:
        known = set(project.documents.document_ids())
    unknown = [(doc_id, where) for doc_id, where in requested.items() if doc_id not in known]
    if not unknown:
        return
    shown = "; ".join(f"{where + ': ' if where else ''}{doc_id!r}" for doc_id, where in unknown[:20])
    more = f" and {len(unknown) - 20} more" if len(unknown) > 20 else ""
    raise CuralinkError(
        f"{len(unknown)} document id(s) not in {project.path}: {shown}{more}; nothing was changed"
    )


def read_id_file(path: Path | str) -> dict[str, str]:
    """Document ids, one a line (blank lines and `#` comments skipped) -> "FILE line N" for messages."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror}") from None
    found: dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        doc_id = line.strip()
        if doc_id and not doc_id.startswith("#"):
            found.setdefault(doc_id, f"{path} line {number}")
    if not found:
        raise InputError(path, "no document ids in the file")
    return found
