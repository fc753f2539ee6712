"""A simulated curator: brings one abstract from what Curalink found to the gold, through the same
`core.jobs.curation.operations` operations the desk's keys call, and counts the keys each operation takes.

The cost of an operation is the keys (and mouse gestures) it takes in the desk; README ("What a mention
costs") documents them:
- accept the top suggestion (Enter) or the one at rank n ≤ 9 (its number key): 1;
- correct through KB search: Ctrl+F (1) + the characters typed until the concept is listed
  (`Project.kb.search_names`, the desk's search: the shortest prefix of the concept's preferred name, at
  least 2 characters, that lists it among the first 9) + ↓ to reach it + Enter (1);
- a composite: Ctrl+n (1) per part among the suggestions, a KB search with Ctrl+Enter per part that is
  not, then Enter (1);
- not in the knowledge base (N): 1; reject a spurious detected span (R): 1;
- move a boundary: 1 per word the edge moves (Alt+Shift+arrows), at least 1 per moved edge;
- change the type (T): 1;
- add a missed mention: a mouse drag (2) + M (1) + 1 to reach it, then its link as above.

Held-out abstracts are costed with the same rules (`plan_costs`) without writing anything.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.documents import Candidate, Document, Mention, split_concept_ids
from core.jobs.curation import operations as curation

if TYPE_CHECKING:
    from core.jobs.linking.suggestions import ProjectLinker
    from core.kb.knowledge_base import KnowledgeBase
    from core.store.project import Project

SHOWN = 9  # candidates a number key reaches
ADD_KEYS = 4  # drag (2) + M + 1 to select it
SEARCH_LIMIT = 9
WORD = re.compile(r"\S+")


@dataclass
class Op:
    """One curator operation and the keys it took."""

    kind: str  # accept, correct, composite, nil, reject, move, type, add
    keys: int
    document: str
    text: str = ""


@dataclass
class Tally:
    """Operations and keys of a set of abstracts, against their gold mentions."""

    ops: Counter = field(default_factory=Counter)
    keys: int = 0
    gold: int = 0

    def add(self, ops: Sequence[Op], gold: int) -> None:
        for op in ops:
            self.ops[op.kind] += 1
            self.keys += op.keys
        self.gold += gold

    @property
    def per_mention(self) -> float:
        return self.keys / self.gold if self.gold else 0.0

    def as_dict(self) -> dict:
        return {"keys": self.keys, "gold": self.gold, "per_mention": round(self.per_mention, 4), "ops": dict(self.ops)}


class SearchCost:
    """Keys to find a concept with the desk's KB search (cached per concept: it depends on the KB only)."""

    def __init__(self, search: Callable[[str, int], list[tuple[str, str, str]]], kb: KnowledgeBase):
        self.search = search
        self.kb = kb
        self.cache: dict[str, int] = {}

    def __call__(self, concept_id: str) -> int:
        if concept_id not in self.cache:
            self.cache[concept_id] = self._keys(concept_id)
        return self.cache[concept_id]

    def _keys(self, concept_id: str) -> int:
        concept = self.kb.get(concept_id)
        name = concept.preferred_name if concept is not None else concept_id
        for typed in range(2, len(name) + 1):
            hits = [hit[0] for hit in self.search(name[:typed], SEARCH_LIMIT)]
            if concept_id in hits:
                return 1 + typed + hits.index(concept_id) + 1
        return 1 + len(concept_id) + 1  # typed its id, which search always finds


def gold_ids(mention: Mention, kb: KnowledgeBase) -> list[str]:
    """The gold's concepts as the KB keys them (those it knows), each once: two gold ids may name one
    concept (an OMIM id and its MeSH record), and a link names distinct concepts."""
    resolved = [kb.resolve(c) for c in split_concept_ids(mention.concept_id)]
    return list(dict.fromkeys(c for c in resolved if c))


def link_op(
    gold: Mention, ranked: Sequence[Candidate], kb: KnowledgeBase, search: SearchCost, document: str
) -> tuple[Op, str, str]:
    """(the operation, the decision's action, its concept id) that links a mention at the gold's span."""
    wanted = gold_ids(gold, kb)
    if not wanted:
        return Op("nil", 1, document, gold.text), "nil", ""
    shown = [c.concept_id for c in ranked[:SHOWN]]
    if len(wanted) == 1:
        if wanted[0] in shown:
            return Op("accept", 1, document, gold.text), "accept", wanted[0]
        return Op("correct", search(wanted[0]), document, gold.text), "correct", wanted[0]
    keys = 1 + sum(1 if c in shown else search(c) for c in wanted)
    return Op("composite", keys, document, gold.text), "correct", "|".join(wanted)


def word_moves(text: str, old: int, new: int) -> int:
    """Keys to move one edge from `old` to `new` by whole words (at least one when it moves)."""
    if old == new:
        return 0
    lo, hi = sorted((old, new))
    return max(1, len(WORD.findall(text[lo:hi])))


@dataclass
class SpanPlan:
    """How the detected mentions meet the gold: kept (exact), moved, rejected, and gold to add."""

    kept: list[tuple[int, int]] = field(default_factory=list)  # (detected index, gold index)
    moved: list[tuple[int, int]] = field(default_factory=list)
    rejected: list[int] = field(default_factory=list)
    added: list[int] = field(default_factory=list)


