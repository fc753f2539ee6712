"""How to restrict retrieval to a type's concepts: over-fetch and filter vs a per-route sub-index.

NCBI-disease test mentions (all diseases) against all of MeSH 2015 (dhimmel's tree-number table,
27k descriptors: diseases are 17 % of it), each retriever three ways: unrouted, routed by over-fetch
and widen (core.retrieve.routed, what the Linker does), and a separate index over the route's
concepts only. A second routed pass sends the same texts down the Chemical route, the worst case for
over-fetching (a disease string's neighbours are diseases), to show what widening costs.
"""

from __future__ import annotations

import time
from pathlib import Path

from core.documents import Document
from core.formats import read_corpus
from core.kb import load_kb
from core.kb.knowledge_base import KnowledgeBase
from core.kb.routing import TypeRouter
from core.pipeline import Linker
from core.progress import ProgressFn, no_progress
from core.retrieve.tfidf import TfidfRetriever

K = 16


def bench_routing(data_dir: Path, model: Path | None = None, progress: ProgressFn = no_progress) -> dict:
    """Rows of acc@1 / recall@K / seconds per retriever and way (see the module docstring)."""
    kb = KnowledgeBase(load_kb(data_dir / "vocab" / "mesh-dhimmel" / "tree-numbers.tsv", "tsv"))
    documents = list(read_corpus(data_dir / "ncbi-disease" / "NCBItestset_corpus.txt", "pubtator"))
    router = TypeRouter(kb)
    disease = router.admitted(router.route_key("Disease")) or frozenset()
    sub_kb = KnowledgeBase(c for c in kb if c.concept_id in disease)
    makers = {"tfidf": TfidfRetriever}
    if model is not None:
        from core.retrieve.rescnn_retriever import RescnnRetriever

        makers["rescnn"] = lambda: RescnnRetriever.load(model, cache_size=0)
    rows = []
    for name, make in makers.items():
        progress(0, None, f"{name}: indexing {len(kb.names)} names")
        whole = _indexed(make(), kb)
        sub = _indexed(make(), sub_kb)
        ways = {
            "unrouted": (Linker(whole[0], candidates=K), documents),
            "over-fetch": (Linker(whole[0], candidates=K, router=TypeRouter(kb)), documents),
            "sub-index": (Linker(sub[0], candidates=K), documents),
            "over-fetch, Chemical route": (
                Linker(whole[0], candidates=K, router=TypeRouter(kb)),
                [_retyped(d, "Chemical") for d in documents],
            ),
        }
        lists = {}
        for way, (linker, docs) in ways.items():
            progress(0, None, f"{name}: {way}")
            started = time.perf_counter()
            found = linker.retrieve(docs)
            seconds = time.perf_counter() - started
            lists[way] = [[c.concept_id for c in m] for d in found for m in d]
            rows.append(
                {
                    "retriever": name,
                    "way": way,
                    **_accuracy(kb, documents, found),
                    "seconds": round(seconds, 2),
                    "index_seconds": round(whole[1] if way != "sub-index" else sub[1], 2),
                    "off_route_in_top_k": sum(sum(c not in disease for c in ids) for ids in lists[way]),
                }
            )
        pairs = list(zip(lists["over-fetch"], lists["sub-index"], strict=True))
        rows[-3]["same_list_as_sub_index"] = round(sum(a == b for a, b in pairs) / len(pairs), 4)
        rows[-3]["same_top1_as_sub_index"] = round(sum(a[:1] == b[:1] for a, b in pairs) / len(pairs), 4)
    return {
        "kb": f"MeSH 2015 descriptors ({len(kb)}), Disease route {len(disease)} concepts",
        "mentions": sum(len(d.mentions) for d in documents),
        "k": K,
        "rows": rows,
    }


def _indexed(retriever, kb: KnowledgeBase):
    started = time.perf_counter()
    retriever.index(kb)
    return retriever, time.perf_counter() - started


def _retyped(document: Document, mention_type: str) -> Document:
    from dataclasses import replace

    return document.with_mentions([replace(m, type=mention_type) for m in document.mentions])


def _accuracy(kb: KnowledgeBase, documents: list[Document], found) -> dict:
    """acc@1 and recall@K over mentions with a gold concept in the KB (MeSH; OMIM ids are not in it)."""
    scored = top1 = recall = 0
    for document, per_document in zip(documents, found, strict=True):
        for mention, candidates in zip(document.mentions, per_document, strict=True):
            gold = {kb.resolve(i) for i in mention.concept_ids} - {None}
            if not gold:
                continue
            ids = [c.concept_id for c in candidates]
            scored += 1
            top1 += bool(ids) and ids[0] in gold
            recall += bool(gold & set(ids))
    return {
        "scored_mentions": scored,
        "acc@1": round(100 * top1 / max(scored, 1), 2),
        f"recall@{K}": round(100 * recall / max(scored, 1), 2),
    }
