"""Which ranker feature groups to keep, chosen on data the retriever never trained on (issue 25 item 6).

`python -m bench.rank_features --retriever DIR [--data D] [--json]`: DIR is a ResCNN trained on NCBI
train only (its dev split only watched). The ranker is fitted on NCBI train (MEDIC 2012 with CTD's
tree numbers, prior of the train documents, left-one-document-out) once per feature-group set, and
measured on two selection sets: NCBI dev and BioRED's disease mentions (abstracts also in
NCBI-disease left out, mentions whose MeSH id MEDIC 2012 lacks left out). NCBI test is never read.
Groups are toggled by fitting on a subset of the columns of one feature computation, so every row
sees the same candidates; the name variants (a candidate source) are toggled by a second computation.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from core.documents import Document

GROUPS = ("base", "specificity", "shared_names", "coherence", "hierarchy")


def selection_sets(data_dir: Path, kb) -> tuple[list[Document], dict[str, list[Document]]]:
    """NCBI train (to fit on) and the selection sets: NCBI dev and BioRED diseases."""
    from bench.quality import linked_only
    from core.formats.pubtator import read

    ncbi = data_dir / "ncbi-disease"
    files = ("NCBItrainset_corpus.txt", "NCBIdevelopset_corpus.txt", "NCBItestset_corpus.txt")
    in_ncbi = {document.doc_id for name in files for document in read(ncbi / name)}
    train = linked_only(list(read(ncbi / files[0])))
    dev = linked_only(list(read(ncbi / files[1])))
    biored = []
    for document in read(data_dir / "biored" / "BioRED_TrainDev.PubTator"):
        if document.doc_id in in_ncbi:
            continue
        kept = [
            m
            for m in document.mentions
            if m.type == "Disease" and m.concept_ids and all(kb.ids_of(c) for c in m.concept_ids)
        ]
        if kept:
            biored.append(document.with_mentions(kept))
    return train, {"ncbi-dev": dev, "biored-diseases": biored}


def configurations() -> list[tuple[str, ...]]:
    """Base alone, base + each group, all but each group, all; and base + coherence + hierarchy."""
    extras = GROUPS[1:]
    return [
        ("base",),
        *[("base", g) for g in extras],
        *[tuple(g for g in GROUPS if g != left) for left in extras],
        ("base", "coherence", "hierarchy"),
        GROUPS,
    ]


def rank_with(model, columns: list[int], featured, retrieved) -> list[list[list]]:
    it = iter(featured)
    out = []
    for per_document in retrieved:
        ranked = []
        for _ in per_document:
            merged, rows = next(it)
            order = np.argsort(-model.raw_scores(rows[:, columns]), kind="stable") if merged else []
            ranked.append([merged[i] for i in list(order)][:20])
        out.append(ranked)
    return out


def run(data_dir: Path, retriever_dir: Path) -> dict:
    from bench.ncbi_retrieval import load_ncbi_inputs
    from core.jobs.models.ranker import DEFAULT_TFIDF_UNION, examples, order_metrics
    from core.pipeline import Linker
    from core.rank.features import FEATURE_GROUPS, NameSimilarity
    from core.rank.model import fit_ranker
    from core.rank.stage import RankingStage, annotation_prior
    from core.retrieve.rescnn_retriever import RescnnRetriever

    kb, _, _ = load_ncbi_inputs(data_dir)  # MEDIC 2012 with CTD's tree numbers; its test is not used
    train, sets = selection_sets(data_dir, kb)
    retriever = RescnnRetriever.load(retriever_dir)
    retriever.index(kb)
    linker = Linker(retriever, candidates=20)
    retrieved = {name: linker.retrieve(docs) for name, docs in {"train": train, **sets}.items()}
    offsets, start = {}, 0
    for group in GROUPS:
        offsets[group] = list(range(start, start + len(FEATURE_GROUPS[group])))
        start += len(FEATURE_GROUPS[group])
    prior = annotation_prior(train)
    rows: dict[str, dict] = {}
    for variants in (False, True):
        stage = RankingStage(None, kb, prior, NameSimilarity(kb, variants=variants), groups=GROUPS)
        data = examples(
            stage, linker, train, retrieved["train"], use_cross_encoder=False, union=DEFAULT_TFIDF_UNION
        )
        featured = {}
        for name, docs in sets.items():
            queries = [q for per_document in linker.plan(docs) for q in per_document]
            flat = [list(found) for per_document in retrieved[name] for found in per_document]
            featured[name] = stage.features(queries, flat, use_cross_encoder=False, union=DEFAULT_TFIDF_UNION)
        for groups in (
            configurations() if not variants else [("base",), ("base", "coherence", "hierarchy"), GROUPS]
        ):
            columns = [i for g in groups for i in offsets[g]]
            model = fit_ranker(data.rows[:, columns], data.labels, data.groups)
            label = "+".join(groups) + (" +name variants" if variants else "")
            rows[label] = {}
            for name, docs in sets.items():
                metrics, right, _ = order_metrics(
                    docs, rank_with(model, columns, featured[name], retrieved[name]), kb
                )
                rows[label][name] = {
                    "acc@1": metrics["acc@1"],
                    "right": int(sum(right)),
                    "mentions": len(right),
                }
            rows[label]["pooled right"] = sum(v["right"] for v in rows[label].values())
    return {"retriever": str(retriever_dir), "rows": rows}


def table(result: dict) -> str:
    lines = [
        "| feature groups | NCBI dev acc@1 | BioRED diseases acc@1 | right, pooled |",
        "|---|---|---|---|",
    ]
    for label, row in result["rows"].items():
        dev, biored = row["ncbi-dev"], row["biored-diseases"]
        lines.append(
            f"| {label} | {dev['acc@1']:.2f} | {biored['acc@1']:.2f} | "
            f"{row['pooled right']} / {dev['mentions'] + biored['mentions']} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.rank_features", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--retriever", required=True, help="a ResCNN folder trained on NCBI train only")
    parser.add_argument("--data", default="../shared/data", help="shared data folder")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(Path(args.data), Path(args.retriever))
    sys.stdout.write((json.dumps(result, indent=1) if args.json else table(result)) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
