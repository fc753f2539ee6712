"""`curalink -p DIR import-linked OUT_DIR`: a link-batch folder into a project as suggestions, so a
curator opens a pre-linked queue.

Refused when the folder was linked against another knowledge base (its base KB fingerprint differs
from the project's: core.batch.kb_identity): candidate ids and names would not be the project's
concepts. Curator synonyms learnt since it was linked do not refuse it; the summary notes them. Each
finished shard is checked whole first (core.batch.shard_check: the recorded file, valid records, this
KB's ids); a shard with any problem is not imported at all and its problems are listed, the others go
on. Each good shard, in input order, is one step: its documents missing from the project are imported
(the store's own `import_documents`, mentions included, origin as written: gold, or detected), then
each linked mention is matched to the stored mention at the same span and type and its ranked
candidates are stored with `store_suggestions`, carrying the retriever and ranker versions the batch
recorded. Mentions a curator already decided keep their suggestions (the decision was made against
them); documents already in the project keep their text and mentions (a linked mention with no stored
twin is counted, not added). Importing the same folder again changes nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from core.batch.deletions import settle_rewrites
from core.batch.kb_identity import CURATOR_KEY, curator_note, kb_identity, same_base_kb
from core.batch.linked import candidates_of, without_candidates
from core.batch.manifest import MANIFEST, Manifest
from core.batch.shard_check import ShardRejected, checked_shard
from core.documents import Document
from core.errors import CuralinkError, InputError
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress
from core.store.curation_log import mention_key

if TYPE_CHECKING:
    from core.store.project import Project

log = logging.getLogger(__name__)

_LOGGED = 20  # rejected shards logged one by one
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
    rejected: dict[str, list[str]] = field(default_factory=dict)
    """Shard name -> its problems (not imported)."""
    problem_count: int = 0
    notes: list[str] = field(default_factory=list)


def import_linked(
    project: Project,
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
    if manifest.deletions_unfinished():
        raise CuralinkError(
            f"{out_dir}: its PubMed DeleteCitation pass did not finish (the link-batch run was stopped or "
            "cancelled), so earlier shards may still hold citations a later input deletes; nothing was "
            f"imported. Finish it first: curalink -p PROJECT link-batch --resume --out {out_dir}"
        )
    settle_rewrites(manifest, save=False)  # a kill mid-DeleteCitation: the file's hash says which
    kb = project.kb.knowledge_base()
    ours = kb_identity(project, kb)
    if not same_base_kb(manifest.identity, ours, kb.fingerprint()):
        raise CuralinkError(
            f"{out_dir}: linked against another knowledge base (KB fingerprint "
            f"{manifest.identity.get('kb_fingerprint')}; this project's is {ours['kb_fingerprint']}, curator "
            "synonyms aside): its candidates are not this project's concepts; link the shards again with "
            "this project (curalink link-batch -p ...)"
        )
    limit = manifest.identity.get("candidates")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise InputError(out_dir / MANIFEST, f"identity.candidates must be a positive integer, got {limit!r}")
    done = manifest.done()
    summary = ImportLinkedSummary()
    differ = [
        e
        for e in done.values()
        if curator_note(e.get(CURATOR_KEY, manifest.identity.get(CURATOR_KEY)), ours[CURATOR_KEY])
    ]
    if differ:
        first = differ[0].get(CURATOR_KEY, manifest.identity.get(CURATOR_KEY))
        summary.notes.append(f"{out_dir}: {curator_note(first, ours[CURATOR_KEY], len(differ))}")
    for number, (name, entry) in enumerate(done.items(), start=1):
        cancel.raise_if_cancelled()
        path = out_dir / name
        try:
            documents = checked_shard(manifest, name, entry, kb, limit)
        except ShardRejected as rejected:
            summary.rejected[name] = rejected.problems
            summary.problem_count += rejected.count
            if len(summary.rejected) <= _LOGGED:  # 100,000 missing shards are one count, not 100,000 lines
                log.warning("%s: not imported (%d problem(s)): %s", path, rejected.count, rejected.problems[0])
            progress(number, len(done), f"{name}: not imported")
            continue
        if not documents:  # every citation deleted by a later update file
            summary.shards += 1
            progress(number, len(done), f"{name}: empty")
            continue
        imported = project.documents.import_documents(
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
    project: Project, documents: list[Document], source: str, entry: dict, summary: ImportLinkedSummary
) -> None:
    """The shard's candidates onto the stored mentions at the same span and type."""
    linked = {d.doc_id: d for d in documents}
    by_mention, keys = {}, {}
    ids = list(linked)
    for first in range(0, len(ids), _LOOKUP):
        for stored, mention_ids in project.documents.documents_with_mention_ids(ids=ids[first : first + _LOOKUP]):
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
    reviewed = set(project.curation.current_decisions(mention_ids=list(by_mention)))
    for mention_id in reviewed:
        by_mention.pop(mention_id, None)
    summary.reviewed_kept += len(reviewed)
    summary.mentions_suggested += len(by_mention)
    summary.suggestions += project.curation.store_suggestions(
        by_mention,
        computed_for=keys,
        retriever_version=entry.get("retriever_version", ""),
        reranker_version=entry.get("ranked_version", ""),
    )
