"""Which scorer the ranker uses, logistic or boosted trees, chosen on data the retriever never trained on.

`python -m bench.rank_scorer --retriever DIR [--data D] [--cache DIR] [--json]`: DIR is a ResCNN
trained on NCBI train only (bench.rank_features). The ranker (kept feature groups, core.rank.features)
is fitted on NCBI train by `fit_ranker` once per scorer and grid point, every one on the same
candidates and feature rows, each with its isotonic calibration on 3-fold out-of-fold scores, and
measured on the selection sets of bench.rank_features (NCBI dev, BioRED diseases): acc@1 and the
calibrated top-1 expected calibration error. NCBI test is never read. `--cache` keeps the feature
rows (npz) so the grid can be rerun without retrieving again.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

GRID = tuple(
    {"num_leaves": leaves, "learning_rate": rate} for leaves in (7, 15, 31, 63) for rate in (0.05, 0.1)
)
"""Boosted grid points; the rounds of each are chosen by early stopping (core.rank.boosted)."""
SETS = ("ncbi-dev", "biored-diseases")


def feature_rows(data_dir: Path, retriever_dir: Path, cache: Path | None) -> dict[str, dict]:
    """Per set (train and the selection sets): rows, labels, groups, mention of each row, and the
    number of gold mentions (mentions without candidates count as wrong)."""
    names = ("train", *SETS)
    if cache is not None and all((cache / f"{name}.npz").is_file() for name in names):
        return {name: dict(np.load(cache / f"{name}.npz")) for name in names}
    from bench.ncbi_retrieval import load_ncbi_inputs
    from bench.quality_cross import measure_rows
    from bench.rank_features import selection_sets
    from core.pipeline import Linker
    from core.rank.stage import RankingStage, annotation_prior
    from core.retrieve.rescnn_retriever import RescnnRetriever

    kb, _, _ = load_ncbi_inputs(data_dir)  # MEDIC 2012 with CTD's tree numbers; its test is not used
    train, sets = selection_sets(data_dir, kb)
    retriever = RescnnRetriever.load(retriever_dir)
    retriever.index(kb)
    linker = Linker(retriever, candidates=20)
    stage = RankingStage(None, kb, annotation_prior(train))
    out = {}
    for name, documents in {"train": train, **sets}.items():
        measured = measure_rows(stage, linker, documents)
        out[name] = {
            "rows": measured.rows.rows,
            "labels": measured.rows.labels,
            "groups": measured.rows.groups,
            "mentions": measured.rows.mention_of_row,
            "total": np.asarray(measured.mentions),
        }
        if cache is not None:
            cache.mkdir(parents=True, exist_ok=True)
            np.savez_compressed(cache / f"{name}.npz", **out[name])
    return out


def measure(model, rows: dict) -> dict:
    """acc@1 over the set's gold mentions, and the top-1 ECE of the calibrated probability."""
    from core.rank.calibration import expected_calibration_error

    raw = model.raw_scores(rows["rows"])
    mentions = rows["mentions"]
    order = np.lexsort((-raw, mentions))  # by mention, best score first
    first = order[np.r_[True, mentions[order][1:] != mentions[order][:-1]]]
    right = rows["labels"][first].astype(bool)
    probability = model.probabilities(rows["rows"][first])
    return {
        "acc@1": round(100 * float(right.sum()) / int(rows["total"]), 2),
        "right": int(right.sum()),
        "mentions": int(rows["total"]),
        "top1_ece": round(expected_calibration_error(probability, right), 4),
    }


def run(data_dir: Path, retriever_dir: Path, cache: Path | None = None) -> dict:
    from core.rank.boosted import SCORER
    from core.rank.model import LOGISTIC, fit_ranker

    rows = feature_rows(data_dir, retriever_dir, cache)
    train = rows["train"]
    configurations = [(LOGISTIC, None), *[(SCORER, point) for point in GRID]]
    result = {"retriever": str(retriever_dir), "training_rows": int(len(train["rows"])), "rows": {}}
    for scorer, point in configurations:
        started = time.perf_counter()
        model = fit_ranker(train["rows"], train["labels"], train["groups"], scorer=scorer, boosting=point)
        label = (
            scorer
            if point is None
            else f"{scorer} leaves {point['num_leaves']}, rate {point['learning_rate']}"
        )
        row: dict = {name: measure(model, rows[name]) for name in SETS}
        row["pooled right"] = sum(row[name]["right"] for name in SETS)
        row["rounds"] = model.metrics.get("boosting_rounds")
        row["fit_seconds"] = round(time.perf_counter() - started, 1)
        result["rows"][label] = row
        sys.stderr.write(f"{label}: {json.dumps(row)}\n")
    return result


def table(result: dict) -> str:
    lines = [
        "| scorer | rounds | NCBI dev acc@1 | BioRED diseases acc@1 | right, pooled | top-1 ECE dev / BioRED |",
        "|---|---|---|---|---|---|",
    ]
    for label, row in result["rows"].items():
        dev, biored = row["ncbi-dev"], row["biored-diseases"]
        lines.append(
            f"| {label} | {row['rounds'] or ''} | {dev['acc@1']:.2f} | {biored['acc@1']:.2f} | "
            f"{row['pooled right']} / {dev['mentions'] + biored['mentions']} | "
            f"{dev['top1_ece']:.3f} / {biored['top1_ece']:.3f} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.rank_scorer", description=__doc__.splitlines()[0])
    parser.add_argument("--retriever", required=True, help="a ResCNN folder trained on NCBI train only")
    parser.add_argument("--data", default="../shared/data", help="shared data folder")
    parser.add_argument("--cache", default=None, help="folder keeping the feature rows between runs")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(Path(args.data), Path(args.retriever), Path(args.cache) if args.cache else None)
    sys.stdout.write((json.dumps(result, indent=1) if args.json else table(result)) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
