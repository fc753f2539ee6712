"""A linked shard checked before import-linked stores anything from it.

A link-batch folder is input like any other (it may have been edited, truncated, copied from another
machine or written by hand), so each finished shard is checked whole first: the file is the one the
manifest recorded (its sha256), it reads as its format, and every mention's candidates are this
project's concepts (a non-empty id the KB answers to, each concept once) with finite scores and at most
the `candidates` the batch was run with. Every problem is reported with the shard, the line (JSONL) or
document, and the mention; a shard with any problem is imported not at all.
"""

from __future__ import annotations

import math
from pathlib import Path

from core.batch.linked import candidates_of
from core.batch.manifest import Manifest
from core.batch.plan import file_sha256
from core.documents import Document
from core.errors import InputError
from core.formats import read_corpus
from core.kb.knowledge_base import KnowledgeBase

_EMPTY_COLLECTION = ("the BioC collection holds no <document>", "the BioC JSON holds no documents")
MAX_PROBLEMS = 200
"""Problems listed per shard (all are counted)."""


class ShardRejected(Exception):
    """The shard is not imported; `problems` says why, each naming the shard and where in it."""

    def __init__(self, problems: list[str], count: int | None = None):
        super().__init__(problems[0] if problems else "")
        self.problems = problems[:MAX_PROBLEMS]
        self.count = len(problems) if count is None else count


def checked_shard(
    manifest: Manifest, name: str, entry: dict, kb: KnowledgeBase, limit: int
) -> list[Document]:
    """The shard's documents as read; ShardRejected if the file is not the recorded one or any record in
    it is bad."""
    try:
        path = manifest.shard_file(name)
    except InputError as error:
        raise ShardRejected([str(error)]) from None
    if not path.is_file():
        raise ShardRejected([f"{path}: listed as done in {manifest.folder / 'manifest.json'} but missing"])
    recorded = entry.get("output_sha256")
    found = file_sha256(path)
    if recorded != found:
        raise ShardRejected(
            [
                f"{path}: not the file link-batch wrote (sha256 {found[:16]}…, the manifest records "
                f"{str(recorded)[:16]}…): changed since; link it again"
            ]
        )
    recorded_documents = entry.get("documents")
    if recorded_documents == 0 and path.stat().st_size == 0:
        return []  # emptied by a later DeleteCitation: an empty file, nothing to read
    try:
        documents = list(read_corpus(path, entry.get("out_format")))
    except InputError as error:
        if recorded_documents == 0 and error.problem in _EMPTY_COLLECTION:
            return []  # an emptied BioC shard: a collection without documents
        raise ShardRejected([str(error)]) from None
    if len(documents) != recorded_documents:  # the count steers import; it must be the file's
        raise ShardRejected(
            [
                f"{path}: holds {len(documents)} document(s) but {manifest.folder / 'manifest.json'} records "
                f"{recorded_documents!r}: the manifest was changed; link the shard again"
            ]
        )
    lines = _document_lines(path) if entry.get("out_format") == "jsonl" else None
    problems: list[str] = []
    for number, document in enumerate(documents):
        where = (
            {"line": lines[number]}
            if lines is not None and number < len(lines)
            else {"item": f"document {number + 1}"}
        )
        _check_document(document, path, where, kb, limit, problems)
    if problems:
        raise ShardRejected(problems)
    return documents


def _check_document(
    document: Document, path: Path, where: dict, kb: KnowledgeBase, limit: int, problems: list[str]
) -> None:
    for mention in document.mentions:
        item = ", ".join(
            filter(
                None,
                [where.get("item"), f"document {document.doc_id}", f"mention {mention.start}-{mention.end}"],
            )
        )

        def problem(text: str, item: str = item) -> None:
            problems.append(str(InputError(path, text, line=where.get("line"), item=item)))

        try:
            ranked = candidates_of(mention, source=str(path), doc_id=document.doc_id)
        except InputError as error:
            problem(error.problem)
            continue
        if ranked is None:
            continue
        if len(ranked) > limit:
            problem(f"{len(ranked)} candidates; the batch keeps at most {limit} (--candidates)")
        seen: set[str] = set()
        for rank, candidate in enumerate(ranked[: limit + 1], start=1):
            concept_id = kb.resolve(candidate.concept_id) if candidate.concept_id.strip() else None
            scores = [candidate.retriever_score] + (
                [candidate.reranker_score] if candidate.reranker_score is not None else []
            )
            if not candidate.concept_id.strip():
                problem(f"candidate {rank}: empty concept id")
            elif concept_id is None:
                problem(f"candidate {rank}: concept {candidate.concept_id!r} is not in this project's KB")
            elif concept_id in seen:
                problem(f"candidate {rank}: concept {candidate.concept_id!r} listed twice")
            if not all(math.isfinite(score) for score in scores):
                problem(f"candidate {rank}: scores must be finite numbers, got {scores}")
            if concept_id is not None:
                seen.add(concept_id)


def _document_lines(path: Path) -> list[int]:
    """The line number of each document of a JSONL shard (blank lines hold none)."""
    lines = []
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                lines.append(number)
    return lines
