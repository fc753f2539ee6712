"""Ranked candidates in a linked shard: a `candidates` list in each mention's infons, and back.

JSONL and BioC JSON keep the list as JSON; BioC XML infons are text, so there the list is its JSON text
(bioc_write writes typed infons that way) and `candidates_of` parses it back. Each candidate is
{"concept_id", "name", "matched_name", "retriever_score", "reranker_score"} in rank order, scores
rounded to 6 decimals: the float32 scores of one mention do not change with the engine, the worker or
the batch they were computed in, and a rounded JSON number reads back as the same value.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from core.documents import Candidate, Document, Mention
from core.errors import InputError

CANDIDATES = "candidates"
OUTPUT_FORMATS = {"jsonl": ".linked.jsonl", "bioc-json": ".linked.bioc.json", "bioc-xml": ".linked.bioc.xml"}
"""Formats that hold the candidates (as mention infons), and the suffix of a linked shard in each."""
_DIGITS = 6


def _score(value: float | None) -> float | None:
    return None if value is None else round(float(value), _DIGITS)


def candidate_json(candidate: Candidate) -> dict[str, Any]:
    return {
        "concept_id": candidate.concept_id,
        "name": candidate.name,
        "matched_name": candidate.matched_name,
        "retriever_score": _score(candidate.retriever_score),
        "reranker_score": _score(candidate.reranker_score),
    }


def with_candidates(document: Document, per_mention: Sequence[Sequence[Candidate]]) -> Document:
    """The document with each mention's ranked candidates in its infons."""
    mentions = [
        replace(mention, infons={**mention.infons, CANDIDATES: [candidate_json(c) for c in ranked]})
        for mention, ranked in zip(document.mentions, per_mention, strict=True)
    ]
    return replace(document, mentions=tuple(mentions))


def candidates_of(mention: Mention, *, source: str = "", doc_id: str = "") -> list[Candidate] | None:
    """The mention's candidates from a linked shard, None when it carries none; InputError when the
    infon is there but not a list of candidates."""
    raw = mention.infons.get(CANDIDATES)
    if raw is None:
        return None
    where = f"document {doc_id}, mention {mention.start}-{mention.end}"
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as error:
            raise InputError(source, f"candidates are not JSON ({error.msg})", item=where) from None
    if not isinstance(raw, list):
        raise InputError(source, f"candidates must be a list, got {type(raw).__name__}", item=where)
    found = []
    for rank, item in enumerate(raw, start=1):
        try:
            found.append(
                Candidate(
                    str(item["concept_id"]),
                    str(item.get("name", "")),
                    str(item.get("matched_name", "")),
                    float(item.get("retriever_score") or 0.0),
                    None if item.get("reranker_score") is None else float(item["reranker_score"]),
                )
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            raise InputError(source, f"candidate {rank} is not a candidate object", item=where) from None
    return found


def without_candidates(document: Document) -> Document:
    """The document as it was read (for storing it): the candidates infon taken out of each mention."""
    mentions = [
        replace(mention, infons={k: v for k, v in mention.infons.items() if k != CANDIDATES})
        for mention in document.mentions
    ]
    return replace(document, mentions=tuple(mentions))
