"""`bench quality`'s per-type table and cross-corpus rows, and the comparison that chose the rankers'
calibration shape (issue 25, items 4 and 5).

Per type: BioRED's chemicals and diseases against MeSH (dhimmel's tree-number table, 27k descriptors),
each mention routed to its type's branch (chemicals to tree D, diseases to C and F03) as a project does.
BioRED's file holds train and dev together, with no split mark: every 5th abstract in file order is the
dev slice (86 abstracts), the rest the train slice (345). The ResCNN (`--mesh-out`) learns the train slice;
one ranker is fitted, as `train ranker` would in a project whose retriever held dev out, on the train
slice and dev half A (every 2nd dev abstract, both types; its bulk-accept curve measured on half A, which
the retriever did not see) and measured per type on dev half B.

Across corpora: NCBI-disease and BioRED's diseases against MEDIC 2012, the one KB both can be linked
against (NCBI-disease was annotated against it; BioRED's disease ids are MeSH descriptors, which MEDIC
keeps as `MESH:D…`: `KnowledgeBase.ids_of` maps one onto the other). A ranker fitted on one corpus is
measured on data of its own corpus it never saw and on the other corpus. Both use the same retriever (the
`--retriever` ResCNN, trained by `train retriever` on NCBI train with dev held out) so that only the
ranker's training corpus changes. As `train ranker` does in a project, the NCBI ranker learns from the
train split and from dev documents the retriever did not train on (every 2nd dev abstract, "half A"),
and its bulk-accept curve is measured on those (core.rank.held_out: held-out folds of documents whose
strings the ResCNN learnt flatter it); it is measured on dev half B and on BioRED train+dev diseases
(never seen). The BioRED ranker learns from the BioRED train slice, none of which the retriever saw, and
is measured on the BioRED dev slice and on NCBI dev (not NCBI train: the ResCNN learnt those strings).

Each row gives acc@1 and recall@20 over every gold-linked mention (one without candidates counts as
wrong), the top-1 ECE over the mentions with a suggestion, and the bulk-accept promise: at the
threshold the desk's dialog starts at (`core.jobs.curation.bulk_accept.read_scale`: the smallest whose promised
precision, the lower bound of the held-out one, reaches 98 %), the precision promised against the
precision realised on the measured set. The promise holds when realised ≥ promised − 1 point. The rule
before issue 25 (point precision of every held-out fold, `old_*` columns) is measured beside it.

Test splits (NCBI-disease test, BioRED test) are measured only with `final=True`, never used to choose.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.documents import Document
from core.jobs.models.ranker import DEFAULT_CANDIDATES, DEFAULT_TFIDF_UNION, Examples, examples
from core.kb.knowledge_base import KnowledgeBase
from core.progress import NEVER_CANCELLED, CancelToken, ProgressFn, no_progress
from core.rank.calibration import CALIBRATION_METHODS, expected_calibration_error, precision_coverage
from core.rank.held_out import (
    FALLBACK_THRESHOLD,
    METRICS_KEY,
    MIN_MENTIONS,
    TARGET_PRECISION,
    curve_point,
    default_threshold,
    promise_point,
)
from core.rank.model import CALIBRATION_METHOD, RankerModel, fit_ranker
from core.rank.stage import RankingStage, annotation_prior

log = logging.getLogger(__name__)

BIORED_TRAINDEV = Path("biored") / "BioRED_TrainDev.PubTator"
BIORED_TEST = Path("realworld") / "pubtator" / "aioner_BioRED_Test.PubTator"
MESH_TABLE = Path("vocab") / "mesh-dhimmel" / "tree-numbers.tsv"
MEDIC = Path("vocab") / "medic_06Jul2012.txt"
NCBI = Path("ncbi-disease")
DEV_EVERY = 5  # every 5th BioRED abstract (file order) is the dev slice
TYPES = {"Chemical": ("Chemical",), "Disease": ("Disease",)}
PROMISE_SLACK = 1.0  # points: the promise holds when realised precision >= promised - this
ECE_TARGET = 0.03
COMPARED = tuple(m for m in CALIBRATION_METHODS if m != "auto")


def biored_split(documents: Sequence[Document]) -> tuple[list[Document], list[Document]]:
    """(train, dev): every DEV_EVERY-th abstract in file order is dev."""
    train = [d for i, d in enumerate(documents) if i % DEV_EVERY != DEV_EVERY - 1]
    dev = [d for i, d in enumerate(documents) if i % DEV_EVERY == DEV_EVERY - 1]
    return train, dev


def halves(documents: Sequence[Document]) -> tuple[list[Document], list[Document]]:
    """(half A, half B) of a dev set: abstracts 0, 2, 4, ... in file order are A, the others B."""
    return list(documents[0::2]), list(documents[1::2])


def of_types(documents: Sequence[Document], types: Collection[str] | None = None) -> list[Document]:
    """Each document with its gold-linked mentions of these types (None: any); empty documents dropped."""
    out = []
    for document in documents:
        kept = [m for m in document.mentions if m.concept_ids and (types is None or m.type in types)]
        if kept:
            out.append(document.with_mentions(kept))
    return out


@dataclass
class Measured:
    """Feature rows of one document set (core.jobs.models.ranker.examples) and how many linked mentions it has."""

    rows: Examples
    mentions: int
    in_kb: int  # mentions with at least one gold id the KB knows


def measure_rows(stage: RankingStage, linker, documents: Sequence[Document]) -> Measured:
    """Retrieve and compute the ranker's features for every linked mention of `documents`."""
    rows = examples(
        stage,
        linker,
        documents,
        linker.retrieve(documents),
        use_cross_encoder=False,
        union=DEFAULT_TFIDF_UNION,
    )
    mentions = [m for d in documents for m in d.mentions]
    in_kb = sum(any(stage.kb.resolve(c) for c in m.concept_ids) for m in mentions)
    return Measured(rows, len(mentions), in_kb)


