"""Which knowledge base a link-batch folder was linked against, as its manifest records it.

The KB fingerprint (`KnowledgeBase.fingerprint`) changes with every name, curator synonyms included,
so a project whose curators taught it one synonym would no longer match the folder it linked itself a
minute before. What must agree for a folder's candidates to be *this project's concepts* is the base
KB: the concepts and the names imported with them. That is `kb_fingerprint` here. The curator
synonyms (names stored with source "curator", learnt from decisions) only add retrievable names; their
state is recorded apart (`curator_synonyms`: how many, and a fingerprint of them), so resume and import
are allowed when only they differ, with a note of what differs.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from core.kb.concept import Concept
from core.kb.knowledge_base import KnowledgeBase
from core.learn.synonyms import CURATOR_SOURCE

if TYPE_CHECKING:
    from core.store.project import Project

CURATOR_KEY = "curator_synonyms"


def kb_identity(project: Project, kb: KnowledgeBase) -> dict[str, Any]:
    """The manifest's KB fields for `kb` (the project's KB as linking uses it, curator synonyms in)."""
    curator = project.kb.names_from_source(CURATOR_SOURCE)
    base = kb
    if curator:  # the KB again without them (no second copy when curators taught nothing)
        base = KnowledgeBase(
            Concept(
                **{
                    **c.__dict__,
                    "synonyms": tuple(n for n in c.synonyms if n not in curator.get(c.concept_id, ())),
                }
            )
            for c in kb
        )
    pairs = sorted((concept_id, name) for concept_id, names in curator.items() for name in names)
    digest = hashlib.sha256()
    for concept_id, name in pairs:
        digest.update(f"{concept_id}\x00{name}\x01".encode())
    return {
        "kb_fingerprint": base.fingerprint(),
        "kb_concepts": len(base),
        "kb_names": len(base.names),
        CURATOR_KEY: {"names": len(pairs), "fingerprint": digest.hexdigest()[:16] if pairs else ""},
    }


def same_base_kb(recorded: dict[str, Any], current: dict[str, Any], full_fingerprint: str) -> bool:
    """Whether a folder's recorded KB is this project's base KB. A folder written before the curator
    synonyms were recorded apart holds the full fingerprint: it matches when nothing changed since."""
    return recorded.get("kb_fingerprint") in (current["kb_fingerprint"], full_fingerprint)


def curator_note(then: dict[str, Any] | None, now: dict[str, Any], shards: int = 1) -> str:
    """'' when `shards` shard(s) were linked with the curator synonyms the project has now (or
    recorded none: written before they were recorded apart); else what differs, in words."""
    if then is None or then.get("fingerprint") == now["fingerprint"]:
        return ""
    counts = f"{then.get('names', 0)} then, {now['names']} now" + (
        " (other ones)" if then.get("names") == now["names"] else ""
    )
    return (
        f"{shards} shard(s) linked with other curator synonyms than the project has ({counts}): the same "
        "concepts, so its candidates are this project's, but names curators taught since were not "
        "retrievable then; link again (a new --out folder, or --overwrite) to use them"
    )
