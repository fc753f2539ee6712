"""`curalink bench spelling`: what writing queries in the KB's spelling (core.kb.respell) changes.

NCBI-disease test against MEDIC 2012, through the `Linker` with a TF-IDF retriever (the only retriever
that needs no training, so the figure is reproducible in a minute): acc@1 with queries as written and with
them respelled, the mentions whose query the respelling changed, and their tops before and after. Issue 31
item 6: "hypoglycaemia" got Hypoglossal Nerve Diseases first and "leukaemia" Lelis Syndrome.
"""

from __future__ import annotations

import time
from pathlib import Path

from core.evaluate.metrics import first_hit_rank, ranking_metrics
from core.kb.identifiers import split_ids
from core.pipeline import Linker
from core.retrieve.query_plan import plan_documents
from core.retrieve.tfidf import TfidfRetriever

EXAMPLES = 25


def bench_spelling(data_dir: str | Path) -> dict:
    from bench.ncbi_retrieval import load_ncbi_inputs

    kb, _, test = load_ncbi_inputs(data_dir)
    retriever = TfidfRetriever()
    retriever.index(kb)
    started = time.perf_counter()
    as_written = Linker(retriever, kb=kb, respell=False).retrieve(test)
    respelling = Linker(retriever, kb=kb)
    spelling_ms = _timed(respelling.spelling)
    respelled = respelling.retrieve(test)
    seconds = time.perf_counter() - started
    plain = plan_documents(test)
    changed_plans = respelling.plans(test)
    ranks = {"as_written": [], "respelled": []}
    changed: list[dict] = []
    for document, plans, new_plans, before, after in zip(
        test, plain, changed_plans, as_written, respelled, strict=True
    ):
        for mention, plan, new_plan, old_top, new_top in zip(
            document.mentions, plans, new_plans, before, after, strict=True
        ):
            gold = {i for concept_id in split_ids(mention.concept_id) for i in kb.ids_of(concept_id)}
            if not gold:
                continue
            old_rank = first_hit_rank([kb.ids_of(c.concept_id) for c in old_top], gold)
            new_rank = first_hit_rank([kb.ids_of(c.concept_id) for c in new_top], gold)
            ranks["as_written"].append(old_rank)
            ranks["respelled"].append(new_rank)
            if new_plan.query != plan.query:
                changed.append(
                    {
                        "document": document.doc_id,
                        "query": plan.query,
                        "respelled": new_plan.query,
                        "gold": mention.concept_id,
                        "top_before": _named(kb, old_top),
                        "top_after": _named(kb, new_top),
                        "right_before": old_rank == 1,
                        "right_after": new_rank == 1,
                    }
                )
    return {
        "corpus": "NCBI-disease test",
        "kb": "MEDIC 2012",
        "retriever": "TF-IDF char 2-3-grams",
        "mentions": len(ranks["as_written"]),
        "as_written": ranking_metrics(ranks["as_written"]),
        "respelled": ranking_metrics(ranks["respelled"]),
        "changed_mentions": len(changed),
        "changed_right_before": sum(c["right_before"] for c in changed),
        "changed_right_after": sum(c["right_after"] for c in changed),
        "spelling_build_ms": spelling_ms,
        "seconds": round(seconds, 1),
        "examples": changed[:EXAMPLES],
    }


def _timed(build) -> float:
    started = time.perf_counter()
    build()
    return round(1000 * (time.perf_counter() - started), 1)


def _named(kb, candidates) -> str:
    if not candidates:
        return ""
    top = candidates[0]
    concept = kb.get(top.concept_id)
    return f"{top.concept_id} {concept.preferred_name if concept is not None else top.name}"