def fit_rankers(
    training: Measured, methods: Sequence[str] = (CALIBRATION_METHOD,), unseen: np.ndarray | None = None
) -> dict[str, RankerModel]:
    """One ranker per calibration shape, fitted on the same rows (the logistic model is the same);
    `unseen` flags the rows of documents the retriever did not train on (fit_ranker)."""
    rows = training.rows
    out = {}
    for method in methods:
        model = fit_ranker(
            rows.rows,
            rows.labels,
            rows.groups,
            mentions=rows.mention_of_row,
            unseen=unseen,
            calibration_method=method,
        )
        model.tfidf_union = DEFAULT_TFIDF_UNION
        out[method] = model
    return out


def top1(model: RankerModel, data: Measured) -> tuple[np.ndarray, np.ndarray, int]:
    """Per mention with candidates: its top candidate's probability and whether it is right (the order
    and probabilities `RankingStage.rank` gives); and how many mentions have the gold in the top 20."""
    rows = data.rows
    if not len(rows.rows):
        return np.zeros(0), np.zeros(0, dtype=bool), 0
    raw = model.raw_scores(rows.rows)
    order = np.lexsort((-raw, rows.mention_of_row))  # by mention, best first (stable among ties)
    mention = rows.mention_of_row[order]
    starts = np.flatnonzero(np.r_[True, mention[1:] != mention[:-1]])
    first = order[starts]
    rank = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    right_rows = rows.labels[order].astype(bool)
    in_top = np.unique(mention[right_rows & (rank < DEFAULT_CANDIDATES)])
    return model.probabilities(rows.rows[first]), rows.labels[first].astype(bool), len(in_top)


def promise(model: RankerModel) -> tuple[float, float | None]:
    """The threshold the bulk-accept dialog starts at and the precision it promises there."""
    curve = model.metrics.get(METRICS_KEY)
    threshold = default_threshold(curve)
    if threshold is None:
        threshold = FALLBACK_THRESHOLD
    return threshold, (promise_point(curve, threshold) if curve else None)


def old_promise(model: RankerModel) -> tuple[float, float | None]:
    """The rule before issue 25, for comparison: the smallest threshold whose measured held-out precision
    (every fold) reached 98 % on 100 mentions or more, promising that precision."""
    curve = model.metrics.get(METRICS_KEY)
    threshold = FALLBACK_THRESHOLD
    if curve and curve.get("mentions", 0) >= MIN_MENTIONS:
        reached = [
            t
            for t, p in zip(curve["thresholds"], curve["precision"])
            if p is not None and p >= TARGET_PRECISION
        ]
        threshold = reached[0] if reached else FALLBACK_THRESHOLD
    point = curve_point(curve, threshold) if curve else None
    return threshold, (point[0] if point else None)


