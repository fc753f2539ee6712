"""`curalink -p DIR import-linked OUT_DIR`: a link-batch folder into a project as suggestions, so a
curator opens a pre-linked queue.

Refused when the folder was linked against another knowledge base (its KB fingerprint differs from
the project's): candidate ids and names would not be the project's concepts. Each finished shard, in
input order, is one step: its documents missing from the project are imported (the store's own
`import_documents`, mentions included, origin as written: gold, or detected), then each linked mention
is matched to the stored mention at the same span and type and its ranked candidates are stored with
`store_suggestions`, carrying the retriever and ranker versions the batch recorded. Mentions a curator
already decided keep their suggestions (the decision was made against them); documents already in
the project keep their text and mentions (a linked mention with no stored twin is counted, not added).
Importing the same folder again changes nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from core.batch.linked import candidates_of, without_candidates
from core.batch.manifest import MANIFEST, Manifest
from core.documents import Document
from core.errors import CuralinkError, InputError
from core.formats import read_corpus
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress
from core.store.curation_log import mention_key

log = logging.getLogger(__name__)

_LOOKUP = 500  # documents looked up per query (SQLite's bound-parameter limit)


@dataclass
class ImportLinkedSummary:
    shards: int = 0
    documents_added: int = 0
    documents_present: int = 0
    mentions_suggested: int = 0
    suggestions: int = 0
    reviewed_kept: int = 0
    unmatched: int = 0


def import_linked(
    project,
    out_dir: str | Path,
    *,
    split: str = "",
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> ImportLinkedSummary:
    out_dir = Path(out_dir)
    manifest = Manifest.load(out_dir)
    if manifest is None:
        raise InputError(out_dir, f"not a link-batch output folder (no {MANIFEST})")
    theirs = manifest.identity.get("kb_fingerprint")
    ours = project.knowledge_base().fingerprint()
    if theirs != ours:
        raise CuralinkError(
            f"{out_dir}: linked against another knowledge base (KB fingerprint {theirs}; this project's is "
            f"{ours}): its candidates are not this project's concepts; link the shards again with this "
            "project (curalink link-batch -p ...)"
        )
    done = manifest.done()
    summary = ImportLinkedSummary()
    for number, (name, entry) in enumerate(done.items(), start=1):
        cancel.raise_if_cancelled()
        path = out_dir / name
        documents = list(read_corpus(path, entry.get("out_format")))
        imported = project.import_documents(
            (without_candidates(d) for d in documents),
            source=str(path),
            fmt=entry.get("out_format") or "",
            split=split,
            on_duplicate="skip",
            cancel=cancel,
        )
        summary.documents_added += imported.added
        summary.documents_present += imported.skipped
        _store(project, documents, str(path), entry, summary)
        summary.shards += 1
        progress(number, len(done), f"{name}: suggestions stored")
    return summary


def _store(
    project, documents: list[Document], source: str, entry: dict, summary: ImportLinkedSummary
) -> None:
    """The shard's candidates onto the stored mentions at the same span and type."""
    linked = {d.doc_id: d for d in documents}
    by_mention, keys = {}, {}
    ids = list(linked)
    for first in range(0, len(ids), _LOOKUP):
        for stored, mention_ids in project.documents_with_mention_ids(ids=ids[first : first + _LOOKUP]):
            at = dict(zip((mention_key(m) for m in stored.mentions), mention_ids, strict=True))
            for mention in linked[stored.doc_id].mentions:
                ranked = candidates_of(mention, source=source, doc_id=stored.doc_id)
                if ranked is None:
                    continue
                mention_id = at.get(mention_key(mention))
                if mention_id is None:
                    summary.unmatched += 1
                    continue
                by_mention[mention_id] = ranked
                keys[mention_id] = mention_key(mention)
    reviewed = set(project.current_decisions(mention_ids=list(by_mention)))
    for mention_id in reviewed:
        by_mention.pop(mention_id, None)
    summary.reviewed_kept += len(reviewed)
    summary.mentions_suggested += len(by_mention)
    summary.suggestions += project.store_suggestions(
        by_mention,
        computed_for=keys,
        retriever_version=entry.get("retriever_version", ""),
        reranker_version=entry.get("ranked_version", ""),
    )