def plan_spans(gold: Sequence[Mention], detected: Sequence[Mention]) -> SpanPlan:
    """Exact spans are kept; a detected span overlapping an unmatched gold one is moved onto it (the
    largest overlap first); other detected spans are rejected, other gold spans added."""
    plan = SpanPlan()
    used_d: set[int] = set()
    used_g: set[int] = set()
    exact = {(m.start, m.end): i for i, m in enumerate(detected)}
    for g, mention in enumerate(gold):
        d = exact.get((mention.start, mention.end))
        if d is not None and d not in used_d:
            plan.kept.append((d, g))
            used_d.add(d)
            used_g.add(g)
    overlaps = sorted(
        (
            (min(g_m.end, d_m.end) - max(g_m.start, d_m.start), d, g)
            for g, g_m in enumerate(gold)
            if g not in used_g
            for d, d_m in enumerate(detected)
            if d not in used_d and min(g_m.end, d_m.end) > max(g_m.start, d_m.start)
        ),
        reverse=True,
    )
    for _size, d, g in overlaps:
        if d not in used_d and g not in used_g:
            plan.moved.append((d, g))
            used_d.add(d)
            used_g.add(g)
    plan.rejected = [d for d in range(len(detected)) if d not in used_d]
    plan.added = [g for g in range(len(gold)) if g not in used_g]
    return plan


def plan_costs(
    gold: Document,
    detected: Sequence[Mention],
    ranked_detected: Sequence[Sequence[Candidate]],
    ranked_gold: Sequence[Sequence[Candidate]],
    kb: KnowledgeBase,
    search: SearchCost,
) -> list[Op]:
    """The operations that would bring this abstract to gold, written nowhere: a kept span is linked
    from its own suggestions, a moved or added one from the suggestions for the gold span (what the
    desk suggests again after the edit)."""
    doc = gold.doc_id
    plan = plan_spans(gold.mentions, detected)
    ops = [Op("reject", 1, doc, detected[d].text) for d in plan.rejected]
    for d, g in plan.kept + plan.moved:
        mention, found = gold.mentions[g], detected[d]
        if (d, g) in plan.moved:
            keys = word_moves(gold.text, found.start, mention.start) + word_moves(gold.text, found.end, mention.end)
            ops.append(Op("move", keys, doc, mention.text))
        if found.type != mention.type:
            ops.append(Op("type", 1, doc, mention.text))
        ranked = ranked_detected[d] if (d, g) in plan.kept else ranked_gold[g]
        ops.append(link_op(mention, ranked, kb, search, doc)[0])
    for g in plan.added:
        mention = gold.mentions[g]
        ops.append(Op("add", ADD_KEYS, doc, mention.text))
        ops.append(link_op(mention, ranked_gold[g], kb, search, doc)[0])
    return ops


def curate(
    project: Project,
    linker: ProjectLinker,
    gold: Document,
    kb: KnowledgeBase,
    search: SearchCost,
    *,
    curator: str,
    live: bool,
) -> tuple[list[Op], bool]:
    """Bring one stored abstract to its gold through core.jobs.curation.operations, as the desk's keys would; return
    the operations and whether live learning changed the KB's names (then the desk makes its dictionary
    again). With `live`, the decisions teach the loaded linker at once and identical undecided mentions
    elsewhere are suggested again (the desk's live learning)."""
    doc = gold.doc_id
    stored = _stored(project, doc)
    detected = [m for m, _ in stored]
    plan = plan_spans(gold.mentions, detected)
    ops: list[Op] = []
    for d in plan.rejected:
        mention_id = stored[d][1]
        curation.decide(project, mention_id, "reject", curator=curator)
        ops.append(Op("reject", 1, doc, detected[d].text))
    targets: list[tuple[int, int]] = []  # (mention id, gold index) to link
    edited: list[int] = []
    for d, g in plan.kept + plan.moved:
        mention, (found, mention_id) = gold.mentions[g], stored[d]
        if (d, g) in plan.moved:
            keys = word_moves(gold.text, found.start, mention.start) + word_moves(gold.text, found.end, mention.end)
            curation.edit_span(project, mention_id, mention.start, mention.end, curator=curator)
            ops.append(Op("move", keys, doc, mention.text))
            edited.append(mention_id)
        if found.type != mention.type:
            curation.change_type(project, mention_id, mention.type, curator=curator)
            ops.append(Op("type", 1, doc, mention.text))
            edited.append(mention_id)
        targets.append((mention_id, g))
    for g in plan.added:
        mention = gold.mentions[g]
        changes = curation.add_mention(project, doc, mention.start, mention.end, type=mention.type, curator=curator)
        mention_id = _added_id(changes)
        ops.append(Op("add", ADD_KEYS, doc, mention.text))
        edited.append(mention_id)
        targets.append((mention_id, g))
    if edited:
        linker.resuggest(project, sorted(set(edited)))
    suggestions = project.curation.suggestions_for([mention_id for mention_id, _ in targets])
    decided = []
    for mention_id, g in targets:
        op, action, concept = link_op(gold.mentions[g], suggestions.get(mention_id, []), kb, search, doc)
        curation.decide(project, mention_id, action, concept_id=concept, curator=curator)
        ops.append(op)
        decided.append(mention_id)
    curation.set_mark(project, curation.DONE, "true", document=doc, curator=curator)
    learnt_names = False
    if live and decided:
        learned = linker.learn(project, decided)
        learnt_names = learned.names_changed
        if learned.identical:
            linker.resuggest(project, learned.identical)
    return ops, learnt_names


def _stored(project: Project, doc_id: str) -> list[tuple[Mention, int]]:
    """The document's stored mentions (not deleted) with their ids."""
    for document, ids in project.documents.documents_with_mention_ids(ids=[doc_id]):
        return list(zip(document.mentions, ids, strict=True))
    return []


def _added_id(changes) -> int:
    """The id of the mention an add_mention step created (its focus)."""
    focus = changes.focus
    if not focus or focus[1] is None:
        raise RuntimeError("add_mention returned no mention to focus")
    return int(focus[1])