def _kept(promised: float | None, realised: float | None) -> tuple[float | None, bool | None]:
    """(realised - promised, whether the promise held)."""
    if promised is None or realised is None:
        return None, None
    gap = round(realised - promised, 2)
    return gap, gap >= -PROMISE_SLACK


def figures(model: RankerModel, data: Measured, old: RankerModel | None = None) -> dict:
    """acc@1, recall@20 (percent of linked mentions), top-1 ECE, and the bulk-accept promise vs reality
    (with `old`, the same ranker's curve on every fold: the promise under the rule before issue 25)."""
    probability, right, in_top = top1(model, data)
    threshold, promised = promise(model)
    realised = precision_coverage(probability, right, threshold)
    gap, holds = _kept(promised, realised["precision"])
    before = {}
    if old is not None:
        old_threshold, old_promised = old_promise(old)
        old_realised = precision_coverage(probability, right, old_threshold)
        old_gap, old_holds = _kept(old_promised, old_realised["precision"])
        before = {
            "old_threshold": old_threshold,
            "old_promised_precision": old_promised,
            "old_realised_precision": old_realised["precision"],
            "old_coverage": old_realised["coverage"],
            "old_promise_gap": old_gap,
            "old_promise_holds": old_holds,
        }
    total = data.mentions
    return {
        "mentions": total,
        "in_kb": data.in_kb,
        "acc@1": round(100 * int(right.sum()) / total, 2) if total else None,
        "recall@20": round(100 * in_top / total, 2) if total else None,
        "top1_ece": round(expected_calibration_error(probability, right), 4),
        "threshold": threshold,
        "promised_precision": promised,
        "realised_precision": realised["precision"],
        "coverage": realised["coverage"],
        "promise_gap": gap,
        "promise_holds": holds,
        **before,
    }


def choose_calibration(comparison: dict[str, dict[str, dict]]) -> str:
    """The calibration rule: among the shapes whose in-corpus top-1 ECE stays <= ECE_TARGET on every
    in-corpus set, the one with the lowest worst cross-corpus ECE (none qualifying: the lowest worst
    ECE over all sets). `comparison`: {method: {set: {"top1_ece", "cross": bool}}}."""

    def worst(method: str, cross: bool | None) -> float:
        values = [f["top1_ece"] for f in comparison[method].values() if cross is None or f["cross"] is cross]
        return max(values) if values else 0.0

    qualified = [m for m in comparison if worst(m, False) <= ECE_TARGET]
    if qualified:
        return min(qualified, key=lambda m: (worst(m, True), m))
    return min(comparison, key=lambda m: (worst(m, None), m))


@dataclass
class Corpus:
    """One training corpus: its train documents, the sets its ranker is measured on ({name: (documents,
    cross-corpus?, final?)}) and the ids of its train documents the retriever did not train on."""

    name: str
    train: list[Document]
    measured_on: dict[str, tuple[list[Document], bool, bool]]
    unseen: frozenset[str] = frozenset()

    def unseen_rows(self, rows: Examples) -> np.ndarray | None:
        """Per feature row of `train`: whether its document is one the retriever did not train on."""
        return unseen_rows(self.train, self.unseen, rows)


def unseen_rows(train: Sequence[Document], unseen: Collection[str], rows: Examples) -> np.ndarray | None:
    """Per feature row of `train` (core.jobs.models.ranker.examples): whether its document is in `unseen`."""
    numbers = [i for i, document in enumerate(train) if document.doc_id in unseen]
    return np.isin(rows.groups, numbers) if numbers else None


