"""The one query plan: how a document's mention becomes retrieval queries, and how their answers merge.

The desk (`Linker`), `evaluate`, every `bench` command and retraining all call `plan_document`, so a
figure measures what the desk runs. For one mention, in order:

1. abbreviation expansion with the document's own definitions (core.text.abbreviations): "APC" in an
   abstract that wrote "adenomatous polyposis coli (APC)" is searched as the long form;
2. composite split of the expanded text (core.retrieve.mentions.split_composite), decided from the
   text alone: the gold link ("A|B") is unknown at the desk, so it may not steer the plan. The whole
   text stays the first query, so a name that merely contains "and" ("breast and ovarian cancer
   syndrome") is still searched whole;
3. the normalised key (core.text.normalize.normalize_name) that dictionaries, priors and hard
   negatives are keyed by; the query strings themselves are left as written, each retriever applies
   its own normalisation (the `Linker` then writes each word in the KB's spelling, `respelled`:
   "hypoglycaemia" is asked as "hypoglycemia"; training and `evaluate retriever` plan as written);
4. the mention's type as annotated, for routing to the concepts that may answer it.

A mention's answers are merged by rank (`merge_ranked`): round r adds the whole query's r-th
candidate, then every part's r-th (best retriever score first), each concept once. So the first
suggestion is always the whole mention's best (splitting never displaces it: "breast and ovarian
cancer" in a BRCA1 abstract names the syndrome, while its parts match "Breast Cancer" exactly), the
next rows hold each composite part's best concept, which a composite link needs, and no part is pushed
out of the list by another part's runners-up. On NCBI-disease test (retriever v2 of the measuring
project) a merge by best score across parts, the Linker's earlier rule, put a part's exact match
first and lost 0.8 points acc@1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from core.documents import Candidate, Document, Mention
from core.retrieve.mentions import split_composite
from core.text.abbreviations import AbbreviationMap
from core.text.normalize import normalize_name


@dataclass(frozen=True, slots=True)
class QueryPlan:
    """One mention's retrieval: the expanded text, its composite parts, its key and type."""

    text: str  # the mention as written
    query: str  # after abbreviation expansion: the whole-mention query
    expanded: bool  # an abbreviation defined in the document was replaced
    parts: tuple[str, ...]  # composite parts of `query` (empty when it does not split)
    key: str  # normalize_name(query)
    type: str  # the mention's type as annotated ("" when none)

    @property
    def queries(self) -> tuple[str, ...]:
        """The strings sent to the retriever: the whole query first, then each part."""
        return (self.query, *self.parts)

    @property
    def is_split(self) -> bool:
        return bool(self.parts)


def plan_mention(mention: Mention, abbreviations: AbbreviationMap | None = None) -> QueryPlan:
    """The single rule turning a mention into queries (see the module docstring)."""
    text = mention.text
    query = (abbreviations.expand(text) if abbreviations is not None else text) or text
    parts = tuple(p for p in split_composite(query) if p != query)
    return QueryPlan(text, query, query != text, parts, normalize_name(query), mention.type)


def respelled(plan: QueryPlan, respell: Callable[[str], str]) -> QueryPlan:
    """The plan with its strings rewritten by `respell` (core.kb.respell: the KB's spelling of each
    word); whether an abbreviation was expanded stays as planned."""
    text, query = respell(plan.text), respell(plan.query)
    if text == plan.text and query == plan.query and not plan.parts:
        return plan
    parts = tuple(respell(part) for part in plan.parts)
    return replace(plan, text=text, query=query, parts=parts, key=normalize_name(query))


def plan_document(document: Document) -> list[QueryPlan]:
    """One plan per mention of the document, in mention order (its abbreviations read once)."""
    if not document.mentions:
        return []
    abbreviations = AbbreviationMap.from_document(document)
    return [plan_mention(mention, abbreviations) for mention in document.mentions]


def plan_documents(documents: Sequence[Document]) -> list[list[QueryPlan]]:
    return [plan_document(document) for document in documents]


def query_strings(documents: Sequence[Document]) -> list[str]:
    """Every query of every mention in reading order, repeats kept: the stream the retriever is asked."""
    return [q for per_document in plan_documents(documents) for plan in per_document for q in plan.queries]


def merge_ranked(lists: Sequence[Sequence[Candidate]], k: int) -> list[Candidate]:
    """One mention's list from its queries' lists (whole query first): merged by rank, each concept once.

    Round r takes the whole query's r-th candidate, then the parts' r-th ones by retriever score.
    """
    if len(lists) == 1:
        return list(lists[0][:k])
    merged: list[Candidate] = []
    seen: set[str] = set()
    depth = max((len(found) for found in lists), default=0)
    for rank in range(depth):
        row = [lists[0][rank]] if rank < len(lists[0]) else []
        row += sorted(
            (found[rank] for found in lists[1:] if rank < len(found)), key=lambda c: -c.retriever_score
        )
        for candidate in row:
            if candidate.concept_id not in seen:
                seen.add(candidate.concept_id)
                merged.append(candidate)
                if len(merged) == k:
                    return merged
    return merged


def retrieve_planned(
    retriever,
    plans: Sequence[Sequence[QueryPlan]],
    k: int,
    *,
    route_of: Callable[[QueryPlan], str] | None = None,
    search: Callable[[str, list[str], int], list[list[Candidate]]] | None = None,
) -> list[list[list[Candidate]]]:
    """Per document, per mention: the merged candidates of its plan (each distinct query retrieved once).

    With `route_of` (a plan's route key: which concepts may answer it; asked once per plan) and `search(route, queries, k)`,
    each route's distinct queries are searched among that route's concepts only (type routing)."""
    routes = [[route_of(plan) if route_of else "" for plan in per_document] for per_document in plans]
    grouped: dict[str, dict[str, None]] = {}
    for per_document, keys in zip(plans, routes, strict=True):
        for plan, key in zip(per_document, keys, strict=True):
            grouped.setdefault(key, {}).update(dict.fromkeys(plan.queries))
    found: dict[tuple[str, str], list[Candidate]] = {}
    for key, texts in grouped.items():
        distinct = list(texts)
        answers = search(key, distinct, k) if search is not None else retriever.retrieve(distinct, k)
        found.update(zip([(key, text) for text in distinct], answers, strict=True))
    return [
        [
            merge_ranked([found[(key, q)] for q in plan.queries], k)
            for plan, key in zip(per_document, keys, strict=True)
        ]
        for per_document, keys in zip(plans, routes, strict=True)
    ]
