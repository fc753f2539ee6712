"""PubMed's DeleteCitation across the shards of one output folder.

Within a file the reader already holds a deleted citation back. Across files the rule is the update
files' own: a `<DeleteCitation>` in an input applies to the inputs *before* it on the command line
(baseline, then the update files in their order), so after the shards are linked every earlier linked
shard is rewritten (temp-and-rename) without the deleted PMIDs, and its manifest entry lists them in
`removed_by_later_deletions`. A citation that a later file holds again after deleting it is kept
there: the later file's version is the one in force. Re-running the pass changes nothing more.
"""

from __future__ import annotations

import logging
from pathlib import Path

from core.batch.manifest import Manifest
from core.batch.plan import file_sha256
from core.formats import read_corpus, write_corpus
from core.progress import CancelToken

log = logging.getLogger(__name__)


def apply_deletions(manifest: Manifest, cancel: CancelToken) -> int:
    """Remove citations deleted by later shards from the earlier linked shards; returns how many
    documents were removed now."""
    done = list(manifest.done().items())
    removed_now = 0
    for index, (name, entry) in enumerate(done):
        later = {
            pmid
            for _, other in done[index + 1 :]
            if other.get("position", 0) > entry.get("position", 0)
            for pmid in other.get("deleted", ())
        }
        if not later or cancel.cancelled:
            continue
        path = Path(manifest.folder) / name
        documents = list(read_corpus(path, entry.get("out_format") or _format_of(name)))
        keep = [d for d in documents if d.doc_id not in later]
        if len(keep) == len(documents):
            continue
        gone = sorted({d.doc_id for d in documents} - {d.doc_id for d in keep})
        write_corpus(keep, path, entry.get("out_format") or _format_of(name))
        entry["removed_by_later_deletions"] = sorted(
            set(entry.get("removed_by_later_deletions", [])) | set(gone)
        )
        entry["documents"] = len(keep)
        entry["mentions"] = sum(len(d.mentions) for d in keep)
        entry["output_sha256"] = file_sha256(path)
        manifest.save()
        removed_now += len(gone)
        log.info(
            "%s: removed %d citation(s) a later input deletes: %s", path, len(gone), ", ".join(gone[:10])
        )
    return removed_now


def _format_of(name: str) -> str:
    from core.batch.linked import OUTPUT_FORMATS

    for fmt, suffix in OUTPUT_FORMATS.items():
        if name.endswith(suffix):
            return fmt
    return "jsonl"
