"""The desk's store reads and writes alone (no Qt), as the decision log grows: `queue()`, and one decision
followed by the reads the desk makes to refresh its queue row and the open abstract.

Decisions are written as a curator works through the queue: document after document, mostly accepting
the top suggestion, some rejects, "not in KB" and reverts (undo), in batches through `Project.curation.decide`.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import select

from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress
from core.store.curation_log import NewDecision
from core.store.schema import MentionRow

CURATOR = "bench-desk"
STAGES = (0, 3_000, 20_000, 50_000)


def summary(samples_ms: Sequence[float]) -> dict:
    """n, p50, p95 (nearest rank) and max of a list of milliseconds, rounded for a table."""
    ordered = sorted(samples_ms)
    if not ordered:
        return {"n": 0, "p50": None, "p95": None, "max": None}
    p95 = ordered[max(0, -(-len(ordered) * 95 // 100) - 1)]
    return {
        "n": len(ordered),
        "p50": round(statistics.median(ordered), 1),
        "p95": round(p95, 1),
        "max": round(ordered[-1], 1),
    }


@dataclass
class CuratorSimulation:
    """Makes the next decisions a curator would: mentions in document order, reverts of recent ones."""

    project: object
    seed: int = 0
    written: int = 0
    mentions: list[tuple[int, tuple[int, int, str]]] = field(default_factory=list)
    position: int = 0
    recent: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        decided = set(self.project.curation.current_decisions())
        with self.project.session() as session:
            rows = session.execute(
                select(MentionRow.id, MentionRow.start, MentionRow.end, MentionRow.type)
                .where(MentionRow.removed.is_(False))
                .order_by(MentionRow.document_id, MentionRow.start, MentionRow.id)
            ).all()
        self.mentions = [(row.id, (row.start, row.end, row.type)) for row in rows if row.id not in decided]

    def next_batch(self, count: int) -> list[NewDecision]:
        """`count` decisions on distinct mentions (a mention is decided once per batch)."""
        picked = self.mentions[self.position : self.position + count]
        top = self.project.curation.suggestions_for([m for m, _ in picked])
        batch: list[NewDecision] = []
        used: set[int] = set()
        for mention_id, key in picked:
            if len(batch) % 9 == 8 and self.recent:  # one in nine: undo an earlier decision
                undone = self.recent.pop(self.rng.randrange(len(self.recent)))
                if undone not in used:
                    batch.append(NewDecision(undone, "revert", curator=CURATOR, detail={"undo": "bench"}))
                    used.add(undone)
            self.position += 1
            ranked = top.get(mention_id) or []
            roll = self.rng.random()
            if ranked and roll < 0.62:
                decision = NewDecision(
                    mention_id, "accept", ranked[0].concept_id, CURATOR, "synthetic", {"rank": 1}, key
                )
            elif len(ranked) > 1 and roll < 0.70:
                decision = NewDecision(
                    mention_id, "accept", ranked[1].concept_id, CURATOR, "synthetic", {"rank": 2}, key
                )
            elif ranked and roll < 0.85:
                decision = NewDecision(mention_id, "reject", curator=CURATOR, suggested_for=key)
            else:
                decision = NewDecision(mention_id, "nil", curator=CURATOR)
            batch.append(decision)
            used.add(mention_id)
            if len(batch) >= count:
                break
        self.recent = (self.recent + [d.mention_id for d in batch if d.action != "revert"])[-2000:]
        return batch[:count]

    def write(
        self,
        until: int,
        *,
        batch: int = 1000,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken = NEVER_CANCELLED,
    ) -> int:
        """Write decisions until `until` have been written in all; returns the number written."""
        while self.written < until:
            cancel.raise_if_cancelled()
            decisions = self.next_batch(min(batch, until - self.written))
            if not decisions:
                break  # every mention is decided
            self.written += len(self.project.curation.record_decisions(decisions))
            progress(self.written, until, f"writing decisions ({self.written:,})")
        return self.written


def time_queue(project, repeats: int = 3) -> dict:
    """`Project.desk.queue()` over every document, `repeats` times."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        entries = project.desk.queue()
        times.append((time.perf_counter() - started) * 1000)
    return {**summary(times), "documents": len(entries)}


def time_decision_refresh(project, simulation: CuratorSimulation, samples: int = 20) -> dict:
    """One decision, then what `MainWindow.refresh(changed=...)` reads: the documents of the changed
    mentions, their queue rows, and the open abstract again (document, suggestions, decisions)."""
    times = []
    for _ in range(samples):
        decisions = simulation.next_batch(1)
        if not decisions:
            break
        started = time.perf_counter()
        project.curation.decide(decisions)
        touched = sorted(set(project.documents.mention_documents([decisions[0].mention_id]).values()))
        project.desk.queue(doc_ids=touched)
        for _document, mention_ids in project.documents.documents_with_mention_ids(ids=touched):
            project.curation.suggestion_sets(mention_ids)
            project.curation.current_decisions(mention_ids=mention_ids)
        times.append((time.perf_counter() - started) * 1000)
        simulation.written += 1
    return summary(times)


def store_stages(
    project,
    stages: Sequence[int] = STAGES,
    *,
    refresh_samples: int = 20,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> list[dict]:
    """queue() and one decision + refresh at each number of decisions written (the project grows)."""
    simulation = CuratorSimulation(project)
    rows = []
    for stage in stages:
        simulation.write(stage, progress=progress, cancel=cancel)
        progress(simulation.written, None, f"timing queue() at {simulation.written:,} decisions")
        row = {"decisions": simulation.written, "queue": time_queue(project)}
        row["decision_refresh"] = time_decision_refresh(project, simulation, refresh_samples)
        rows.append(row)
    return rows
