"""Retrieved candidates saved to a JSON file and served back through the `Retriever` protocol.

Retrieval is run once and reranking many times: reranker experiments reuse one candidate set, and a
GPU machine that reranks need not hold the retriever's index (or faiss). The file records the KB
fingerprint it was retrieved against, so it is refused for another KB instead of silently
linking to ids that no longer exist.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from core.atomic_files import write_text_atomic
from core.documents import Candidate
from core.errors import InputError
from core.kb.knowledge_base import KnowledgeBase
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress

FORMAT = "curalink-candidates/1"


def save_candidates(
    path: str | Path,
    retriever,
    kb: KnowledgeBase,
    mentions: Iterable[str],
    k: int,
) -> Path:
    """Retrieve the top-k of each distinct mention text with an indexed `retriever` and write them."""
    distinct = list(dict.fromkeys(mentions))
    found = retriever.retrieve(distinct, k) if distinct else []
    payload = {
        "format": FORMAT,
        "retriever": getattr(retriever, "name", type(retriever).__name__),
        "kb_fingerprint": kb.fingerprint(),
        "k": k,
        "candidates": {
            text: [[c.concept_id, c.name, c.matched_name, c.retriever_score] for c in row]
            for text, row in zip(distinct, found)
        },
    }
    return write_text_atomic(Path(path), json.dumps(payload, ensure_ascii=False))


class CandidateFileRetriever:
    """Serves the candidates of a file written by `save_candidates`; unknown texts are an error."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            payload = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise InputError(str(self.path), f"not a readable candidate file ({error})") from error
        if not isinstance(payload, dict) or payload.get("format") != FORMAT:
            raise InputError(str(self.path), f"not a candidate file (expected format {FORMAT!r})")
        self.k = int(payload["k"])
        self.kb_fingerprint = str(payload["kb_fingerprint"])
        self.name = f"{payload['retriever']} (saved candidates)"
        self._rows = payload["candidates"]

    def index(
        self, kb: KnowledgeBase, *, progress: ProgressFn = no_progress, cancel: CancelToken = NEVER_CANCELLED
    ) -> None:
        if kb.fingerprint() != self.kb_fingerprint:
            raise InputError(
                str(self.path),
                f"candidates were retrieved against another knowledge base "
                f"(fingerprint {self.kb_fingerprint}, this one is {kb.fingerprint()})",
            )

    def retrieve(self, mentions: Sequence[str], k: int = 64) -> list[list[Candidate]]:
        if k > self.k:
            raise InputError(str(self.path), f"holds the top {self.k} candidates; {k} were asked for")
        out: list[list[Candidate]] = []
        for text in mentions:
            row = self._rows.get(text)
            if row is None:
                raise InputError(str(self.path), "no candidates saved for this mention", item=repr(text))
            out.append([Candidate(cid, name, matched, float(score)) for cid, name, matched, score in row[:k]])
        return out
