"""`curalink bench loop`: does curating raw abstracts make the assistant better, and the curator's work
per mention smaller? (issue 32)

A simulated curator (bench/curator_sim.py) starts from a new project as a user makes one: a KB (MEDIC
for NCBI-disease), no annotations, the training abstracts imported as raw text, and a retriever trained
on the KB's synonyms alone (zero-shot, as the demo does). It works one abstract at a time in the desk's
order (uncertainty first: the smallest top-two margin of the models in force; or random): Find mentions
and link on that abstract (the product path), then brings it to gold through `core.jobs.curation.operations`, the
operations the desk's keys call, counting each one's keys. After 10, 25, 50, 100 and 200 abstracts (and
all of them) it runs the desk's one-click retrain (`core.jobs.models.retrain.retrain` with the kinds
`retrain_choice` picks and the promotion rule), reloads the models in force, and measures on held-out
abstracts that never enter the project: end-to-end strict F1 of raw text → detected spans → top-1,
span recall and precision per type, and the keys it would take to bring them to gold, per gold mention.
With `live` the desk's live learning runs between retrains (each decision teaches its string at once;
identical undecided mentions are suggested again); without it only the retrains learn.

Everything is bounded by epochs, not seconds, so the curves do not depend on the machine's load; the
wall time of each retrain is reported beside them. On a 2-core machine a KB slice (`kb_concepts`: every
concept the pool or held-out gold names, plus random others) keeps a run in minutes, as bench/learning.py
does; `kb_concepts=None` uses all of MEDIC.
"""

from __future__ import annotations

import json
import logging
import random
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from bench.curator_sim import SearchCost, Tally, curate, plan_costs
from bench.learning import _kb_slice
from core.documents import Document
from core.evaluate.entity_linking import Annotation, linking_report
from core.progress import NEVER_CANCELLED, CancelToken, ProgressCallback, no_progress

log = logging.getLogger(__name__)

POINTS = (10, 25, 50, 100, 200, None)  # None: every pool abstract
CURATOR = "simulated"
NCBI = {"train": "NCBItrainset_corpus.txt", "dev": "NCBIdevelopset_corpus.txt", "test": "NCBItestset_corpus.txt"}


@dataclass(frozen=True)
class LoopConfig:
    order: str = "uncertainty"  # or "random"
    seed: int = 0
    live: bool = True
    points: tuple[int | None, ...] = POINTS
    retrain_epochs: int = 4  # the desk's retrain default
    detect_type: str | None = None  # `link --detect --type`: needed while a KB without types has no annotations


def read_ncbi(data_dir: Path, split: str) -> list[Document]:
    from core.formats import read_corpus

    return list(read_corpus(data_dir / "ncbi-disease" / NCBI[split], "pubtator"))