def cross_corpus_table(
    kb: KnowledgeBase,
    linker,
    corpora: Sequence[Corpus],
    *,
    methods: Sequence[str] = COMPARED,
    final: bool = False,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    """{"rows": [...], "comparison": {method: {label: figures}}, "chosen": method, "in_force": method}:
    rows with the calibration in force (CALIBRATION_METHOD), the comparison on development sets only."""
    methods = list(dict.fromkeys([CALIBRATION_METHOD, *methods]))
    rows: list[dict] = []
    comparison: dict[str, dict[str, dict]] = {m: {} for m in methods}
    for number, corpus in enumerate(corpora):
        cancel.raise_if_cancelled()
        progress(number, len(corpora), f"ranker on {corpus.name}")
        stage = RankingStage(None, kb, annotation_prior(corpus.train))
        training = measure_rows(stage, linker, corpus.train)
        models = fit_rankers(training, methods, corpus.unseen_rows(training.rows))
        every_fold = fit_rankers(training)[CALIBRATION_METHOD]
        for label, (documents, cross, is_final) in corpus.measured_on.items():
            if is_final and not final:
                continue
            cancel.raise_if_cancelled()
            data = measure_rows(stage, linker, documents)
            row = {"trained_on": corpus.name, "measured_on": label, "cross": cross, "final": is_final}
            rows.append({**row, **figures(models[CALIBRATION_METHOD], data, every_fold)})
            if not is_final:
                for method in comparison:
                    comparison[method][f"{corpus.name} → {label}"] = {
                        "cross": cross,
                        **figures(models[method], data),
                    }
    progress(len(corpora), len(corpora), "cross-corpus rows done")
    return {
        "rows": rows,
        "comparison": comparison,
        "chosen": choose_calibration(comparison),
        "in_force": CALIBRATION_METHOD,
    }


def per_type_table(
    kb: KnowledgeBase,
    linker,
    train: Sequence[Document],
    sets: dict[str, tuple[list[Document], bool]],
    *,
    unseen: Collection[str] = frozenset(),
    final: bool = False,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    """One ranker fitted on `train` (every type; `unseen`: ids of its documents the retriever did not train
    on), measured per type on each of `sets` ({name: (documents, final?)}): {"rows": [{"set", "type",
    figures...}], "ranker": its training metrics}."""
    stage = RankingStage(None, kb, annotation_prior(train))
    training = measure_rows(stage, linker, train)
    model = fit_rankers(training, unseen=unseen_rows(train, unseen, training.rows))[CALIBRATION_METHOD]
    rows = []
    for name, (documents, is_final) in sets.items():
        if is_final and not final:
            continue
        for type_name, types in {**TYPES, "all": None}.items():
            cancel.raise_if_cancelled()
            chosen = of_types(documents, types)
            if chosen:
                data = measure_rows(stage, linker, chosen)
                rows.append({"set": name, "type": type_name, "final": is_final, **figures(model, data)})
    fitted = {
        "documents": len(train),
        "mentions": training.mentions,
        "candidate_rows": int(len(training.rows.rows)),
    }
    return {"rows": rows, "ranker": {**fitted, "calibration": model.calibration.get("method")}}


def missing_inputs(data_dir: Path, *names: Path) -> str:
    """'' when every file is there, else a sentence naming the first that is not."""
    for name in names:
        if not (data_dir / name).is_file():
            return f"{data_dir / name} not found"
    return ""


def run_per_type(
    data_dir: str | Path,
    retriever_dir: str | Path,
    *,
    final: bool = False,
    train_epochs: int = 0,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    """BioRED's chemicals and diseases against MeSH with the ResCNN in `retriever_dir` (with
    `train_epochs`: first trained there, that many epochs, on the train slice's chemical and disease
    strings and MeSH's names); skipped (with the reason) when the data is absent."""
    from core.formats.pubtator import read
    from core.kb import load_kb
    from core.kb.routing import TypeRouter
    from core.pipeline import Linker
    from core.retrieve.rescnn_retriever import RescnnRetriever

    data_dir = Path(data_dir)
    absent = missing_inputs(data_dir, BIORED_TRAINDEV, MESH_TABLE, *([BIORED_TEST] if final else []))
    if absent:
        return {"skipped": absent}
    kb = KnowledgeBase(load_kb(data_dir / MESH_TABLE, "tsv"))
    types = [t for group in TYPES.values() for t in group]
    train, dev = (of_types(part, types) for part in biored_split(list(read(data_dir / BIORED_TRAINDEV))))
    # as `train ranker` in a project whose retriever held dev out: the ranker learns from train and dev
    # half A (the ResCNN learns the train slice only) and is measured on dev half B
    dev_a, dev_b = halves(dev)
    sets = {"BioRED dev slice half B": (dev_b, False)}
    if final:
        sets["BioRED test (final)"] = (of_types(read(data_dir / BIORED_TEST), types), True)
    trained = ""
    if train_epochs:
        from bench.ncbi_retrieval import train_ncbi_rescnn

        progress(0, None, f"per type: training a ResCNN on the BioRED train slice ({train_epochs} epochs)")
        result = train_ncbi_rescnn(
            kb, train, retriever_dir, epochs=train_epochs, max_seconds=None, progress=progress, cancel=cancel
        )
        trained = f", trained here: {train_epochs} epochs, {result.steps} steps, {result.seconds:.0f} s"
    retriever = RescnnRetriever.load(Path(retriever_dir))
    progress(0, None, f"per type: indexing {len(kb.names)} MeSH names")
    retriever.index(kb, cancel=cancel)
    linker = Linker(retriever, candidates=DEFAULT_CANDIDATES, router=TypeRouter(kb))
    progress(0, None, "per type: fitting the ranker on the BioRED train slice and dev half A")
    unseen = frozenset(d.doc_id for d in dev_a)
    table = per_type_table(kb, linker, train + dev_a, sets, unseen=unseen, final=final, cancel=cancel)
    return {
        "kb": f"MeSH 2015 descriptors ({len(kb)}), mentions routed by type",
        "retriever": f"{retriever_dir}{trained}",
        "split": f"BioRED train+dev file: every {DEV_EVERY}th abstract is dev ({len(dev)}), the rest train "
        f"({len(train)}); the ranker learns from train and dev half A ({len(dev_a)}), measured on half B",
        **table,
    }


def run_cross_corpus(
    data_dir: str | Path,
    retriever_dir: str | Path,
    *,
    final: bool = False,
    progress: ProgressFn = no_progress,
    cancel: CancelToken = NEVER_CANCELLED,
) -> dict:
    """NCBI-disease ↔ BioRED diseases against MEDIC with the ResCNN in `retriever_dir` (module docstring);
    skipped (with the reason) when the data is absent."""
    from core.formats.pubtator import read
    from core.kb.medic import read_medic
    from core.pipeline import Linker
    from core.retrieve.rescnn_retriever import RescnnRetriever

    data_dir = Path(data_dir)
    ncbi = {s: NCBI / f"NCBI{s}set_corpus.txt" for s in ("train", "develop", "test")}
    absent = missing_inputs(
        data_dir, MEDIC, BIORED_TRAINDEV, *ncbi.values(), *([BIORED_TEST] if final else [])
    )
    if absent:
        return {"skipped": absent}
    kb = KnowledgeBase(read_medic(data_dir / MEDIC))
    ncbi_docs = {s: of_types(read(data_dir / path)) for s, path in ncbi.items()}
    diseases = TYPES["Disease"]
    bio_train, bio_dev = (of_types(p, diseases) for p in biored_split(list(read(data_dir / BIORED_TRAINDEV))))
    bio_test = of_types(read(data_dir / BIORED_TEST), diseases) if final else []
    dev_a, dev_b = halves(ncbi_docs["develop"])
    corpora = [
        Corpus(
            "NCBI-disease train + dev half A",
            ncbi_docs["train"] + dev_a,
            {
                "NCBI-disease dev half B": (dev_b, False, False),
                "BioRED train+dev diseases": (bio_train + bio_dev, True, False),
                "NCBI-disease test (final)": (ncbi_docs["test"], False, True),
                "BioRED test diseases (final)": (bio_test, True, True),
            },
            frozenset(d.doc_id for d in dev_a),  # the retriever held NCBI dev out
        ),
        Corpus(
            "BioRED train diseases",
            bio_train,
            {
                "BioRED dev diseases": (bio_dev, False, False),
                "NCBI-disease dev": (ncbi_docs["develop"], True, False),
                "BioRED test diseases (final)": (bio_test, False, True),
                "NCBI-disease test (final)": (ncbi_docs["test"], True, True),
            },
            frozenset(d.doc_id for d in bio_train),  # the retriever never saw BioRED
        ),
    ]
    retriever = RescnnRetriever.load(Path(retriever_dir))
    progress(0, None, f"cross-corpus: indexing {len(kb.names)} MEDIC names")
    retriever.index(kb, cancel=cancel)
    linker = Linker(retriever, candidates=DEFAULT_CANDIDATES)
    table = cross_corpus_table(kb, linker, corpora, final=final, progress=progress, cancel=cancel)
    return {"kb": f"MEDIC 2012 ({len(kb)} concepts)", "retriever": str(retriever_dir), **table}
