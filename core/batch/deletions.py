"""PubMed's DeleteCitation across the shards of one output folder.

Within a file the reader already holds a deleted citation back. Across files the rule is the update
files' own: a `<DeleteCitation>` in an input applies to the inputs *before* it on the command line
(baseline, then the update files in their order), so after the shards are linked every earlier linked
shard is rewritten (temp-and-rename) without the deleted PMIDs, and its manifest entry lists them in
`removed_by_later_deletions`. A citation that a later file holds again after deleting it is kept
there: the later file's version is the one in force. Re-running the pass changes nothing more.

A shard whose every citation is deleted is a valid, empty shard (`documents` 0; an empty JSONL file):
it is never read again. The rewrite is a small transaction with the manifest: the new file's hash and
counts are saved in the entry (`rewrite`) *before* the new file is renamed into place, and moved into
the entry after; a kill in between is settled by the next pass from the file's hash (renamed: the
pending figures are the shard's; not renamed: the pending record is dropped and the rewrite redone), so
the manifest's documents and output_sha256 never stay stale.
"""

from __future__ import annotations

import logging
import os

from core.atomic_files import atomic_path
from core.batch.manifest import Manifest
from core.batch.manifest_schema import PENDING
from core.batch.plan import file_sha256
from core.formats import read_corpus, write_corpus
from core.progress import CancelToken

log = logging.getLogger(__name__)



def apply_deletions(manifest: Manifest, cancel: CancelToken) -> int:
    """Remove citations deleted by later shards from the earlier linked shards; returns how many
    documents were removed now."""
    settle_rewrites(manifest)
    done = list(manifest.done().items())  # in input order: each shard's later ones follow it
    after: list[frozenset[str]] = []  # PMIDs deleted by the shards after each one, built back to front once
    deleted: frozenset[str] = frozenset()
    for _, entry in reversed(done):
        after.append(deleted)
        if entry.get("deleted"):
            deleted = deleted | frozenset(entry["deleted"])
    after.reverse()
    removed_now = 0
    for index, (name, entry) in enumerate(done):
        later = after[index]
        if not later or cancel.cancelled or entry.get("documents") == 0:
            continue  # an emptied shard has nothing left to delete (and an empty file reads as no corpus)
        path = manifest.shard_file(name)
        fmt = entry.get("out_format") or _format_of(name)
        documents = list(read_corpus(path, fmt))
        keep = [d for d in documents if d.doc_id not in later]
        if len(keep) == len(documents):
            continue
        gone = sorted({d.doc_id for d in documents} - {d.doc_id for d in keep})
        with atomic_path(path) as temporary:
            write_corpus(keep, temporary, fmt)  # none kept: an empty file (JSONL) or collection (BioC)
            entry[PENDING] = {
                "removed": gone,
                "documents": len(keep),
                "mentions": sum(len(d.mentions) for d in keep),
                "output_sha256": file_sha256(temporary),
            }
            manifest.record(name)  # before the rename: a kill after it is settled from the file's hash
        _settle(entry, renamed=True)
        manifest.record(name)
        removed_now += len(gone)
        log.info(
            "%s: removed %d citation(s) a later input deletes: %s", path, len(gone), ", ".join(gone[:10])
        )
    return removed_now


def settle_rewrites(manifest: Manifest, *, save: bool = True) -> int:
    """Finish the bookkeeping of rewrites a kill interrupted; returns how many entries changed.
    `save` False settles them in memory only (import-linked reads a folder, never writes it)."""
    settled = 0
    for name, entry in manifest.done().items():
        pending = entry.get(PENDING)
        if not isinstance(pending, dict):
            entry.pop(PENDING, None)
            continue
        path = manifest.shard_file(name)
        renamed = os.path.isfile(path) and file_sha256(path) == pending.get("output_sha256")
        _settle(entry, renamed=renamed)
        settled += 1
        log.info(
            "%s: an interrupted DeleteCitation rewrite was %s", path, "recorded" if renamed else "undone"
        )
    if settled and save:
        manifest.save()
    return settled


def _settle(entry: dict, *, renamed: bool) -> None:
    pending = entry.pop(PENDING)
    if not renamed:
        return
    entry["removed_by_later_deletions"] = sorted(
        set(entry.get("removed_by_later_deletions", [])) | set(pending["removed"])
    )
    entry["documents"] = pending["documents"]
    entry["mentions"] = pending["mentions"]
    entry["output_sha256"] = pending["output_sha256"]


def _format_of(name: str) -> str:
    from core.batch.linked import OUTPUT_FORMATS

    for fmt, suffix in OUTPUT_FORMATS.items():
        if name.endswith(suffix):
            return fmt
    return "jsonl"