def build_base(
    folder: Path,
    kb,
    pool: Sequence[Document],
    *,
    zero_shot_epochs: int = 1,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> Path:
    """The new project every run copies: the KB, the pool as raw text (split train), a zero-shot
    retriever (KB synonyms only) and its name index."""
    from core.jobs.linking.suggestions import ProjectLinker
    from core.jobs.models.kinds import train
    from core.store import Project

    recipe = {
        "pool": [d.doc_id for d in pool],
        "kb_concepts": sorted(kb.concepts),
        "zero_shot_epochs": zero_shot_epochs,
    }
    stamp = folder / "bench-loop-base.json"
    if stamp.is_file() and json.loads(stamp.read_text()) == recipe:
        return folder  # built by an earlier run with the same recipe: the zero-shot model is the same
    if folder.exists():
        shutil.rmtree(folder)
    project = Project.create(folder)
    try:
        project.kb.import_concepts(kb.concepts.values(), source="bench-loop", fmt="medic")
        project.documents.import_documents(
            [d.with_mentions([]) for d in pool], source="bench-loop", fmt="text", split="train"
        )
        progress(0, None, "training the zero-shot retriever on the KB's synonyms")
        train(project, "retriever", epochs=zero_shot_epochs, patience=0, include_gold=False, cancel=cancel)
        ProjectLinker.for_project(project, cancel=cancel)  # builds and saves the name index once
    finally:
        project.close()
    stamp.write_text(json.dumps(recipe))
    return folder


def held_out_scores(project, linker, held_out: Sequence[Document], search: SearchCost, detect_type=None) -> dict:
    """Raw text → the detector in force → the linker's top-1, against gold, written nowhere; and the
    keys a curator would need to bring the abstracts to gold."""
    from core.jobs.linking.mentions import detector_for_project

    chosen = detector_for_project(project, _kb(project, linker), requested_type=detect_type)
    raw = [d.with_mentions([]) for d in held_out]
    found = chosen.detector.detect(raw)
    with_found = [d.with_mentions([replace(m, concept_id="") for m in ms]) for d, ms in zip(raw, found, strict=True)]
    ranked_found = linker.linker.suggest(with_found)
    at_gold = [d.with_mentions([replace(m, concept_id="") for m in d.mentions]) for d in held_out]
    ranked_gold = linker.linker.suggest(at_gold)
    kb = _kb(project, linker)
    tally = Tally()
    for gold, spans, r_found, r_gold in zip(held_out, with_found, ranked_found, ranked_gold, strict=True):
        tally.add(plan_costs(gold, spans.mentions, r_found, r_gold, kb, search), len(gold.mentions))
    gold_ann = [
        Annotation(d.doc_id, m.start, m.end, (kb.resolve(m.concept_ids[0]) if m.concept_ids else None) or None)
        for d in held_out
        for m in d.mentions
    ]
    predicted = [
        Annotation(d.doc_id, m.start, m.end, r[0].concept_id if r else None)
        for d, per_doc in zip(with_found, ranked_found, strict=True)
        for m, r in zip(d.mentions, per_doc, strict=True)
    ]
    report = linking_report(gold_ann, predicted)
    return {
        "detector": chosen.description,
        "e2e_f1": round(100 * report["end_to_end_strict"]["f1"], 2),
        "e2e_precision": round(100 * report["end_to_end_strict"]["precision"], 2),
        "e2e_recall": round(100 * report["end_to_end_strict"]["recall"], 2),
        "span_f1": round(100 * report["strict"]["f1"], 2),
        "types": span_by_type(held_out, with_found),
        "cost": tally.as_dict(),
    }


def span_by_type(gold: Sequence[Document], found: Sequence[Document]) -> dict[str, dict]:
    """Per type: recall of its gold spans by a detected span of any type, precision of its detected spans
    against gold spans of any type (exact offsets)."""
    gold_spans = {(d.doc_id, m.start, m.end) for d in gold for m in d.mentions}
    found_spans = {(d.doc_id, m.start, m.end) for d in found for m in d.mentions}
    result: dict[str, dict] = {}
    for kind in sorted({m.type for d in gold for m in d.mentions} | {m.type for d in found for m in d.mentions}):
        g = [(d.doc_id, m.start, m.end) for d in gold for m in d.mentions if m.type == kind]
        f = [(d.doc_id, m.start, m.end) for d in found for m in d.mentions if m.type == kind]
        result[kind or "(none)"] = {
            "gold": len(g),
            "detected": len(f),
            "span_recall": round(100 * sum(s in found_spans for s in g) / len(g), 2) if g else None,
            "span_precision": round(100 * sum(s in gold_spans for s in f) / len(f), 2) if f else None,
        }
    return result


def _kb(project, linker):
    """The loaded linker's KB (with the synonyms it learnt live), as the desk's detector reads it."""
    return linker.linker.kb if linker.linker.kb is not None else project.kb.knowledge_base()


def uncertainty_order(project, linker, detector, documents: Sequence[Document]) -> list[Document]:
    """The desk's uncertainty-first order (core.learn.ordering's margin) of these abstracts under the
    detector and models in force, computed without storing anything."""
    from core.learn.ordering import document_margin

    if not documents:
        return []
    raw = [d.with_mentions([]) for d in documents]
    found = detector.detect(raw)
    ranked = linker.linker.suggest([d.with_mentions(list(ms)) for d, ms in zip(raw, found, strict=True)])
    margins = [document_margin(per_doc) for per_doc in ranked]
    order = sorted(range(len(documents)), key=lambda i: margins[i])  # stable: ties keep import order
    return [documents[i] for i in order]


def run_loop(
    base: Path,
    folder: Path,
    pool: Sequence[Document],
    held_out: Sequence[Document],
    config: LoopConfig,
    *,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    """One curve: curate the pool in the configured order, retrain at each point, measure held-out."""
    from core.jobs.linking.mentions import detector_for_project, find_mentions
    from core.jobs.linking.suggestions import ProjectLinker
    from core.jobs.models.retrain import retrain
    from core.jobs.models.retrain_plan import retrain_choice
    from core.store import Project

    if folder.exists():
        shutil.rmtree(folder)
    shutil.copytree(base, folder, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
    project = Project.open(folder)
    try:
        linker = ProjectLinker.for_project(project, cancel=cancel)
        search = SearchCost(project.kb.search_names, _kb(project, linker))
        chosen = detector_for_project(project, _kb(project, linker), requested_type=config.detect_type)
        points: list[dict] = [
            {"documents": 0, **held_out_scores(project, linker, held_out, search, config.detect_type)}
        ]
        remaining = list(pool)
        if config.order == "random":
            random.Random(config.seed).shuffle(remaining)
        curated = Tally()
        done = 0
        for point in config.points:
            target = len(pool) if point is None else min(point, len(pool))
            if target <= done:
                continue
            if config.order == "uncertainty":
                remaining = uncertainty_order(project, linker, chosen.detector, remaining)
            segment = Tally()
            while done < target:
                cancel.raise_if_cancelled()
                gold = remaining.pop(0)
                find_mentions(project, chosen, [gold.doc_id])  # the desk's Find mentions on the open abstract
                linker.link_project(project, ids=[gold.doc_id])
                ops, names_changed = curate(
                    project, linker, gold, _kb(project, linker), search, curator=CURATOR, live=config.live
                )
                if names_changed:  # as the desk's link service does: the dictionary is made again
                    chosen = detector_for_project(project, _kb(project, linker), requested_type=config.detect_type)
                segment.add(ops, len(gold.mentions))
                curated.add(ops, len(gold.mentions))
                done += 1
                progress(done, len(pool), f"{config.order}, seed {config.seed}: abstracts curated")
            started = time.perf_counter()
            choice = retrain_choice(project)
            report = retrain(project, kinds=choice.kinds, epochs=config.retrain_epochs, seed=config.seed, cancel=cancel)
            retrain_s = time.perf_counter() - started
            linker = ProjectLinker.for_project(project, cancel=cancel)  # the models now in force
            search = SearchCost(project.kb.search_names, _kb(project, linker))
            chosen = detector_for_project(project, _kb(project, linker), requested_type=config.detect_type)
            points.append(
                {
                    "documents": done,
                    "retrain_s": round(retrain_s, 1),
                    "retrained": {k: bool(r.promoted) for k, r in report.kinds.items()},
                    "curated_cost": segment.as_dict(),
                    **held_out_scores(project, linker, held_out, search, config.detect_type),
                }
            )
            log.info("bench loop %s: %d abstracts, e2e F1 %.2f", config, done, points[-1]["e2e_f1"])
        return {
            "order": config.order,
            "seed": config.seed,
            "live": config.live,
            "points": points,
            "curated_cost": curated.as_dict(),
        }
    finally:
        project.close()


def bench_loop(
    data_dir: Path,
    out: Path,
    *,
    orders: Sequence[str] = ("uncertainty", "random"),
    seeds: Sequence[int] = (0, 1, 2),
    live: Sequence[bool] = (True,),
    points: tuple[int | None, ...] = POINTS,
    pool_size: int | None = None,
    held_out_split: str = "dev",
    held_out_size: int | None = None,
    kb_concepts: int | None = 8000,
    zero_shot_epochs: int = 1,
    retrain_epochs: int = 4,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    """Every (order, seed, live) curve on NCBI-disease + MEDIC; writes loop.json and loop.png to `out`."""
    from core.kb import load_kb
    from core.kb.knowledge_base import KnowledgeBase

    out.mkdir(parents=True, exist_ok=True)
    pool = read_ncbi(data_dir, "train")[:pool_size]
    held_out = read_ncbi(data_dir, held_out_split)[:held_out_size]
    medic = KnowledgeBase(load_kb(data_dir / "vocab" / "medic_06Jul2012.txt", "medic"))
    kb = _kb_slice(medic, pool + held_out, kb_concepts, random.Random(13))
    base = build_base(out / "base", kb, pool, zero_shot_epochs=zero_shot_epochs, progress=progress, cancel=cancel)
    runs = []
    for order in orders:
        for seed in seeds:
            for is_live in live:
                config = LoopConfig(order, seed, is_live, points, retrain_epochs)
                folder = out / f"run-{order}-{seed}-{'live' if is_live else 'nolive'}"
                runs.append(run_loop(base, folder, pool, held_out, config, progress=progress, cancel=cancel))
                (out / "loop.json").write_text(json.dumps(_summary(runs, pool, held_out, held_out_split, kb), indent=2))
    summary = _summary(runs, pool, held_out, held_out_split, kb)
    (out / "loop.json").write_text(json.dumps(summary, indent=2))
    _plot(summary, out / "loop.png")
    return summary


def _summary(runs: list[dict], pool, held_out, split: str, kb) -> dict:
    return {
        "pool_abstracts": len(pool),
        "held_out": {"split": split, "abstracts": len(held_out), "gold": sum(len(d.mentions) for d in held_out)},
        "kb_concepts": len(kb.concepts),
        "runs": runs,
        "mean": _means(runs),
    }


def _means(runs: list[dict]) -> dict:
    """Per (order, live) and point: mean and spread (min, max) of F1 and keys per mention over seeds."""
    grouped: dict[str, dict[int, list[dict]]] = {}
    for run in runs:
        key = f"{run['order']}{'' if run['live'] else ' (no live learning)'}"
        for point in run["points"]:
            grouped.setdefault(key, {}).setdefault(point["documents"], []).append(point)
    table: dict[str, list[dict]] = {}
    for key, by_point in grouped.items():
        rows = []
        for documents, found in sorted(by_point.items()):
            f1 = [p["e2e_f1"] for p in found]
            cost = [p["cost"]["per_mention"] for p in found]
            rows.append(
                {
                    "documents": documents,
                    "seeds": len(found),
                    "e2e_f1": round(sum(f1) / len(f1), 2),
                    "e2e_f1_range": [min(f1), max(f1)],
                    "keys_per_mention": round(sum(cost) / len(cost), 3),
                    "keys_per_mention_range": [min(cost), max(cost)],
                }
            )
        table[key] = rows
    return table


def _plot(summary: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    figure = Figure(figsize=(10, 4), dpi=110)
    f1_axes, cost_axes = figure.add_subplot(1, 2, 1), figure.add_subplot(1, 2, 2)
    for key, rows in summary["mean"].items():
        x = [r["documents"] for r in rows]
        for axes, field, spread in ((f1_axes, "e2e_f1", "e2e_f1_range"), (cost_axes, "keys_per_mention", "keys_per_mention_range")):
            axes.plot(x, [r[field] for r in rows], marker="o", label=key)
            axes.fill_between(x, [r[spread][0] for r in rows], [r[spread][1] for r in rows], alpha=0.2)
    held = summary["held_out"]
    f1_axes.set_ylabel(f"end-to-end strict F1, {held['split']} ({held['gold']} gold)")
    cost_axes.set_ylabel("keys per gold mention to reach gold")
    for axes in (f1_axes, cost_axes):
        axes.set_xlabel("abstracts curated")
        axes.set_xscale("symlog", linthresh=10)
        axes.grid(alpha=0.3)
        axes.legend(fontsize=8)
    figure.suptitle("NCBI-disease + MEDIC from raw text: the curation loop")
    figure.tight_layout()
    figure.savefig(path)
